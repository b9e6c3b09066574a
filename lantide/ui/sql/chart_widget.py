"""The quick chart of a result: pick a kind (bar, line, scatter), an x and a y column.

Columns and a kind are picked for the analyst by :func:`lantide.query.chart_choice.choose_chart`
(a category and a measure: bars; a series over time: a line; never an identifier as the
measure) and can be changed; when nothing sensible fits, the analyst picks.
Rows come from the result: the preview, and when the result is larger, up to
:data:`MAX_CHART_ROWS` rows fetched in a worker the first time the chart is shown.
**Save as chart file…** (a cached result only) asks for the chart's Vega-Lite spec over the
result's table (:func:`lantide.charts.quick_chart_spec`): ``sig_save_requested(spec)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from lantide.query.chart_choice import choose_chart
from lantide.query.duckdb_types import is_temporal
from lantide.ui.sql.chart_canvas import BAR, KINDS, ChartCanvas, ChartData, to_number
from lantide.ui.sql.result_model import format_value, is_numeric_type

MAX_CHART_ROWS = 10_000
MAX_BARS = 60
MAX_SERIES = 6  # colours of grouped bars (chart_canvas.SERIES_COLORS)


def is_time_type(type_name: str) -> bool:
    return is_temporal(type_name)


def chart_data(
    kind: str,
    columns: list[dict],
    rows: Sequence[Sequence[Any]],
    x: int,
    y: int,
    total_rows: int | None = None,
) -> ChartData:
    """The points to draw for ``rows``; the note says what was left out."""
    x_name, y_name = columns[x]["name"], columns[y]["name"]
    total = total_rows if total_rows is not None else len(rows)
    note = f"first {len(rows):,} of {total:,} rows" if total > len(rows) else ""
    if kind == BAR:
        labels = [format_value(row[x]) for row in rows]
        if len(set(labels)) < len(labels):  # a category on several rows: never one bar each
            return _repeated_categories(columns, rows, x, y, note)
        values = [to_number(row[y]) for row in rows[:MAX_BARS]]
        if len(rows) > MAX_BARS:
            note = f"first {MAX_BARS} of {total:,} rows"
        return ChartData(BAR, x_name, y_name, labels[:MAX_BARS], values, note=note)
    time_axis = is_time_type(columns[x]["type"])
    xs = [to_number(row[x]) for row in rows]
    ys = [to_number(row[y]) for row in rows]
    return ChartData(kind, x_name, y_name, xs, ys, x_is_time=time_axis, note=note)


def _series_column(columns: list[dict], rows: Sequence[Sequence[Any]], x: int, y: int):
    """The column that tells apart the rows of one category (a quarter, a channel): at
    most :data:`MAX_SERIES` values, a text or date column first; None when there is none."""
    candidates = [i for i in range(len(columns)) if i not in (x, y)]
    candidates.sort(key=lambda i: is_numeric_type(columns[i]["type"]))  # text, dates first
    for i in candidates:
        values = {format_value(r[i]) for r in rows}
        pairs = {(format_value(r[x]), format_value(r[i])) for r in rows}
        if 1 < len(values) <= MAX_SERIES and len(pairs) == len(rows):
            return i
    return None


def _repeated_categories(
    columns: list[dict], rows: Sequence[Sequence[Any]], x: int, y: int, note: str
) -> ChartData:
    """Bars of a result whose category repeats (11 regions on 33 rows): coloured by the
    column that tells the rows apart, else one bar per category, the rows summed."""
    x_name, y_name = columns[x]["name"], columns[y]["name"]
    series_col = _series_column(columns, rows, x, y)
    categories: dict[str, int] = {}
    series: dict[str, int] = {}
    sums: dict[tuple[int, int], float | None] = {}
    for row in rows:
        label = format_value(row[x])
        if label not in categories:
            if len(categories) >= MAX_BARS:
                continue
            categories[label] = len(categories)
        key = format_value(row[series_col]) if series_col is not None else ""
        if key not in series:
            series[key] = len(series)
        cell = (categories[label], series[key])
        value = to_number(row[y])
        before = sums.get(cell)
        sums[cell] = value if before is None else before + (value or 0.0)
    notes = [note] if note else []
    if len(categories) >= MAX_BARS:
        notes.append(f"first {MAX_BARS} {x_name} values")
    if series_col is None:
        notes.append(f"{len(rows):,} rows summed into {len(categories)} {x_name} values")
        return ChartData(
            BAR,
            x_name,
            y_name,
            list(categories),
            [sums[(c, 0)] for c in range(len(categories))],
            note="; ".join(notes),
        )
    cells = sorted(sums)
    return ChartData(
        BAR,
        x_name,
        y_name,
        list(categories),
        [sums[cell] for cell in cells],
        note="; ".join(notes),
        series=list(series),
        series_label=columns[series_col]["name"],
        bar_group=[g for g, _s in cells],
        bar_series=[s for _g, s in cells],
    )


class QuickChartWidget(QWidget):
    sig_save_requested = Signal(dict)  # the chart file's spec (Vega-Lite over the table)

    def __init__(self, workers, parent: QWidget | None = None):
        super().__init__(parent)
        self._workers = workers
        self.table: str | None = None  # the result's cached table, when it has one
        self.columns: list[dict] = []
        self.rows: list[tuple] = []
        self.total_rows = 0
        self._fetch: Callable[[int, int], Sequence] | None = None
        self._loading = None
        self._need_rows = False

        self.kind_box = QComboBox(self)
        for kind in KINDS:
            self.kind_box.addItem(kind.capitalize(), kind)
        self.x_box = QComboBox(self)
        self.y_box = QComboBox(self)
        self._no_default = False  # no sensible chart chosen: wait for the analyst's pick
        for box in (self.kind_box, self.x_box, self.y_box):
            box.currentIndexChanged.connect(self._picked)
        self.canvas = ChartCanvas(self)
        bar = QHBoxLayout()
        bar.setContentsMargins(8, 6, 8, 0)
        bar.setSpacing(6)
        for label, box in (("Chart", self.kind_box), ("x", self.x_box), ("y", self.y_box)):
            bar.addWidget(QLabel(label, self))
            bar.addWidget(box)
        bar.addStretch(1)
        self.save_button = QPushButton("Save as chart file…", self)
        self.save_button.setToolTip(
            "Save this chart as a Vega-Lite file of the project (charts/NAME.vl.json) "
            "for the Report; it keeps the table's name, not its numbers"
        )
        self.save_button.clicked.connect(self._save_clicked)
        bar.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(bar)
        layout.addWidget(self.canvas, 1)

    def set_result(
        self,
        columns: list[dict],
        rows: Sequence[Sequence[Any]],
        total_rows: int,
        fetch: Callable[[int, int], Sequence] | None = None,
        table: str | None = None,
    ) -> None:
        """Chart this result; more rows are fetched when the chart is first shown.
        ``table``: the result's cached table (what a saved chart file names)."""
        self.table = table
        if self._loading is not None:
            self._loading.cancel()
            self._loading = None
        self.columns = list(columns)
        self.rows = [tuple(r) for r in rows]
        self.total_rows = total_rows
        self._fetch = fetch
        self._need_rows = (
            bool(fetch) and total_rows > len(self.rows) and len(self.rows) < MAX_CHART_ROWS
        )
        picked = choose_chart(self.columns, self.rows, total_rows)
        for box in (self.x_box, self.y_box, self.kind_box):
            box.blockSignals(True)
        self.x_box.clear()
        self.y_box.clear()
        for i, col in enumerate(self.columns):
            self.x_box.addItem(col["name"], i)
            if is_numeric_type(col["type"]):
                self.y_box.addItem(col["name"], i)
        self._no_default = picked is None
        if picked is not None:
            kind, x, y = picked.kind, picked.x, picked.y
            self.kind_box.setCurrentIndex(KINDS.index(kind))
            self.x_box.setCurrentIndex(x)
            self.y_box.setCurrentIndex(max(0, self.y_box.findData(y)))
        for box in (self.x_box, self.y_box, self.kind_box):
            box.blockSignals(False)
        if self.isVisible():
            self._load_more_rows()
        self._redraw()

    def spec(self) -> dict | None:
        """The chart as shown, as a chart file's spec; None without a table or a chart."""
        from lantide.charts import quick_chart_spec

        if not self.table or self.current_data() is None or self._no_default:
            return None
        x, y = self.x_box.currentData(), self.y_box.currentData()
        data = self.current_data()
        return quick_chart_spec(
            self.kind_box.currentData(),
            self.table,
            self.columns[x]["name"],
            self.columns[y]["name"],
            x_type=self.columns[x]["type"],
            color=(data.series_label or None) if data is not None else None,
            summed=data is not None and "summed into" in data.note,
        )

    def _save_clicked(self) -> None:
        spec = self.spec()
        if spec is not None:
            self.sig_save_requested.emit(spec)

    def _update_save_button(self) -> None:
        can = bool(self.table and self.columns and self.y_box.count()) and not self._no_default
        self.save_button.setEnabled(can)
        if not self.table:
            self.save_button.setToolTip(
                "Only a cached result can be saved as a chart file: run the whole tab, "
                "or give the query a label."
            )

    def clear(self, message: str = "Run the query to chart its result.") -> None:
        self.table = None
        self.columns, self.rows, self.total_rows, self._fetch = [], [], 0, None
        self._update_save_button()
        self.canvas.set_data(None, message)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self._load_more_rows()

    def _load_more_rows(self) -> None:
        if not self._need_rows or self._loading is not None:
            return
        self._need_rows = False
        fetch, limit = self._fetch, min(self.total_rows, MAX_CHART_ROWS)
        if fetch is None:  # cleared since the result asked for more rows
            return
        self._loading = self._workers.submit(
            lambda ctx: [tuple(r) for r in fetch(0, limit)],
            on_result=self._rows_arrived,
            on_error=self._rows_failed,
            name="chart rows",
        )

    def _rows_arrived(self, rows: list[tuple]) -> None:
        self._loading = None
        self.rows = rows
        self._redraw()

    def _rows_failed(self, exc: BaseException) -> None:
        self._loading = None
        self.canvas.set_data(None, f"Could not load rows: {getattr(exc, 'message', exc)}")

    def current_data(self) -> ChartData | None:
        if not self.columns or self.y_box.count() == 0:
            return None
        return chart_data(
            self.kind_box.currentData(),
            self.columns,
            self.rows,
            self.x_box.currentData(),
            self.y_box.currentData(),
            self.total_rows,
        )

    def _picked(self) -> None:
        self._no_default = False
        self._redraw()

    def _redraw(self) -> None:
        self._update_save_button()
        if not self.columns:
            self.canvas.set_data(None)
            return
        if self.y_box.count() == 0:
            self.canvas.set_data(None, "The result has no numeric column to chart.")
            return
        if self._no_default:
            self.canvas.set_data(
                None, "No obvious chart for this result: pick the x and y columns above."
            )
            return
        self.canvas.set_data(self.current_data())
