"""The quick summary of the grid's selection, beside the Grid and Chart tabs: count, NULLs,
sum, average, minimum and maximum (``Count 3 · Sum 6 · Avg 2 · Min 1 · Max 3``).

Whole columns of a cached result are summed by DuckDB over the rows passing the filters
(``QueryService.summarize_column``, in a cancellable worker); other cells from the values
the grid has loaded, or fetches as a copy does. What is counted and how it reads is the
engine's (:mod:`lantide.query.grid_summary`).
"""

from __future__ import annotations

from PySide6.QtCore import QLocale, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import QTabWidget, QWidget

from lantide.query.grid_queries import ColumnSummary
from lantide.query.grid_summary import combine, summarize_values, summary_text
from lantide.ui.elided_label import ElidedLabel
from lantide.ui.sql.query_jobs import submit_query
from lantide.ui.sql.result_grid import ResultGridView, column_fully_selected
from lantide.ui.sql.result_model import PagedResultModel

SUMMARY_DELAY_MS = 120  # a drag across cells summarizes once it rests
MAX_SUMMARY_CELLS = 200_000  # beyond: whole columns, which DuckDB sums


class SelectionSummary(ElidedLabel):
    """The summary line in the bottom-right corner of ``views`` (the Grid and Chart tabs):
    as wide as the room beside the tabs, the text cut with "…" beyond (whole in its
    tooltip)."""

    sig_problem_reported = Signal(str)

    def __init__(self, services, grid: ResultGridView, views: QTabWidget, parent: QWidget):
        super().__init__("", parent)
        self.services, self.grid, self.views = services, grid, views
        self.setObjectName("SelectionSummary")
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setContentsMargins(6, 0, 8, 0)
        self.width_wanted = 0
        views.setCornerWidget(self, Qt.Corner.BottomRightCorner)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SUMMARY_DELAY_MS)
        self._timer.timeout.connect(self.summarize)
        self._worker = None
        self._model: PagedResultModel | None = None
        self._relation: str | None = None

    def watch(self, model: PagedResultModel, relation: str | None) -> None:
        """Summarize the selections of the grid now showing ``model`` (paged from
        ``relation``, the cached table, when there is one)."""
        self._model, self._relation = model, relation
        self.grid.selectionModel().selectionChanged.connect(lambda *_: self._timer.start())
        self.say("")

    def summarize(self) -> None:
        """Summarize the selection now (the grid's selection changes call it, a moment
        after the last change)."""
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        model, selection = self._model, self.grid.selectionModel()
        self.say("")
        if model is None or selection is None or self.grid.model() is not model:
            return
        ranges = [selection.selection().at(i) for i in range(selection.selection().count())]
        cells = sum(r.width() * r.height() for r in ranges)
        if cells < 2:
            return
        columns = sorted({c for r in ranges for c in range(r.left(), r.right() + 1)})
        whole = all(column_fully_selected(selection, c) for c in columns)
        relation = self._relation
        if whole and model.can_page and relation is not None:
            names = [model.columns[c]["name"] for c in columns]
            filters = model.filters or None
            self.say("Summing…")
            self._worker = submit_query(
                self.services,
                lambda ctx, q: combine(
                    [q.summarize_column(relation, name, filters) for name in names]
                ),
                label=f"Summarize {relation}",
                on_result=self._show,
                on_error=self._failed,
                track=False,
            )
            return
        if cells > MAX_SUMMARY_CELLS:
            self.say(f"{cells:,} cells: select whole columns to summarize this many")
            return
        spans = [(r.top(), r.height(), r.left(), r.right()) for r in ranges]
        loaded = [model.cached_range(top, height) for top, height, _, _ in spans]
        if all(rows is not None for rows in loaded):
            self._show(summarize_values(_cells(spans, loaded)))
            return
        fetch = model.fetch
        if fetch is None:
            return
        self.say("Summing…")
        self._worker = self.services.workers.submit(
            lambda ctx: summarize_values(
                _cells(spans, [fetch(top, height) for top, height, _, _ in spans])
            ),
            on_result=self._show,
            on_error=self._failed,
            name="summarize selection",
        )

    def _show(self, summary: ColumnSummary) -> None:
        self._worker = None
        here = QLocale()
        self.say(summary_text(summary, group=here.groupSeparator(), point=here.decimalPoint()))

    def _failed(self, exc: BaseException) -> None:
        self._worker = None
        from lantide.query.errors import QueryCancelled

        if not isinstance(exc, QueryCancelled):
            self.say("")
            message = getattr(exc, "message", None) or str(exc)
            self.sig_problem_reported.emit(f"The selection could not be summarized: {message}")

    def say(self, text: str) -> None:
        self.setText(text)
        self.fit()

    def fit(self) -> None:
        """Take the room right of the Grid and Chart tabs, never theirs."""
        room = self.views.width() - self.views.tabBar().sizeHint().width() - 24
        wanted = self.fontMetrics().horizontalAdvance(self.text()) + 16
        width = max(0, min(wanted, room))
        if width != self.width_wanted:
            self.width_wanted = width
            # the tab widget lays its corner out by the corner's size hint, on this call
            self.views.setCornerWidget(self, Qt.Corner.BottomRightCorner)
            self.show()  # setCornerWidget hides the corner it replaces: this same label

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.width_wanted, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return self.sizeHint()


def _cells(spans: list[tuple[int, int, int, int]], rows_of: list) -> list[object]:
    """The values of the selected cells: each span's rows, its columns ``left..right``."""
    return [
        row[c]
        for (_, _, left, right), rows in zip(spans, rows_of, strict=True)
        for row in rows
        for c in range(left, right + 1)
    ]
