"""The explorer's tables open to their columns, and a column's profile shows on hover.

- A data file, sheet, cached table or connection table shows an expand arrow; expanding it
  asks the query layer for its columns (``QueryService.table_columns``) in a worker and
  lists them with their types. A table that cannot be described (an unreachable
  connection) gets one row saying why. Answers are kept until the tables are listed again,
  so a rebuild of the tree shows them at once (and an open table is asked again quietly).
- Resting the mouse on a column asks for its summary (``QueryService.column_profile``:
  nulls, distinct, min/max, counted in DuckDB and kept there per table fingerprint) after
  a short pause; moving to another row or out of the tree cancels a scan still running,
  so a large file never holds anything up. The summary becomes the row's tooltip.
- Tables and columns can be dragged (:class:`ExplorerTree`): the drop carries the name as
  the query layer quoted it (:mod:`lantide.ui.drag_names`), which the SQL editor inserts.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtWidgets import QToolTip, QTreeWidget, QTreeWidgetItem

from lantide.ui.drag_names import sql_name_mime
from lantide.ui.icons import icon
from lantide.ui.sql.query_jobs import submit_query
from lantide.ui.tree_items import child_items, top_level_items

log = logging.getLogger(__name__)

ROLE_NODE = Qt.ItemDataRole.UserRole + 1  # the explorer's node dict (same role)
COLUMN = "column"
HOVER_DELAY_MS = 300  # a row the mouse only passes over is not profiled
LOADING = "Loading columns…"


TIP_VALUE_CHARS = 60  # a long min or max text is cut in the tooltip (the browser shows it)


def _format(value: object) -> str:
    from lantide.ui.sql.result_model import format_value

    text = " ⏎ ".join(format_value(value).splitlines())
    return text if len(text) <= TIP_VALUE_CHARS else text[: TIP_VALUE_CHARS - 1] + "…"


def summary_text(summary: dict[str, Any]) -> str:
    """A column's summary as the tooltip shows it."""
    rows = int(summary.get("row_count") or 0)
    nulls = int(summary.get("null_count") or 0)
    fraction = float(summary.get("null_fraction") or 0.0)
    distinct = f"{int(summary.get('distinct_count') or 0):,}"
    if not summary.get("distinct_exact", True):
        distinct = f"≈ {distinct}"
    lines = [
        f"{summary.get('name')} · {str(summary.get('type') or '').lower()}",
        f"{rows:,} rows · nulls {nulls:,} ({fraction:.1%}) · distinct {distinct}",
    ]
    if summary.get("min") is not None or summary.get("max") is not None:
        lines.append(f"min {_format(summary.get('min'))} · max {_format(summary.get('max'))}")
    return "\n".join(lines)


