"""The query history: what the analyst ran from SQL tabs (the whole tab, a selection, a
Source Run), newest first, with its status, rows and time, filterable by SQL, tab or status.
Entries come from ``.lantide/query_history.jsonl`` (:mod:`lantide.query.history`) and live
from ``AppServices.sig_query_ran``; double-click opens the tab that ran it.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.sql.sql_highlighter import sql_to_html
from lantide.ui.theme import colors


def _read_history(workspace) -> list[dict]:
    # imported in the worker: the history module pulls in Source Run, lineage and the
    # guard, which the window does not need to show (it is built at start-up)
    from lantide.query.history import read_history

    return read_history(workspace)


HISTORY_COLUMNS = ("Time", "Where", "Status", "Rows", "ms", "SQL")
STATUS_WORDS = {"ok": "ok", "cancelled": "cancelled by you"}  # else words, then the code
STATUS_MESSAGE_CHARS = 60
ROLE_INDEX = Qt.ItemDataRole.UserRole + 1


def local_time(stamp: str | None) -> str:
    """``2026-11-30T10:00:00Z`` as local ``10:00:00`` (with the date when not today)."""
    if not stamp:
        return ""
    text = stamp.rstrip("Z").split(".")[0]
    try:
        moment = datetime.fromisoformat(text).replace(tzinfo=UTC).astimezone()
    except ValueError:
        return stamp
    today = datetime.now().astimezone().date()
    return moment.strftime("%H:%M:%S" if moment.date() == today else "%d %b %H:%M")


def status_text(status: str, entry: dict) -> str:
    """A failed run in words first ("error: the column x does not exist"), its code after
    in brackets: the code alone tells the analyst nothing."""
    message = " ".join(str(entry.get("message") or "").split())
    if len(message) > STATUS_MESSAGE_CHARS:
        message = message[: STATUS_MESSAGE_CHARS - 1] + "…"
    code = entry.get("error")
    words = f"{status}: {message}" if message else f"{status}"
    return f"{words} ({code})" if code else words


def first_line(sql: str | None) -> str:
    for line in (sql or "").splitlines():
        if line.strip() and not line.strip().startswith("--"):
            return line.strip()
    return (sql or "").strip()


class QueryHistoryView(QWidget):
    def __init__(self, services, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.history: list[dict] = []
        self.history_filter = QLineEdit(self)
        self.history_filter.setPlaceholderText("Filter by SQL, tab or status…")
        self.history_filter.setClearButtonEnabled(True)
        self.history_filter.textChanged.connect(self._fill_history)
        self.history_tree = QTreeWidget(self)
        self.history_tree.setHeaderLabels(list(HISTORY_COLUMNS))
        self.history_tree.setAccessibleName("Query history")
        self.history_tree.setRootIsDecorated(False)
        self.history_tree.setUniformRowHeights(True)
        self.history_tree.setAlternatingRowColors(True)
        self.history_tree.currentItemChanged.connect(self._history_selected)
        self.history_tree.header().setStretchLastSection(True)
        self.history_tree.itemDoubleClicked.connect(self._history_open)
        self.history_details = QTextBrowser(self)
        history_split = QSplitter(Qt.Orientation.Horizontal, self)
        history_split.addWidget(self.history_tree)
        history_split.addWidget(self.history_details)
        history_split.setSizes([640, 360])
        history_layout = QVBoxLayout(self)
        history_layout.setContentsMargins(0, 4, 0, 0)
        history_layout.setSpacing(2)
        filter_row = QHBoxLayout()
        filter_row.setContentsMargins(6, 0, 6, 0)
        filter_row.addWidget(self.history_filter)
        history_layout.addLayout(filter_row)
        history_layout.addWidget(history_split, 1)

        services.sig_query_ran.connect(self._query_ran)
        self._load_history()

    def _load_history(self) -> None:
        workspace = self.services.workspace

        def shown(entries) -> None:
            self.history = entries + [e for e in self.history if e not in entries]
            self._fill_history()

        self.services.workers.submit(
            lambda _ctx: _read_history(workspace),
            on_result=shown,
            on_error=lambda exc: None,
            name="read query history",
        )

    def _query_ran(self, entry: dict) -> None:
        self.history.append(entry)
        self._fill_history()

    def _fill_history(self, *_):
        needle = self.history_filter.text().strip().lower()
        theme = colors()
        self.history_tree.clear()
        for index in range(len(self.history) - 1, -1, -1):  # newest first
            entry = self.history[index]
            where = "/".join(x for x in (entry.get("project"), entry.get("tab")) if x) or entry.get(
                "source", ""
            )
            if entry.get("source") in ("selection", "source_run"):
                where += f" ({entry['source'].replace('_', ' ')})"
            status = entry.get("status", "")
            rows = entry.get("row_count")
            values = [
                local_time(entry.get("at")),
                where,
                STATUS_WORDS.get(status) or status_text(status, entry),
                f"{rows:,}" if isinstance(rows, int) else "",
                f"{entry['duration_ms']:,}" if isinstance(entry.get("duration_ms"), int) else "",
                first_line(entry.get("sql")),
            ]
            if needle and needle not in " ".join(values + [entry.get("sql") or ""]).lower():
                continue
            item = QTreeWidgetItem(self.history_tree, values)
            item.setData(0, ROLE_INDEX, index)
            if entry.get("message"):
                item.setToolTip(2, str(entry["message"]))
            if status != "ok":
                color = theme.muted if status == "cancelled" else theme.danger
                item.setForeground(2, QBrush(color))
            for col in (3, 4):
                item.setTextAlignment(
                    col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
        for col in range(len(HISTORY_COLUMNS) - 1):
            self.history_tree.resizeColumnToContents(col)

    def _history_entry(self, item) -> dict | None:
        if item is None:
            return None
        index = item.data(0, ROLE_INDEX)
        return self.history[index] if isinstance(index, int) and index < len(self.history) else None

    def _history_selected(self, current, _previous=None) -> None:
        entry = self._history_entry(current)
        if entry is None:
            self.history_details.clear()
            return
        theme = colors()
        parts = [sql_to_html(entry.get("sql") or "", dark=theme.dark)]
        if entry.get("message"):
            color = theme.muted if entry.get("status") == "cancelled" else theme.danger
            parts.append(f"<p style='color:{color.name()}'>{html.escape(entry['message'])}</p>")
        self.history_details.setHtml("".join(parts))

    def _history_open(self, item, _column: int = 0) -> None:
        entry = self._history_entry(item)
        if entry and entry.get("project") and entry.get("tab"):
            self.services.request_open("sql", entry["project"], entry["tab"])
