"""A result as the analyst sees it: a summary line, the paged grid, the quick chart, copy
and export. Used by the SQL tab (a run's result) and the table browser (a table's rows).

A result with a cached table pages from it through ``QueryService.fetch_rows``; a preview
that was not materialized (an exploratory look at one table) shows its preview rows and
says so. Export writes the whole cached table through ``QueryService.export_table`` in a
worker (CSV, Parquet or XLSX, chosen by the file name).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QMenu,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from lantide.query.grid_formats import (
    TabGridState,
    checked_format,
    empty_state,
    load_tab_state,
    rename_tab_state,
    save_tab_state,
)
from lantide.ui.elided_label import ElidedLabel
from lantide.ui.icons import icon
from lantide.ui.layout_state import set_widget_state, widget_state
from lantide.ui.sql.chart_widget import QuickChartWidget
from lantide.ui.sql.grid_filter_bar import ColumnFilterPopup, FilterBar
from lantide.ui.sql.query_jobs import submit_query
from lantide.ui.sql.result_grid import (
    MAX_COPY_BYTES,
    MAX_COPY_ROWS,
    ResultGridView,
    add_copy_actions,
)
from lantide.ui.sql.result_model import BLOCK_ROWS, PagedResultModel
from lantide.ui.sql.selection_summary import SelectionSummary

EXPORT_FILTERS = "CSV (*.csv);;Parquet (*.parquet);;Excel workbook (*.xlsx)"
_FILTER_SUFFIX = {
    "CSV (*.csv)": ".csv",
    "Parquet (*.parquet)": ".parquet",
    "Excel workbook (*.xlsx)": ".xlsx",
}


def describe_result(
    row_count: int,
    shown: int,
    *,
    duration_ms: int | None = None,
    cached_table: str | None = None,
    pageable: bool = True,
) -> str:
    parts = [f"{row_count:,} row{'s' if row_count != 1 else ''}"]
    if not pageable and row_count > shown:
        parts[0] = f"first {shown:,} of {row_count:,} rows (preview; not cached)"
    if duration_ms is not None:
        parts.append(
            f"{duration_ms:,} ms" if duration_ms < 10_000 else f"{duration_ms / 1000:.1f} s"
        )
    if cached_table:
        parts.append(f"cached as {cached_table}")
    return " · ".join(parts)


EXPORT_FOLDER_KEY = "export_folder"


RUNNING = " is running ·"


class ResultPanel(QWidget):
    sig_problem_reported = Signal(str)  # copy too large, export failed, ...
    sig_export_finished = Signal(dict)  # the export_table result
    grid: ResultGridView  # the copy menu's actions name it before __init__ makes it

    def __init__(self, services, parent: QWidget | None = None, *, with_chart: bool = True):
        super().__init__(parent)
        self.services = services
        self.relation: str | None = None
        self.columns: list[dict] = []
        self.row_count = 0
        self._export_worker = None
        self._summary = ""

        self.summary = ElidedLabel("", self)  # a sort and filters make it long
        self.summary.setObjectName("ResultSummary")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy the selected cells (Ctrl+C: TSV, Ctrl+Shift+C: CSV)")
        self.copy_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.copy_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.copy_menu = QMenu(self.copy_button)
        self.copy_button.setMenu(self.copy_menu)
        self.export_button = QToolButton(self)
        self.export_button.setText("Export…")
        self.export_button.setIcon(icon("save"))
        self.export_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.export_button.setToolTip("Write the whole result to a CSV, Parquet or Excel file")
        self.export_button.clicked.connect(self.export_dialog)
        self.export_button.setEnabled(False)
        self.copy_button.setEnabled(False)
        bar = QHBoxLayout()
        bar.setContentsMargins(8, 4, 6, 4)
        bar.setSpacing(6)
        bar.addWidget(self.summary, 1)
        bar.addWidget(self.copy_button)
        bar.addWidget(self.export_button)

        self.grid = ResultGridView(services.workers, self)
        self.grid.sig_problem_reported.connect(self.sig_problem_reported)
        add_copy_actions(self.copy_menu, self.grid, self.copy_result_csv)
        self.grid.sig_copy_result_requested.connect(self.copy_result_csv)
        self._copy_worker = None
        self.grid.sig_filter_requested.connect(self.edit_filter)
        self.grid.sig_filter_removed.connect(
            lambda col: self.set_column_filter(self.columns[col]["name"], None)
        )
        self.grid.sig_filters_cleared.connect(lambda: self.apply_filters([]))
        self.grid.sig_column_format_chosen.connect(self.set_column_format)
        self.grid.sig_freeze_toggled.connect(self.set_first_column_frozen)
        self._grid_state: TabGridState = empty_state()
        self._state_key: tuple[str, str] | None = None
        self._state_readable = True
        self._state_saving = self._state_dirty = False
        self.filter_bar = FilterBar(self)
        self.filter_bar.sig_filter_removed.connect(lambda name: self.set_column_filter(name, None))
        self.filter_bar.sig_filters_cleared.connect(lambda: self.apply_filters([]))
        self.filter_popup: ColumnFilterPopup | None = None
        self._filter_column = 0
        self._filter_worker = None
        self._count_worker = None
        self.grid.sig_export_requested.connect(self.export_dialog)
        self.grid.sig_copy_finished.connect(
            lambda n: self.services.post_message(
                f"Copied {n:,} row{'s' if n != 1 else ''}.", "info"
            )
        )
        self.chart = QuickChartWidget(services.workers, self) if with_chart else None
        self.views = QTabWidget(self)
        self.views.setDocumentMode(True)
        self.views.setTabPosition(QTabWidget.TabPosition.South)
        self.selection_summary = SelectionSummary(services, self.grid, self.views, self)
        self.selection_summary.sig_problem_reported.connect(self.sig_problem_reported)
        self.views.addTab(self.grid, icon("table"), "Grid")
        if self.chart is not None:
            self.views.addTab(self.chart, icon("chart"), "Chart")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.views, 1)
        self.clear()

    # -- showing -------------------------------------------------------------------------
    @property
    def model(self) -> PagedResultModel | None:
        model = self.grid.model()
        return model if isinstance(model, PagedResultModel) else None

    def clear(self, message: str = "No result yet. Run the query (Ctrl+Enter).") -> None:
        self._stop_filtering()
        self.grid.set_result_model(None)
        self.filter_bar.show_filters([], 0, 0)
        self.selection_summary.say("")
        self.relation = None
        self.columns, self.row_count = [], 0
        self.summary.setText(message)
        self.export_button.setEnabled(False)
        self.copy_button.setEnabled(False)
        if self.chart is not None:
            self.chart.clear()

    def show_running(self, what: str, seconds: float) -> None:
        """While a run has no result to show yet: say it runs, and for how long (a
        previous result stays shown as it is)."""
        if self.model is None:
            self.summary.setText(f"{what}{RUNNING} {seconds:.1f} s. Stop cancels it.")

    def end_running(self) -> None:
        """The run ended without showing a result or an error here: no longer "running"."""
        if self.model is None and RUNNING in self.summary.text():
            self.clear()

    def show_rows(
        self,
        columns: list[dict],
        row_count: int,
        first_rows: Sequence[Sequence[Any]],
        *,
        relation: str | None,
        summary: str,
    ) -> None:
        """Show a result: pages from ``relation`` when given, else just ``first_rows``."""
        query = self.services.query
        fetch = pager(query, relation) if relation is not None and query is not None else None
        self.relation = relation
        self.columns = list(columns)
        self.row_count = row_count if fetch else min(row_count, len(first_rows))
        model = PagedResultModel(
            columns, row_count, fetch, self.services.workers, preview=first_rows
        )
        model.sig_fetch_failed.connect(self._fetch_failed)
        model.sig_order_changed.connect(self._order_changed)
        model.sig_filters_changed.connect(self._filters_changed)
        self._stop_filtering()
        self.grid.set_result_model(model)
        self.filter_bar.show_filters([], row_count, row_count)
        model.set_column_formats(self._grid_state["columns"])
        self.selection_summary.watch(model, relation)
        self._summary = summary
        self.summary.setText(summary)
        self.export_button.setEnabled(relation is not None)
        self.export_button.setToolTip(
            "Write the whole result to a CSV, Parquet or Excel file"
            if relation
            else "Only cached results can be exported: run the whole tab, "
            "or give the query a label."
        )
        self.copy_button.setEnabled(True)
        if self.chart is not None:
            self.chart.set_result(columns, first_rows, row_count, fetch, table=relation)

    def show_query_result(self, result: dict, first_rows: Sequence[Sequence[Any]] | None) -> None:
        """A ``run_query``/``run_sql_tab`` result; ``first_rows`` were fetched from its cached
        table right after the run (same value types as later pages), else the preview."""
        relation = result.get("cached_table_name") if result.get("materialized") else None
        rows = first_rows if first_rows is not None else result.get("preview") or []
        summary = describe_result(
            int(result.get("row_count") or 0),
            len(rows),
            duration_ms=result.get("duration_ms"),
            cached_table=relation,
            pageable=relation is not None,
        )
        self.show_rows(
            result.get("columns") or [],
            int(result.get("row_count") or 0),
            rows,
            relation=relation,
            summary=summary,
        )

    def _order_changed(self, _order_by: list | None = None) -> None:
        """Say in the summary how the rows are sorted (the header shows the arrow) and
        how many pass the filters."""
        model = self.model
        words = {"asc": "ascending", "desc": "descending"}
        order = ", ".join(
            f"{name} {words.get(d, d)}" for name, d in (model.order_by if model else None) or []
        )
        text = self._summary
        if model is not None and model.filters:
            n = len(model.filters)
            passing = "counting rows that" if model.counting else f"{model.rowCount():,}"
            text += f" · {passing} match {n} filter{'s' if n != 1 else ''}"
        self.summary.setText(text + (f" · sorted by {order}" if order else ""))

    # -- column formats and the frozen column, kept per tab -------------------------------
    def set_grid_state_key(self, project: str, tab: str) -> None:
        """Keep the formats and the frozen column as the state of ``project/tab`` (read
        now, in a worker; written on each change)."""
        self._state_key = (project, tab)
        root = self.services.workspace.root
        self.services.workers.submit(
            lambda ctx: load_tab_state(root, project, tab),
            on_result=lambda state: self._state_loaded((project, tab), state),
            on_error=self._state_unreadable,
            name="read grid state",
        )

    def follow_tab_rename(self, project: str, old: str, new: str) -> None:
        """The tab was renamed: its kept formats move to the new name (in a worker), and
        the state is read again under it."""
        root = self.services.workspace.root
        self._state_key = (project, new)  # no write under the old name from now on
        self.services.workers.submit(
            lambda ctx: rename_tab_state(root, project, old, new),
            on_finished=lambda: self.set_grid_state_key(project, new),
            on_error=self._state_unreadable,
            name="rename grid state",
        )

    def _state_loaded(self, key: tuple[str, str], state: TabGridState) -> None:
        if key != self._state_key:
            return
        self._grid_state = state
        self._state_readable = True
        if self.model is not None:
            self.model.set_column_formats(state["columns"])
        self.grid.set_first_column_frozen(state["freeze_first"])

    def _state_unreadable(self, exc: BaseException) -> None:
        self._state_readable = False  # never written over: the analyst's file is kept
        message = getattr(exc, "message", None) or str(exc)
        hint = getattr(exc, "hint", None)
        self.sig_problem_reported.emit(
            f"Column formats are not kept: {message}" + (f" — {hint}" if hint else "")
        )

    @property
    def grid_state(self) -> TabGridState:
        return self._grid_state

    def set_column_format(self, column: str, fmt: dict) -> None:
        """Show ``column`` in ``fmt`` (``{}``: its default) and keep it for the tab."""
        checked = checked_format(fmt)
        if checked:
            self._grid_state["columns"][column] = checked
        else:
            self._grid_state["columns"].pop(column, None)
        if self.model is not None:
            self.model.set_column_formats(self._grid_state["columns"])
        self._save_grid_state()

    def set_first_column_frozen(self, frozen: bool) -> None:
        self.grid.set_first_column_frozen(frozen)
        self._grid_state["freeze_first"] = bool(frozen)
        self._save_grid_state()

    def _save_grid_state(self) -> None:
        """Write the state in a worker, one write at a time: a later change waits for the
        write under way and is written after it (two workers could finish out of order,
        and the older state would win)."""
        if self._state_key is None or not self._state_readable:
            return
        if self._state_saving:
            self._state_dirty = True
            return
        self._state_saving, self._state_dirty = True, False
        root, (project, tab) = self.services.workspace.root, self._state_key
        state: TabGridState = {
            "columns": dict(self._grid_state["columns"]),
            "freeze_first": self._grid_state["freeze_first"],
        }
        self.services.workers.submit(
            lambda ctx: save_tab_state(root, project, tab, state),
            on_error=lambda exc: self.sig_problem_reported.emit(
                f"Column formats were not saved: {getattr(exc, 'message', exc)}"
            ),
            on_finished=self._grid_state_saved,
            name="write grid state",
        )

    def _grid_state_saved(self) -> None:
        self._state_saving = False
        if self._state_dirty:
            self._save_grid_state()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.selection_summary.fit()

    # -- filtering -----------------------------------------------------------------------
    def edit_filter(self, column: int) -> None:
        """Open the filter popup of ``column`` under its header."""
        model = self.model
        if model is None or not 0 <= column < len(self.columns):
            return
        if not model.can_page or not self.relation:
            self.sig_problem_reported.emit(
                "Only cached results can be filtered: run the whole tab, or label the query."
            )
            return
        name = model.columns[column]["name"]
        current = next((f for f in model.filters if f.get("column") == name), None)
        popup = ColumnFilterPopup(name, model.columns[column]["type"], current, self)
        popup.sig_filter_chosen.connect(lambda chosen: self.set_column_filter(name, chosen))
        popup.sig_filter_chosen.connect(lambda _chosen: self.grid.setFocus())  # keys go on
        self._filter_column = column
        header = self.grid.horizontalHeader()
        x = header.sectionViewportPosition(column)
        self.filter_popup = popup
        popup.show_at(header.viewport().mapToGlobal(header.rect().bottomLeft()) + QPoint(x, 0))

    def set_column_filter(self, column: str, chosen: dict | None) -> None:
        """Replace (``chosen``) or remove (None) the filter of ``column``."""
        model = self.model
        if model is None:
            return
        others = [f for f in model.filters if f.get("column") != column]
        self.apply_filters(others + ([chosen] if chosen else []))

    def apply_filters(self, filters: list[dict]) -> None:
        """Show the rows passing ``filters`` (``[]``: all): DuckDB counts them and pages
        the first screen in a worker (cancellable; a newer filter cancels this one)."""
        model, relation = self.model, self.relation
        if model is None or relation is None or not model.can_page:
            return
        self._stop_filtering()
        token = model.begin_filter(filters)
        order = model.order_by
        self.summary.setText(self._summary + " · filtering…")

        def arrived(page: dict) -> None:
            rows = page["rows"]
            if not filters:  # every row: the result's own count
                model.filter_arrived(token, filters, model.total_rows, rows, order)
                return
            counted = len(rows) < BLOCK_ROWS  # a short first page is all of them
            shown = model.filter_arrived(token, filters, len(rows), rows, order, counted=counted)
            if shown and not counted:
                self._count_worker = submit_query(
                    self.services,
                    lambda ctx, q: q.count_filtered(relation, filters),
                    label=f"Count {relation}",
                    on_result=lambda n: model.filter_counted(token, n),
                    on_error=failed,
                )

        def failed(exc: BaseException) -> None:
            model.filter_failed(token)
            self._order_changed()
            from lantide.query.errors import QueryCancelled

            if not isinstance(exc, QueryCancelled):
                message = getattr(exc, "message", None) or str(exc)
                hint = getattr(exc, "hint", None)
                self.sig_problem_reported.emit(
                    f"Filter not applied: {message}" + (f" — {hint}" if hint else "")
                )

        self._filter_worker = submit_query(
            self.services,
            lambda ctx, q: q.filtered_page(
                relation, 0, BLOCK_ROWS, order_by=order, filters=filters or None, count=False
            ),
            label=f"Filter {relation}",
            on_result=arrived,
            on_error=failed,
        )

    def _stop_filtering(self) -> None:
        for worker in (self._filter_worker, self._count_worker):
            if worker is not None:
                worker.cancel()
        self._filter_worker = self._count_worker = None

    def _filters_changed(self, filters: list, passing: int) -> None:
        model = self.model
        total = model.total_rows if model is not None else passing
        self.filter_bar.show_filters(filters, passing, total)
        self.grid.horizontalHeader().viewport().update()
        self.grid.clearSelection()  # selected rows would now be other rows
        if model is not None and model.rowCount() and not self.grid.currentIndex().isValid():
            # the keyboard goes on from the first row, in the column just filtered
            self.grid.setCurrentIndex(model.index(0, max(0, self._filter_column)))
        self._order_changed()

    def _fetch_failed(self, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or str(exc)
        self.sig_problem_reported.emit(f"Rows could not be loaded: {message}")

    # -- copy the whole result ------------------------------------------------------------
    def copy_result_csv(self) -> None:
        """The whole result (the rows passing the filters, in the order shown) as CSV on
        the clipboard, written by DuckDB's rows in a worker; past the row or size cap,
        nothing is copied and the analyst is told to export."""
        model, relation = self.model, self.relation
        if model is None:
            return
        if relation is None or not model.can_page:
            self.grid.selectAll()  # a preview: every row is here
            self.grid.copy_selection(",", header=True)
            return
        filters, order = model.filters or None, model.order_by

        def copied(answer: tuple[str, int]) -> None:
            text, rows = answer
            QApplication.clipboard().setText(text)
            self.services.post_message(f"Copied {rows:,} row{'s' if rows != 1 else ''} as CSV.")

        def failed(exc: BaseException) -> None:
            message = getattr(exc, "message", None) or str(exc)
            hint = getattr(exc, "hint", None)
            self.sig_problem_reported.emit(
                f"Not copied: {message}" + (f" — {hint}" if hint else "")
            )

        if self._copy_worker is not None:
            self._copy_worker.cancel()
        self._copy_worker = submit_query(
            self.services,
            lambda ctx, q: q.rows_as_csv(
                relation,
                filters=filters,
                order_by=order,
                max_rows=MAX_COPY_ROWS,
                max_bytes=MAX_COPY_BYTES,
            ),
            label=f"Copy {relation}",
            on_result=copied,
            on_error=failed,
        )

    # -- export --------------------------------------------------------------------------
    def export_dialog(self) -> None:
        if not self.relation:
            self.sig_problem_reported.emit(
                "Only cached results can be exported: run the whole tab, or label the query."
            )
            return
        folder = widget_state(EXPORT_FOLDER_KEY)
        folder = Path(folder) if isinstance(folder, str) and Path(folder).is_dir() else Path.home()
        start = str(folder / f"{self.relation}.csv")
        path, chosen = QFileDialog.getSaveFileName(self, "Export result", start, EXPORT_FILTERS)
        if not path:
            return
        set_widget_state(EXPORT_FOLDER_KEY, str(Path(path).parent))  # next export starts there
        suffix = _FILTER_SUFFIX.get(chosen, "")
        if suffix and Path(path).suffix.lower() not in (".csv", ".parquet", ".pq", ".xlsx"):
            path += suffix
        self.export_to(path)

    def export_to(self, path: str | Path) -> None:
        """Export the whole result to ``path`` (format from the suffix) in a worker, in the
        order the grid shows (its sort, else the result's own order)."""
        relation = self.relation
        model = self.model
        order_by = model.order_by if model is not None else None
        self.export_button.setEnabled(False)
        self.summary.setText(f"Exporting to {Path(path).name}…")
        self._export_worker = submit_query(
            self.services,
            lambda ctx, q: q.export_table(relation, str(path), order_by=order_by),
            label=f"Export {relation}",
            on_result=self._export_done,
            on_error=self._export_failed,
            on_finished=lambda: self.export_button.setEnabled(self.relation is not None),
        )

    def _export_done(self, result: dict) -> None:
        rows = result.get("rows", result.get("row_count"))
        where = result.get("path", "")
        text = (
            f"Exported {rows:,} rows to {where}"
            if isinstance(rows, int)
            else f"Exported to {where}"
        )
        self.summary.setText(text)
        self.services.post_message(text, "info")
        self.sig_export_finished.emit(result)

    def _export_failed(self, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or str(exc)
        hint = getattr(exc, "hint", None)
        self.summary.setText("Export failed.")
        self.sig_problem_reported.emit(f"Export failed: {message}" + (f" — {hint}" if hint else ""))


def pager(query, relation: str):
    """``fetch(offset, limit, order_by=None, filters=None)`` over ``relation`` (call it in
    a worker)."""

    def fetch(offset: int, limit: int, order_by=None, filters=None):
        if filters:
            return query.fetch_rows(relation, offset, limit, order_by=order_by, filters=filters)
        return query.fetch_rows(relation, offset, limit, order_by=order_by)

    return fetch


def first_block(query, relation: str) -> list[tuple]:
    """The first page of ``relation`` (call in the worker that ran the query)."""
    return [tuple(r) for r in query.fetch_rows(relation, 0, BLOCK_ROWS)]