class ExplorerTree(QTreeWidget):
    """The explorer's tree; a table or column row drags its quoted name."""

    # The mouse left the rows' area. Told here rather than by an event filter on the
    # viewport: asking PySide6 for the viewport (a class it does not wrap) made it build
    # the Python types of every QtWidgets class it might be, ~70 enum types, 3-17 ms of
    # the window's build before its first paint.
    sig_left = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setDragEnabled(True)
        self.setDragDropMode(QTreeWidget.DragDropMode.DragOnly)

    def viewportEvent(self, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Leave:
            self.sig_left.emit()
        return super().viewportEvent(event)

    def mimeData(self, items):  # noqa: N802
        for item in items:
            node = item.data(0, ROLE_NODE) or {}
            if node.get("sql_name"):
                return sql_name_mime(node["sql_name"])
        return super().mimeData(items)


def make_draggable(item: QTreeWidgetItem, draggable: bool) -> None:
    flags = item.flags() & ~Qt.ItemFlag.ItemIsDropEnabled
    if draggable:
        flags |= Qt.ItemFlag.ItemIsDragEnabled
    else:
        flags &= ~Qt.ItemFlag.ItemIsDragEnabled
    item.setFlags(flags)


class ExplorerColumns(QObject):
    """Columns under the tables of one explorer tree, and their hover summaries."""

    sig_columns_shown = Signal(str)  # the table (as listed) whose columns are now shown
    sig_summary_shown = Signal(str, str)  # table, column: its summary is the tooltip now

    def __init__(self, tree: ExplorerTree, services, palette_source) -> None:
        super().__init__(tree)
        self.tree = tree
        self.services = services
        self._palette_source = palette_source
        self._columns: dict[str, dict[str, Any]] = {}  # table -> table_columns answer
        self._stale: set[str] = set()
        self._remote: set[str] = set()  # tables of a connection: asked again on Refresh only
        self._loading: set[str] = set()
        self._summaries: dict[tuple[str, str], dict[str, Any]] = {}
        self._hover: tuple[str, str] | None = None
        self._profile_worker = None
        self._profile_key: tuple[str, str] | None = None
        self._hover_timer = QTimer(self, singleShot=True, interval=HOVER_DELAY_MS)
        self._hover_timer.timeout.connect(self._profile_hovered)
        tree.setMouseTracking(True)
        tree.itemExpanded.connect(self._expanded)
        tree.itemEntered.connect(self._entered)
        tree.viewportEntered.connect(self.leave)
        tree.sig_left.connect(self.leave)

    # -- columns ----------------------------------------------------------------------
    def tables_listed_again(self, *, remote_too: bool = False) -> None:
        """The tables were listed anew (after every run): local tables' columns may be out
        of date. A connection's are asked again only when ``remote_too`` (the explorer's
        Refresh): each ask is a connection to the server."""
        self._stale |= {t for t in self._columns if remote_too or t not in self._remote}
        self._summaries.clear()

    def attach(self, item: QTreeWidgetItem, table: str, *, remote: bool = False) -> None:
        """``item`` stands for ``table``: it opens to the columns (known ones at once)."""
        if remote:
            self._remote.add(table)
        item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
        answer = self._columns.get(table)
        if answer is not None:
            self._fill(item, answer)

    def columns_of(self, table: str) -> dict[str, Any] | None:
        return self._columns.get(table)

    def _expanded(self, item: QTreeWidgetItem) -> None:
        node = item.data(0, ROLE_NODE) or {}
        table = node.get("columns_of")
        if not table:
            return
        if table not in self._columns:
            if item.childCount() == 0:
                self._row(item, LOADING, "", None, disabled=True)
            self._fetch(table)
        elif table in self._stale:
            self._fetch(table)

    def _fetch(self, table: str) -> None:
        if table in self._loading or self.services.query is None:
            return
        self._loading.add(table)
        submit_query(
            self.services,
            lambda _ctx, q: q.table_columns(table),
            label=f"columns of {table}",
            track=False,
            on_result=lambda answer: self._fetched(table, answer),
            on_error=lambda exc: self._fetched(table, _problem(table, exc)),
            on_finished=lambda: self._loading.discard(table),
        )

    def _fetched(self, table: str, answer: dict[str, Any]) -> None:
        self._columns[table] = answer
        self._stale.discard(table)
        for item in self._items_of(table):
            self._fill(item, answer)
        self.sig_columns_shown.emit(table)

    def table_item(self, table: str) -> QTreeWidgetItem | None:
        """The row of ``table`` (as listed, quoted), if the tree shows it."""
        found = self._items_of(table)
        return found[0] if found else None

    def column_item(self, table: str, column: str) -> QTreeWidgetItem | None:
        rows = self._column_rows((table, column))
        return rows[0] if rows else None

    def _items_of(self, table: str) -> list[QTreeWidgetItem]:
        found = []
        stack = top_level_items(self.tree)
        while stack:
            item = stack.pop()
            if (item.data(0, ROLE_NODE) or {}).get("columns_of") == table:
                found.append(item)
            stack.extend(child_items(item))
        return found

    def _fill(self, item: QTreeWidgetItem, answer: dict[str, Any]) -> None:
        table = (item.data(0, ROLE_NODE) or {}).get("columns_of", "")
        for child in child_items(item):
            item.removeChild(child)
        problem = answer.get("problem")
        if problem:
            row = self._row(item, f"Columns unavailable: {problem.get('message', '')}", "", None)
            row.setIcon(0, icon("warning"))
            said = (problem.get("message"), problem.get("hint"))
            row.setToolTip(0, "\n".join(str(t) for t in said if t))
            return
        if not answer.get("columns"):
            self._row(item, "no columns", "", None, disabled=True)
            return
        for column in answer["columns"]:
            self._row(
                item,
                column["name"],
                str(column.get("type") or "").lower(),
                {
                    "kind": COLUMN,
                    "table": table,
                    "name": column["name"],
                    "sql_name": column.get("sql_name"),
                    "type": column.get("type"),
                },
                tooltip=self._tooltip(table, column),
            )

    def _tooltip(self, table: str, column: dict[str, Any]) -> str:
        summary = self._summaries.get((table, column["name"]))
        if summary is not None:
            return summary_text(summary)
        return (
            f"{column['name']} · {str(column.get('type') or '').lower()}\n"
            "Rest the mouse here for its profile; drag it into the SQL editor."
        )

    def _row(
        self,
        parent: QTreeWidgetItem,
        label: str,
        detail: str,
        node: dict | None,
        *,
        disabled: bool = False,
        tooltip: str | None = None,
    ) -> QTreeWidgetItem:
        row = QTreeWidgetItem(parent, [label, detail])
        row.setData(0, ROLE_NODE, node or {"kind": "note"})
        row.setForeground(1, self._palette_source.palette().placeholderText())
        if node is not None:
            row.setIcon(0, icon("column"))
        make_draggable(row, bool(node and node.get("sql_name")))
        if disabled:
            row.setDisabled(True)
        if tooltip:
            row.setToolTip(0, tooltip)
        return row

    # -- hover summaries ----------------------------------------------------------------
    def _entered(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        node = item.data(0, ROLE_NODE) or {}
        if node.get("kind") != COLUMN:
            self.leave()
            return
        key = (node["table"], node["name"])
        if key == self._hover:
            return
        self.leave()
        self._hover = key
        if key not in self._summaries:
            self._hover_timer.start()

    def hover(self, item: QTreeWidgetItem) -> None:
        """Profile ``item``'s column now, as a rest of the mouse on it does."""
        self._entered(item)
        if self._hover_timer.isActive():
            self._hover_timer.stop()
            self._profile_hovered()

    def leave(self) -> None:
        """The mouse left the column: a summary still being counted is abandoned."""
        if self._hover is not None and QToolTip.isVisible():
            QToolTip.hideText()
        self._hover = None
        self._hover_timer.stop()
        if self._profile_worker is not None:
            self._profile_worker.cancel()
            self._profile_worker = None
            self._profile_key = None

    def profile_pending(self) -> tuple[str, str] | None:
        """The column whose summary is being counted now, if any."""
        return self._profile_key

    def summary_of(self, table: str, column: str) -> dict[str, Any] | None:
        return self._summaries.get((table, column))

    def _profile_hovered(self) -> None:
        key = self._hover
        if key is None or key in self._summaries or self.services.query is None:
            return
        table, column = key
        self._profile_key = key

        def done(summary: dict[str, Any]) -> None:
            self._summaries[key] = summary
            self._show_summary(key, summary)

        def finished() -> None:
            if self._profile_key == key:
                self._profile_worker = None
                self._profile_key = None

        self._profile_worker = submit_query(
            self.services,
            lambda _ctx, q: q.column_profile(table, column),
            label=f"profile of {column}",
            track=False,
            on_result=done,
            on_error=lambda exc: self._profile_failed(key, exc),
            on_finished=finished,
        )

    def _show_summary(self, key: tuple[str, str], summary: dict[str, Any]) -> None:
        text = summary_text(summary)
        for row in self._column_rows(key):
            row.setToolTip(0, text)
        self.sig_summary_shown.emit(*key)
        if self._hover == key:
            self.show_tip(*key)

    def show_tip(self, table: str, column: str) -> None:
        """Show the column's tooltip beside its row (where the mouse rests on it)."""
        rows = self._column_rows((table, column))
        if not rows or not self.tree.isVisible():
            return
        rect = self.tree.visualItemRect(rows[0])
        where = self.tree.viewport().mapToGlobal(rect.bottomLeft() + QPoint(24, 2))
        # tied to the row: it goes when the mouse leaves the row
        QToolTip.showText(where, rows[0].toolTip(0), self.tree.viewport(), rect)

    def _profile_failed(self, key: tuple[str, str], exc: BaseException) -> None:
        if getattr(exc, "code", "") == "QUERY_CANCELLED":
            return  # the mouse moved on
        message = getattr(exc, "message", None) or str(exc)
        for row in self._column_rows(key):
            row.setToolTip(0, f"{key[1]}: no profile ({message})")

    def _column_rows(self, key: tuple[str, str]) -> list[QTreeWidgetItem]:
        rows = []
        for item in self._items_of(key[0]):
            for child in child_items(item):
                node = child.data(0, ROLE_NODE) or {}
                if node.get("kind") == COLUMN and node.get("name") == key[1]:
                    rows.append(child)
        return rows


def _problem(table: str, exc: BaseException) -> dict[str, Any]:
    return {
        "table": table,
        "columns": [],
        "problem": {
            "code": getattr(exc, "code", "ERROR"),
            "message": getattr(exc, "message", None) or str(exc),
            "hint": getattr(exc, "hint", None),
        },
    }
