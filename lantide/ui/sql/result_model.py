"""The result grid's model: a table of any size, paged from DuckDB on demand.

The model knows the row count and the columns up front and holds only a bounded number of
row blocks. A paint of rows that are not loaded answers a placeholder and asks for their
block; blocks are fetched one at a time in a worker (``fetch(offset, limit) -> rows``,
the query layer's ``fetch_rows``), the most recently asked first, so dragging the scroll
bar across two million rows loads only what comes to rest on screen. The UI thread never
waits on DuckDB. A run's preview rows seed the first blocks, so the first screen shows
without a fetch.

Sorting (:meth:`PagedResultModel.sort`, a click on a column header) runs in DuckDB: the
blocks held are dropped and pages are fetched again with ``order_by``, in the same
workers; rows of the old order that arrive late are ignored. A result without a relation
to page from (a preview) is sorted in memory.
"""

from __future__ import annotations

import decimal
import math
import struct
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication

from lantide.query.duckdb_types import is_numeric
from lantide.query.grid_copy import cell_text
from lantide.query.grid_formats import ColumnFormat, format_cell

BLOCK_ROWS = 256
MAX_BLOCKS = 96  # about 25,000 rows held at once
MAX_PENDING = 6  # older requests are dropped; a repaint asks again if still visible
MAX_COALESCE = 4  # adjacent blocks fetched in one query
MAX_CELL_CHARS = 500
SORT_TIP = "Click to sort; again for descending; a third time for the original order."

# fetch(offset, limit) -> rows, or fetch(offset, limit, order_by) with order_by a list of
# (column name, "asc"|"desc") once the grid is sorted, or fetch(offset, limit, order_by,
# filters) once it is filtered (filters as lantide.query.grid_filters reads them).
FetchFn = Callable[..., Sequence[Sequence[Any]]]


def _fetcher(
    fetch: FetchFn, order: list[tuple[str, str]] | None, filters: list[dict] | None = None
):
    if filters:
        return lambda offset, limit: fetch(offset, limit, order or None, filters)
    if not order:
        return fetch  # a pager that cannot sort keeps working unsorted
    return lambda offset, limit: fetch(offset, limit, order)


_ROOT = QModelIndex()  # the invalid index: Qt's default parent of a flat model's rows
ROLE_RAW = Qt.ItemDataRole.UserRole + 1  # the Python value of a cell (None when not loaded)
ROLE_FILTERED = Qt.ItemDataRole.UserRole + 2  # a header's column has a filter


def is_numeric_type(type_name: str) -> bool:
    """Right-aligned and formatted as a number (:mod:`lantide.query.duckdb_types`)."""
    return is_numeric(type_name)


def format_value(value: Any) -> str:
    """A cell as text: the way an analyst reads it, full precision, one line
    (:func:`lantide.query.grid_copy.cell_text`, which copy and export use too)."""
    return cell_text(value)


# A double holds every decimal of up to 15 significant digits exactly enough to read it
# back; the 16th and 17th digits of repr() are the noise of one operation (0.1 + 0.2). A
# SUM over thousands of rows adds a rounding error per row, which reaches the 15th digit
# (8262570.90999999 for 8262570.91): the grid reads doubles at 13 significant digits, the
# shortest text that reads back as that rounding. The whole value is in the tooltip, and
# copy and export keep every digit.
DOUBLE_DIGITS = 13
_SINGLE_TYPES = ("FLOAT", "REAL", "FLOAT4")


