"""The result grid: a table view over :class:`PagedResultModel` with typed headers, copy
as CSV/TSV and export of the whole result (CSV, Parquet, XLSX through the query layer).

Copying a selection whose rows are not all loaded fetches them in a worker first; more
than :data:`MAX_COPY_ROWS` rows are refused with the advice to export instead, because a
clipboard with millions of rows helps nobody.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QItemSelectionModel, QRect, Qt, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QMenu,
    QStyle,
    QStyleOptionHeader,
    QTableView,
    QWidget,
)

from lantide.query.duckdb_types import is_date_or_timestamp, is_integer, is_numeric
from lantide.query.grid_copy import as_delimited, as_markdown, as_sql_values
from lantide.query.grid_formats import DATE_FORMATS
from lantide.ui.icons import icon
from lantide.ui.shortcuts import shortcut
from lantide.ui.sql.frozen_column import FrozenColumnView
from lantide.ui.sql.result_model import ROLE_FILTERED, ROLE_RAW, PagedResultModel

MAX_COPY_ROWS = 100_000
MAX_COPY_BYTES = 32_000_000  # the whole result as CSV: more is for Export
MARKDOWN = "markdown"
SQL_VALUES = "sql"
COPY_KINDS = [("TSV", "\t"), ("CSV", ","), ("Markdown", MARKDOWN), ("SQL VALUES", SQL_VALUES)]
MAX_AUTO_WIDTH = 360
SORT_ARROW_SPACE = 18  # pixels kept free at a header's right for the sort arrow


class TypedHeaderView(QHeaderView):
    """A horizontal header showing each column's name and, below it, its type."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setSectionsClickable(True)
        self.setHighlightSections(True)
        self.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self._type_font = QFont(self.font())
        self._type_font.setPointSizeF(max(6.0, self.font().pointSizeF() * 0.85))
        self._name_font = QFont(self.font())
        self._name_font.setWeight(QFont.Weight.DemiBold)

    def sizeHint(self):  # noqa: N802
        hint = super().sizeHint()
        lines = QFontMetrics(self._name_font).height() + QFontMetrics(self._type_font).height()
        hint.setHeight(lines + 10)
        return hint

    def sectionSizeFromContents(self, logical_index: int):  # noqa: N802
        size = super().sectionSizeFromContents(logical_index)
        model = self.model()
        if model is not None:
            name = str(model.headerData(logical_index, Qt.Orientation.Horizontal) or "")
            kind = str(model.headerData(logical_index, Qt.Orientation.Horizontal, ROLE_RAW) or "")
            width = (
                max(
                    QFontMetrics(self._name_font).horizontalAdvance(name),
                    QFontMetrics(self._type_font).horizontalAdvance(kind),
                )
                + 18
                + SORT_ARROW_SPACE
            )  # room for the sort arrow, so sorting never elides
            size.setWidth(max(size.width(), width))
        size.setHeight(self.sizeHint().height())
        return size

    def paintSection(self, painter: QPainter, rect: QRect, logical_index: int) -> None:  # noqa: N802
        if not rect.isValid():
            return
        model = self.model()
        opt = QStyleOptionHeader()
        self.initStyleOption(opt)
        opt.rect = rect
        opt.section = logical_index
        opt.text = ""
        selection = self.selectionModel()
        if (
            selection is not None
            and self.highlightSections()
            and column_fully_selected(selection, logical_index)
        ):
            opt.state |= QStyle.StateFlag.State_On
        sorted_here = self.isSortIndicatorShown() and self.sortIndicatorSection() == logical_index
        if sorted_here:  # as spreadsheets and database tools do: up for ascending
            opt.sortIndicator = (
                QStyleOptionHeader.SortIndicator.SortUp
                if self.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
                else QStyleOptionHeader.SortIndicator.SortDown
            )
        painter.save()
        self.style().drawControl(QStyle.ControlElement.CE_Header, opt, painter, self)
        name = str(model.headerData(logical_index, Qt.Orientation.Horizontal) or "")
        kind = str(model.headerData(logical_index, Qt.Orientation.Horizontal, ROLE_RAW) or "")
        inner = rect.adjusted(8, 3, -(SORT_ARROW_SPACE if sorted_here else 6), -3)
        if model.headerData(logical_index, Qt.Orientation.Horizontal, ROLE_FILTERED):
            size = min(14, inner.height() // 2)
            icon("filter", "accent").paint(
                painter, QRect(inner.right() - size, inner.top() + 1, size, size)
            )
            inner.setRight(inner.right() - size - 3)
        name_h = QFontMetrics(self._name_font).height()
        painter.setFont(self._name_font)
        painter.setPen(self.palette().color(QPalette.ColorRole.ButtonText))
        painter.drawText(
            QRect(inner.left(), inner.top(), inner.width(), name_h),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            QFontMetrics(self._name_font).elidedText(
                name, Qt.TextElideMode.ElideRight, inner.width()
            ),
        )
        painter.setFont(self._type_font)
        painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(
            QRect(inner.left(), inner.top() + name_h, inner.width(), inner.height() - name_h),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
            QFontMetrics(self._type_font).elidedText(
                kind.lower(), Qt.TextElideMode.ElideRight, inner.width()
            ),
        )
        painter.restore()


def column_fully_selected(selection: QItemSelectionModel, column: int) -> bool:
    """Whether every row of ``column`` is selected, from the selection's ranges.

    ``QItemSelectionModel.isColumnSelected`` asks row by row (31 s on 1.5 million rows,
    on every repaint of the header); the ranges say it at once."""
    model = selection.model()
    rows = model.rowCount() if model is not None else 0
    if rows <= 0:
        return False
    picked = selection.selection()
    spans = sorted(
        (r.top(), r.bottom())
        for r in (picked.at(i) for i in range(picked.count()))
        if r.left() <= column <= r.right()
    )
    reached = -1
    for top, bottom in spans:
        if top > reached + 1:
            return False
        reached = max(reached, bottom)
    return reached >= rows - 1


def rows_as_text(
    columns: list[str], rows: list[tuple], delimiter: str = "\t", *, header: bool = True
) -> str:
    """Rows as CSV or TSV text (:func:`lantide.query.grid_copy.as_delimited`)."""
    return as_delimited(columns, rows, delimiter, header=header)


def copy_text(kind: str, columns: list[str], rows: list[tuple], *, header: bool = True) -> str:
    """Rows as the clipboard gets them: ``kind`` is a delimiter (``\t``, ``,``),
    :data:`MARKDOWN` or :data:`SQL_VALUES` (the writers of :mod:`lantide.query.grid_copy`)."""
    if kind == MARKDOWN:
        return as_markdown(columns, rows)
    if kind == SQL_VALUES:
        return as_sql_values(columns, rows)
    return as_delimited(columns, rows, kind, header=header)


class ResultGridView(QTableView):
    """The table view of a result, with copy and export in its context menu."""

    sig_copy_finished = Signal(int)  # rows copied
    sig_problem_reported = Signal(str)  # a message for the analyst (too big to copy, ...)
    sig_export_requested = Signal()
    sig_filter_requested = Signal(int)  # column: edit its filter
    sig_filter_removed = Signal(int)  # column: remove its filter
    sig_filters_cleared = Signal()
    sig_column_format_chosen = Signal(str, dict)  # column name, its format ({}: default)
    sig_freeze_toggled = Signal(bool)  # the first column frozen or not
    sig_copy_result_requested = Signal()  # the whole (filtered) result as CSV

    def __init__(self, workers, parent: QWidget | None = None):
        super().__init__(parent)
        self._frozen: FrozenColumnView | None = None  # before any geometry update asks
        self._workers = workers
        self.setHorizontalHeader(TypedHeaderView(self))
        self.setAccessibleName("Result grid")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setWordWrap(False)
        self.setAlternatingRowColors(True)
        self.setCornerButtonEnabled(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._show_menu)
        vertical = self.verticalHeader()
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform rows: fast
        vertical.setDefaultSectionSize(QFontMetrics(self.font()).height() + 8)
        vertical.setDefaultAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(False)
        self.horizontalHeader().setMinimumSectionSize(48)
        # Sorting: a click on a header cycles ascending, descending, the result's own order.
        self.horizontalHeader().setSortIndicatorShown(False)
        self.horizontalHeader().sectionClicked.connect(self._header_clicked)
        self.horizontalHeader().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.horizontalHeader().customContextMenuRequested.connect(self._show_header_menu)
        self._copy_worker = None
        self._sort: tuple[int, Qt.SortOrder] | None = None  # (column, order) shown
        self._auto_sizing = False
        self._user_sized: set[int] = set()
        self.horizontalHeader().sectionResized.connect(self._note_user_resize)
        for text, key, slot in (
            ("Copy as TSV", shortcut("grid_copy_tsv"), lambda: self.copy_selection("\t")),
            ("Copy as CSV", shortcut("grid_copy_csv"), lambda: self.copy_selection(",")),
            ("Filter column…", shortcut("grid_filter"), self._filter_current_column),
            ("Select column", shortcut("grid_select_column"), self._select_current_column),
        ):
            action = QAction(text, self)
            action.setShortcut(key)
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            action.triggered.connect(slot)
            self.addAction(action)

    def set_result_model(self, model: PagedResultModel | None) -> None:
        old = self.model()
        self._show_order(-1, Qt.SortOrder.AscendingOrder)  # a new result: its own order
        self.setModel(model)
        if isinstance(old, PagedResultModel) and old is not model:
            old.close()
            old.deleteLater()
        self._user_sized.clear()
        if model is not None:
            self.fit_columns(range(min(model.rowCount(), 60)), grow_only=False)
            if isinstance(model, PagedResultModel):
                model.sig_block_loaded.connect(self._widen_for_visible_rows)
        if self._frozen is not None:
            self._frozen.sync()

    # -- the frozen first column ---------------------------------------------------------
    @property
    def first_column_frozen(self) -> bool:
        return self._frozen is not None

    def set_first_column_frozen(self, frozen: bool) -> None:
        """Keep the first column in place while the others scroll sideways."""
        if frozen == (self._frozen is not None):
            return
        if frozen:
            self._frozen = FrozenColumnView(self, TypedHeaderView())
            self._frozen.sync()
            self._frozen.show()
        else:
            assert self._frozen is not None
            self._frozen.hide()
            self._frozen.setParent(None)
            self._frozen.deleteLater()
            self._frozen = None

    @property
    def frozen_view(self) -> FrozenColumnView | None:
        return self._frozen

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self._frozen is not None:
            self._frozen.update_geometry()

    def updateGeometries(self) -> None:  # noqa: N802
        super().updateGeometries()
        if self._frozen is not None:
            self._frozen.update_geometry()

    def _note_user_resize(self, section: int, _old: int, _new: int) -> None:
        if not self._auto_sizing:
            self._user_sized.add(section)

    def _widen_for_visible_rows(self, _block: int = 0) -> None:
        first = self.rowAt(0)
        last = self.rowAt(self.viewport().height() - 1)
        if first < 0:
            return
        last = last if last >= 0 else first + 60
        self.fit_columns(range(first, last + 1), grow_only=True)

    def fit_columns(self, rows=range(0), *, grow_only: bool = True) -> None:
        """Size columns to their header and ``rows`` (loaded ones), capped so one long
        text does not take the screen; columns the analyst resized are left alone."""
        model = self.model()
        if model is None:
            return
        header = self.horizontalHeader()
        metrics = QFontMetrics(self.font())
        self._auto_sizing = True
        try:
            for col in range(model.columnCount()):
                if col in self._user_sized:
                    continue
                width = header.sectionSizeFromContents(col).width()
                for row in rows:
                    if isinstance(model, PagedResultModel) and not model.is_loaded(row):
                        continue
                    text = model.data(model.index(row, col))
                    if text:
                        width = max(width, metrics.horizontalAdvance(str(text)) + 18)
                width = min(width, MAX_AUTO_WIDTH)
                if not grow_only or width > header.sectionSize(col):
                    header.resizeSection(col, width)
        finally:
            self._auto_sizing = False

    # -- sorting -------------------------------------------------------------------------
    def sort_by(self, column: int, order: Qt.SortOrder | None) -> None:
        """Sort by ``column`` (``order`` None: back to the result's own order). The rows are
        sorted by DuckDB and paged as before; the first page shows once it arrives."""
        model = self.model()
        if not isinstance(model, PagedResultModel):
            return
        if order is None or column < 0:
            self._show_order(-1, Qt.SortOrder.AscendingOrder)
            model.sort(-1)
        else:
            self._show_order(column, order)
            model.sort(column, order)
        self.clearSelection()  # selected rows would now be other rows
        self.scrollToTop()

    def _show_order(self, column: int, order: Qt.SortOrder) -> None:
        self._sort = (column, order) if column >= 0 else None
        header = self.horizontalHeader()
        header.setSortIndicatorShown(column >= 0)
        header.setSortIndicator(column, order)
        header.viewport().update()

    def _header_clicked(self, column: int) -> None:
        # Our own record of the order: the header flips its indicator on a click by itself.
        if self._sort is None or self._sort[0] != column:
            self.sort_by(column, Qt.SortOrder.AscendingOrder)
        elif self._sort[1] == Qt.SortOrder.AscendingOrder:
            self.sort_by(column, Qt.SortOrder.DescendingOrder)
        else:
            self.sort_by(column, None)

    def _show_header_menu(self, pos) -> None:
        menu = self.build_header_menu(self.horizontalHeader().logicalIndexAt(pos))
        if menu is not None:
            menu.exec(self.horizontalHeader().viewport().mapToGlobal(pos))
            menu.deleteLater()

    def build_header_menu(self, column: int) -> QMenu | None:
        """The menu of ``column``'s header: sort, filter, format, freeze."""
        model = self.model()
        if column < 0 or not isinstance(model, PagedResultModel):
            return None
        name = model.columns[column]["name"]
        menu = QMenu(self)
        menu.addAction(
            f"Sort by {name}, ascending", lambda: self.sort_by(column, Qt.SortOrder.AscendingOrder)
        )
        menu.addAction(
            f"Sort by {name}, descending",
            lambda: self.sort_by(column, Qt.SortOrder.DescendingOrder),
        )
        clear = menu.addAction("Original order", lambda: self.sort_by(-1, None))
        clear.setEnabled(model.order_by is not None)
        menu.addAction(f"Select {name} (its summary below)", lambda: self.selectColumn(column))
        menu.addSeparator()
        filtered = bool(model.headerData(column, Qt.Orientation.Horizontal, ROLE_FILTERED))
        edit = menu.addAction(
            icon("filter"), f"Filter {name}…", lambda: self.sig_filter_requested.emit(column)
        )
        edit.setEnabled(model.can_page)
        if not model.can_page:
            edit.setToolTip("Only cached results can be filtered: run the whole tab.")
        remove = menu.addAction("Remove this filter", lambda: self.sig_filter_removed.emit(column))
        remove.setEnabled(filtered)
        clear_all = menu.addAction("Clear all filters", self.sig_filters_cleared.emit)
        clear_all.setEnabled(bool(model.filters))
        menu.addSeparator()
        self._add_format_menu(menu, model, column)
        freeze = menu.addAction("Freeze first column")
        freeze.setCheckable(True)
        freeze.setChecked(self.first_column_frozen)
        freeze.toggled.connect(self.sig_freeze_toggled.emit)
        return menu

    def _add_format_menu(self, menu: QMenu, model: PagedResultModel, column: int) -> None:
        """The column's format: decimals and thousands separators for numbers, the date
        format for dates; "Default format" takes them away."""
        name, kind = model.columns[column]["name"], model.columns[column]["type"]
        current = dict(model.column_format(name))
        sub = menu.addMenu(f"Format {name}")
        sub.setObjectName("FormatMenu")

        def choose(**change: object) -> None:
            fmt = {**current, **change}
            self.sig_column_format_chosen.emit(
                name, {k: v for k, v in fmt.items() if v is not None}
            )

        if is_numeric(kind):
            decimals = sub.addMenu("Decimals")
            for places in (None, 0, 1, 2, 3, 4, 6):
                label = (
                    "As stored"
                    if places is None
                    else f"{places} (1{'.' if places else ''}{'0' * places})"
                )
                action = decimals.addAction(label, partial(choose, decimals=places))
                action.setCheckable(True)
                action.setChecked(current.get("decimals") == places)
            grouped = bool(current.get("thousands", not is_integer(kind)))
            thousands = sub.addAction("Thousands separators")
            thousands.setCheckable(True)
            thousands.setChecked(grouped)
            thousands.toggled.connect(lambda on: choose(thousands=on))
        if is_date_or_timestamp(kind):
            dates = sub.addMenu("Date format")
            for key, (label, _) in [("", ("As stored (ISO)", "")), *DATE_FORMATS.items()]:
                action = dates.addAction(label, partial(choose, date=key or None))
                action.setCheckable(True)
                action.setChecked(current.get("date", "") == key)
        if not sub.actions():
            sub.addAction("No format for this type").setEnabled(False)
        else:
            sub.addSeparator()
            reset = sub.addAction(
                "Default format", lambda: self.sig_column_format_chosen.emit(name, {})
            )
            reset.setEnabled(bool(current))

    def _select_current_column(self) -> None:
        current = self.currentIndex()
        if current.isValid():
            self.selectColumn(current.column())

    def _filter_current_column(self) -> None:
        current = self.currentIndex()
        column = current.column() if current.isValid() else 0
        if self.model() is not None and self.model().columnCount():
            self.sig_filter_requested.emit(column)

    # -- copy ----------------------------------------------------------------------------
    def _selection_bounds(self) -> tuple[int, int, list[int]] | None:
        selection = self.selectionModel().selection() if self.selectionModel() else None
        # by index: QItemSelection iterates at run time, but its stub declares no __iter__
        ranges = [selection.at(i) for i in range(selection.count())] if selection else []
        if not ranges:
            current = self.currentIndex()
            if not current.isValid():
                return None
            return current.row(), current.row(), [current.column()]
        top = min(r.top() for r in ranges)
        bottom = max(r.bottom() for r in ranges)
        cols = sorted({c for r in ranges for c in range(r.left(), r.right() + 1)})
        return top, bottom, cols

    def _visible_bounds(self) -> tuple[int, int, list[int]] | None:
        model = self.model()
        first = self.rowAt(0)
        if model is None or first < 0:
            return None
        last = self.rowAt(self.viewport().height() - 1)
        last = last if last >= 0 else model.rowCount() - 1
        return first, last, list(range(model.columnCount()))

    def copy_selection(
        self, delimiter: str = "\t", *, header: bool | None = None, visible: bool = False
    ) -> None:
        """Copy the selected cells (their bounding rows and the selected columns), or with
        ``visible`` the rows on screen, every column. ``delimiter``: ``\t`` or ``,``, or
        :data:`MARKDOWN` or :data:`SQL_VALUES` for those formats (always with the names)."""
        model = self.model()
        bounds = self._visible_bounds() if visible else self._selection_bounds()
        if model is None or bounds is None:
            return
        top, bottom, cols = bounds
        count = bottom - top + 1
        if count > MAX_COPY_ROWS:
            self.sig_problem_reported.emit(
                f"{count:,} rows are too many to copy (the limit is {MAX_COPY_ROWS:,}). "
                "Use Export to write the whole result to a CSV, Parquet or Excel file."
            )
            return
        names = [model.headerData(c, Qt.Orientation.Horizontal) for c in cols]
        with_header = header if header is not None else (count > 1 or len(cols) > 1)
        if isinstance(model, PagedResultModel):
            cached = model.cached_range(top, count)
            if cached is None:
                fetch = model.fetch
                if fetch is None:  # without a pager every row is cached: not reached
                    return
                self._copy_worker = self._workers.submit(
                    lambda ctx: [tuple(r) for r in fetch(top, count)],
                    on_result=lambda rows: self._put_on_clipboard(
                        names, rows, cols, delimiter, with_header
                    ),
                    on_error=lambda exc: self.sig_problem_reported.emit(
                        f"Copy failed: {getattr(exc, 'message', exc)}"
                    ),
                    name="copy rows",
                )
                return
            rows = cached
        else:
            rows = [
                tuple(model.data(model.index(r, c), ROLE_RAW) for c in range(model.columnCount()))
                for r in range(top, bottom + 1)
            ]
        self._put_on_clipboard(names, rows, cols, delimiter, with_header)

    def _put_on_clipboard(
        self, names: list[str], rows: list[tuple], cols: list[int], delimiter: str, header: bool
    ) -> None:
        picked = [tuple(row[c] for c in cols) for row in rows]
        text = copy_text(delimiter, names, picked, header=header)
        if delimiter in ("\t", ",") and not header and len(picked) == 1 and len(cols) == 1:
            text = text.rstrip("\n")  # one cell: its value, not a line
        QApplication.clipboard().setText(text)
        self.sig_copy_finished.emit(len(picked))

    # -- menu ----------------------------------------------------------------------------
    def _show_menu(self, pos) -> None:
        menu = QMenu(self)
        add_copy_actions(menu, self, self.sig_copy_result_requested.emit)
        menu.addSeparator()
        menu.addAction("Select all", self.selectAll)
        menu.addAction("Export result…", self.sig_export_requested.emit)
        menu.exec(self.viewport().mapToGlobal(pos))
        menu.deleteLater()


def add_copy_actions(menu: QMenu, grid: ResultGridView, copy_result) -> None:
    """The copy actions (the grid's context menu and the panel's Copy button share them):
    the selection as TSV, CSV, Markdown or SQL VALUES, the rows on screen, and the whole
    (filtered) result as CSV through ``copy_result``."""
    for label, kind in COPY_KINDS:
        menu.addAction(f"Copy as {label}", partial(grid.copy_selection, kind))
    menu.addAction("Copy with header", partial(grid.copy_selection, "\t", header=True))
    visible = menu.addMenu("Copy the rows on screen")
    for label, kind in COPY_KINDS[1:]:
        visible.addAction(f"as {label}", partial(grid.copy_selection, kind, visible=True))
    whole = menu.addAction("Copy the whole result as CSV", copy_result)
    whole.setToolTip(f"Up to {MAX_COPY_ROWS:,} rows; more is for Export")