def _as_single(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _shortest_single(value: float) -> str | None:
    """The shortest decimal that reads back as the same 32-bit float (None when ``value``
    is not one)."""
    try:
        if _as_single(value) != value:
            return None
    except OverflowError:
        return None
    for digits in range(1, 10):
        candidate = float(f"{value:.{digits}g}")
        if _as_single(candidate) == value:
            return repr(candidate)
    return None


def display_value(
    value: Any, type_name: str | None = None, *, locale: NumberLocale | None = None
) -> str:
    """A cell as the grid shows it: like :func:`format_value`, but a double at
    :data:`DOUBLE_DIGITS` significant digits (9618.3, not 9618.300000000001), a FLOAT at
    its own precision, a DECIMAL with its scale and no exponent. With ``locale`` a double
    or decimal is grouped and uses its decimal point (8,262,570.91); integers are not
    grouped (ids, years and codes are integers). Copy and export use :func:`format_value`."""
    if isinstance(value, float) and not isinstance(value, bool) and math.isfinite(value):
        text = None
        if (type_name or "").upper().startswith(_SINGLE_TYPES):
            text = _shortest_single(value)
        if text is None:
            full = repr(value)
            short = repr(float(f"{value:.{DOUBLE_DIGITS}g}"))
            text = short if len(short) < len(full) else full
        return locale.number(text) if locale is not None else text
    if isinstance(value, decimal.Decimal) and value.is_finite():
        text = format(value, "f")
        return locale.number(text) if locale is not None else text
    return format_value(value)


class NumberLocale:
    """How the analyst's locale writes a number: its group separator and decimal point
    (taken from ``QLocale()`` by the grid; plain ``,`` and ``.`` by default)."""

    def __init__(self, group: str = ",", decimal_point: str = "."):
        self.group = group
        self.decimal_point = decimal_point

    @classmethod
    def system(cls) -> NumberLocale:
        from PySide6.QtCore import QLocale

        here = QLocale()
        return cls(here.groupSeparator(), here.decimalPoint())

    def number(self, text: str) -> str:
        """``text`` (Python's writing of a number: ``-8262570.91``, ``1e+301``) grouped
        by thousands with this locale's separators; an exponent form is not grouped."""
        sign = "-" if text.startswith("-") else ""
        body = text[len(sign) :]
        if "e" in body or "E" in body or not body[:1].isdigit():
            return sign + body.replace(".", self.decimal_point)
        whole, _, fraction = body.partition(".")
        groups: list[str] = []
        while len(whole) > 3:
            groups.insert(0, whole[-3:])
            whole = whole[:-3]
        grouped = self.group.join([whole, *groups])
        return sign + grouped + (self.decimal_point + fraction if fraction else "")


def sorted_rows(
    rows: Sequence[tuple], columns: list[dict], order_by: list[tuple[str, str]]
) -> list[tuple]:
    """``rows`` sorted in memory like the grid's DuckDB sort: nulls last either way; values
    that do not compare (mixed types) compare as text."""
    out = list(rows)
    names = [c["name"] for c in columns]
    for name, direction in reversed(order_by):  # stable sorts, least significant first
        if name not in names:
            continue
        col = names.index(name)
        present = [r for r in out if r[col] is not None]
        missing = [r for r in out if r[col] is None]
        try:
            present.sort(key=lambda r: r[col], reverse=direction == "desc")
        except TypeError:
            present.sort(key=lambda r: format_value(r[col]), reverse=direction == "desc")
        out = present + missing
    return out


def _one_line(text: str) -> str:
    if "\n" in text or "\r" in text:
        text = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


class PagedResultModel(QAbstractTableModel):
    """Rows ``0 .. row_count-1`` of a relation, loaded in blocks as they are shown."""

    sig_fetch_failed = Signal(object)  # the exception of a failed block fetch
    sig_block_loaded = Signal(int)  # block index
    # The order changed: [(column name, "asc"|"desc")], or [] for the result's own order.
    sig_order_changed = Signal(list)
    # The filters shown changed: (filters, rows passing them)
    sig_filters_changed = Signal(list, int)

    def __init__(
        self,
        columns: list[dict],
        row_count: int,
        fetch: FetchFn | None,
        workers,
        *,
        preview: Sequence[Sequence[Any]] = (),
        parent=None,
    ):
        super().__init__(parent)
        self.columns = [
            {"name": str(c.get("name")), "type": str(c.get("type") or "")} for c in columns
        ]
        self._row_count = int(row_count)
        self._fetch = fetch
        self._workers = workers
        self._numeric = [is_numeric_type(c["type"]) for c in self.columns]
        self._locale = NumberLocale.system()
        self._blocks: OrderedDict[int, list[tuple]] = OrderedDict()  # LRU
        self._pending: OrderedDict[int, None] = OrderedDict()
        self._in_flight: int | None = None
        self._worker = None
        self._failed: BaseException | None = None
        self._closed = False
        self._order: list[tuple[str, str]] = []
        self._generation = 0  # bumped by a new order: older fetches are stale
        self._filters: list[dict] = []  # the filters the rows shown pass
        self._total_rows = int(row_count)  # rows of the whole result, unfiltered
        self._filter_token = 0  # bumped by each filter asked for: older answers are stale
        self._awaiting_filter = False  # no page fetch until the filtered rows are known
        self._counting = False  # the filtered rows shown, their count not yet
        self._formats: list[ColumnFormat] = [{} for _ in self.columns]
        self._preview = [tuple(r) for r in preview]
        self._seed(self._preview)
        app = QApplication.instance()
        palette = app.palette() if isinstance(app, QApplication) else QPalette()
        self._muted = palette.color(QPalette.ColorRole.PlaceholderText)
        self._italic = QFont()
        self._italic.setItalic(True)

    def _seed(self, preview: Sequence[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in preview]
        for b in range(0, min(len(rows), self._row_count) // BLOCK_ROWS + 1):
            chunk = rows[b * BLOCK_ROWS : (b + 1) * BLOCK_ROWS]
            full = len(chunk) == BLOCK_ROWS or b * BLOCK_ROWS + len(chunk) >= self._row_count
            if chunk and full:
                self._blocks[b] = chunk
        if not self._fetch and self._row_count > len(rows):
            self._row_count = len(rows)  # nothing to page from: show what we have

    # -- Qt model API ------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._row_count

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal:
            if not 0 <= section < len(self.columns):
                return None
            col = self.columns[section]
            if role == Qt.ItemDataRole.DisplayRole:
                return col["name"]
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"{col['name']}  {col['type']}\n{SORT_TIP}"
            if role == ROLE_RAW:
                return col["type"]
            if role == ROLE_FILTERED:
                return any(f.get("column") == col["name"] for f in self._filters)
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{section + 1:,}"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if role == Qt.ItemDataRole.TextAlignmentRole:
            align = (
                Qt.AlignmentFlag.AlignRight if self._numeric[col] else Qt.AlignmentFlag.AlignLeft
            )
            return int(align | Qt.AlignmentFlag.AlignVCenter)
        if role not in (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.ToolTipRole,
            Qt.ItemDataRole.ForegroundRole,
            Qt.ItemDataRole.FontRole,
            ROLE_RAW,
            Qt.ItemDataRole.EditRole,
        ):
            return None
        loaded, value = self.cell(row, col)
        if role == ROLE_RAW:
            return value
        if not loaded:
            if role == Qt.ItemDataRole.DisplayRole:
                return "…"
            if role == Qt.ItemDataRole.ForegroundRole:
                return self._muted
            return None
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._muted if value is None else None
        if role == Qt.ItemDataRole.FontRole:
            return self._italic if value is None else None
        shown = None
        if self._formats[col]:
            shown = format_cell(
                value,
                self._formats[col],
                group=self._locale.group,
                point=self._locale.decimal_point,
            )
        if shown is None:
            shown = display_value(value, self.columns[col].get("type"), locale=self._locale)
        if role == Qt.ItemDataRole.ToolTipRole:
            text = format_value(value)
            if text != shown and len(text) <= 60:
                return f"{text} (exactly)"  # the digits the display rounds away
            return text[:4000] if len(text) > 60 or "\n" in text else None
        return _one_line(shown)

    def flags(self, index):
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- cells and blocks --------------------------------------------------------------
    def cell(self, row: int, col: int) -> tuple[bool, Any]:
        """(loaded, value). Asks for the row's block when it is not loaded."""
        block = row // BLOCK_ROWS
        rows = self._blocks.get(block)
        if rows is None:
            self.request_block(block)
            return False, None
        self._blocks.move_to_end(block)
        offset = row - block * BLOCK_ROWS
        if offset >= len(rows):
            return False, None
        return True, rows[offset][col]

    def is_loaded(self, row: int) -> bool:
        return row // BLOCK_ROWS in self._blocks

    @property
    def loaded_blocks(self) -> list[int]:
        return sorted(self._blocks)

    @property
    def fetch_error(self) -> BaseException | None:
        return self._failed

    def request_block(self, block: int) -> None:
        if self._fetch is None or self._closed or block in self._blocks:
            return
        if block == self._in_flight:
            return
        self._pending[block] = None
        self._pending.move_to_end(block)
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)
        self._start_next()

    def _start_next(self) -> None:
        if self._in_flight is not None or not self._pending or self._closed:
            return
        if self._fetch is None or self._awaiting_filter:  # pages wait for the filter
            return
        block, _ = self._pending.popitem(last=True)  # newest first: what is on screen now
        if block in self._blocks:
            self._start_next()
            return
        # Rows on screen often straddle two blocks: fetch asked-for neighbours in one query.
        first = last = block
        while last - first + 1 < MAX_COALESCE and (last + 1) in self._pending:
            last += 1
            del self._pending[last]
        while last - first + 1 < MAX_COALESCE and (first - 1) in self._pending:
            first -= 1
            del self._pending[first]
        self._in_flight = block
        offset = first * BLOCK_ROWS
        limit = min((last - first + 1) * BLOCK_ROWS, self._row_count - offset)
        fetch = _fetcher(self._fetch, self.order_by, self._filters)
        generation = self._generation
        self._worker = self._workers.submit(
            lambda ctx, o=offset, n=limit: [tuple(r) for r in fetch(o, n)],
            on_result=lambda rows, b=first, g=generation: self._rows_arrived(b, rows, g),
            on_error=lambda exc, b=block, g=generation: self._block_failed(b, exc, g),
            name=f"fetch rows {offset}..{offset + limit}",
        )

    def _rows_arrived(self, first_block: int, rows: list[tuple], generation: int = 0) -> None:
        if self._closed or generation != self._generation:
            return
        self._in_flight = None
        self._worker = None
        self._failed = None
        blocks = [rows[i : i + BLOCK_ROWS] for i in range(0, len(rows), BLOCK_ROWS)] or [[]]
        for n, chunk in enumerate(blocks):
            self._blocks[first_block + n] = chunk
            self._blocks.move_to_end(first_block + n)
        while len(self._blocks) > MAX_BLOCKS:
            self._blocks.popitem(last=False)
        first = first_block * BLOCK_ROWS
        last = min(first + len(rows), self._row_count) - 1
        if last >= first and self.columns:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.columns) - 1))
        for n in range(len(blocks)):
            self.sig_block_loaded.emit(first_block + n)
        self._start_next()

    def _block_failed(self, block: int, exc: BaseException, generation: int = 0) -> None:
        if self._closed or generation != self._generation:
            return
        self._in_flight = None
        self._worker = None
        self._failed = exc
        self._pending.clear()  # do not hammer a relation that is gone; a repaint retries
        self.sig_fetch_failed.emit(exc)

    def cached_range(self, offset: int, limit: int) -> list[tuple] | None:
        """Rows ``offset .. offset+limit`` when all are loaded, else None (UI thread)."""
        limit = max(0, min(limit, self._row_count - offset))
        if limit == 0:
            return []
        first_block, last_block = offset // BLOCK_ROWS, (offset + limit - 1) // BLOCK_ROWS
        rows: list[tuple] = []
        for b in range(first_block, last_block + 1):
            block_rows = self._blocks.get(b)
            if block_rows is None:
                return None
            rows.extend(block_rows)
        start = offset - first_block * BLOCK_ROWS
        return rows[start : start + limit]

    @property
    def fetch(self) -> Callable[[int, int], Sequence[Sequence[Any]]] | None:
        """``fetch(offset, limit)`` in the order shown (thread-safe; call it from a worker)."""
        if self._fetch is None:
            return None
        return _fetcher(self._fetch, self.order_by, self._filters)

    # -- sorting -------------------------------------------------------------------------
    @property
    def order_by(self) -> list[tuple[str, str]] | None:
        """The order shown: ``[(column name, "asc"|"desc")]``, None for the result's own."""
        return list(self._order) or None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column`` (Qt's model API); a negative column restores the own order."""
        if 0 <= column < len(self.columns):
            direction = "desc" if order == Qt.SortOrder.DescendingOrder else "asc"
            self.set_order([(self.columns[column]["name"], direction)])
        else:
            self.set_order([])

    def set_order(self, order_by: list[tuple[str, str]]) -> None:
        """Show the rows in ``order_by`` (``[]``: the result's own order). The blocks held
        are dropped; the rows on screen are fetched again, sorted by DuckDB."""
        order = [(str(name), str(direction).lower()) for name, direction in order_by]
        if order == self._order or self._closed:
            return
        self._order = order
        self._generation += 1
        self._blocks.clear()
        self._pending.clear()
        self._in_flight = None  # a fetch of the old order may still run; its rows are dropped
        self._worker = None
        self._failed = None
        if self._fetch is None:
            self._seed(sorted_rows(self._preview, self.columns, order))
        elif not order and not self._filters:  # the preview is of the unfiltered rows
            self._seed(self._preview)
        # Same rows and columns, other values: a data change, not a layout change (which
        # makes the row header revisit each of millions of sections).
        if self._row_count and self.columns:
            self.dataChanged.emit(
                self.index(0, 0), self.index(self._row_count - 1, len(self.columns) - 1)
            )
        self.sig_order_changed.emit(list(order))

    # -- formats -------------------------------------------------------------------------
    def column_format(self, name: str) -> ColumnFormat:
        """The format the grid shows column ``name`` in (``{}``: its default)."""
        for col, fmt in zip(self.columns, self._formats, strict=True):
            if col["name"] == name:
                return fmt.copy()
        return {}

    def set_column_formats(self, formats: dict[str, ColumnFormat]) -> None:
        """Show the columns named in ``formats`` so (the others as stored); copy and export
        are not changed by a format."""
        empty: ColumnFormat = {}
        self._formats = [(formats.get(c["name"]) or empty).copy() for c in self.columns]
        if self._row_count and self.columns:
            self.dataChanged.emit(
                self.index(0, 0),
                self.index(self._row_count - 1, len(self.columns) - 1),
                [Qt.ItemDataRole.DisplayRole],
            )

    # -- filtering -----------------------------------------------------------------------
    @property
    def filters(self) -> list[dict]:
        """The filters the rows shown pass (``[]``: every row of the result)."""
        return list(self._filters)

    @property
    def total_rows(self) -> int:
        """The rows of the whole result, before any filter."""
        return self._total_rows

    def begin_filter(self, filters: list[dict]) -> int:
        """The caller asks DuckDB for the rows passing ``filters`` (count and first page,
        :meth:`QueryService.filtered_page`) and hands the answer to :meth:`filter_arrived`
        with the token returned here. Until then the rows shown stay and no page is
        fetched; a later filter makes this one's answer stale."""
        self._filter_token += 1
        self._awaiting_filter = True
        self._counting = False
        self._generation += 1  # a page of the old filter still coming is dropped
        self._pending.clear()
        self._in_flight = None
        self._worker = None
        return self._filter_token

    def filter_arrived(
        self,
        token: int,
        filters: list[dict],
        row_count: int,
        first_rows: Sequence[Sequence[Any]],
        order_by: list[tuple[str, str]] | None,
        *,
        counted: bool = True,
    ) -> bool:
        """Show the rows passing ``filters``: ``row_count`` of them, ``first_rows`` the
        first page in ``order_by``. With ``counted`` False the count is not known yet:
        ``row_count`` is the rows at hand, and :meth:`filter_counted` brings the rest
        (the rows show at once; counting millions of them takes longer). False when a
        newer filter was asked for since."""
        if self._closed or token != self._filter_token:
            return False
        self._awaiting_filter = False
        self._counting = not counted
        self.beginResetModel()  # another number of rows: a reset, once per filter
        self._filters = [dict(f) for f in filters]
        self._row_count = int(row_count)
        self._blocks.clear()
        self._failed = None
        if (order_by or None) == self.order_by:  # else the sort changed meanwhile: refetch
            self._seed(first_rows)
        self.endResetModel()
        self.sig_filters_changed.emit(self.filters, -1 if self._counting else self._row_count)
        return True

    def filter_counted(self, token: int, row_count: int) -> None:
        """The count of the filter shown (asked with ``token``) arrived: the rows past
        those at hand are added below them, where the analyst is stays as it is."""
        if self._closed or token != self._filter_token or not self._counting:
            return
        self._counting = False
        if row_count > self._row_count:
            self.beginInsertRows(_ROOT, self._row_count, row_count - 1)
            self._row_count = row_count
            self.endInsertRows()
        self.sig_filters_changed.emit(self.filters, self._row_count)

    @property
    def counting(self) -> bool:
        """The filtered rows are shown and their count is on its way."""
        return self._counting

    def filter_failed(self, token: int) -> None:
        """The filter asked for with ``token`` was refused or cancelled: the rows shown
        (of the filters before it) stay, and pages are fetched again as before."""
        if self._closed or token != self._filter_token:
            return
        self._awaiting_filter = False
        self._start_next()

    @property
    def can_page(self) -> bool:
        return self._fetch is not None

    def close(self) -> None:
        """Stop fetching (the grid shows another result now)."""
        self._closed = True
        self._pending.clear()
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
