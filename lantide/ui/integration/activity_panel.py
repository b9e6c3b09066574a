"""The Activity panel, beside the ledger: what outside agents (MCP clients) did in this
workspace, newest first, from ``.lantide/activity/*.jsonl``.

Each line: time, client, mode, tool, the outcome (an error names its code, a refusal the
mode it needed), the ledger steps it wrote, and its arguments (secrets were removed when
the line was written). It reloads when a call is recorded by the app's own MCP server and
when the activity folder changes on disk (a ``lantide mcp --stdio`` beside the app).
"""

from __future__ import annotations

import json

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.icons import icon
from lantide.ui.theme import colors

COLUMNS = ("Time", "Client", "Mode", "Tool", "Result", "Steps", "Arguments")
SHOWN = 500
ARGUMENT_CHARS = 160


def _read(context, root):
    from lantide.workspace.activity import read_activity

    return read_activity(root, limit=SHOWN)


def outcome_text(entry: dict) -> str:
    if entry.get("ok"):
        return "ok"
    error = entry.get("error") or {}
    if error.get("required_mode"):
        return f"refused: needs {error['required_mode']}"
    # words first, the code after (a code alone tells the analyst nothing)
    message = " ".join(str(error.get("message") or "").split())
    code = error.get("error")
    if message:
        return f"error: {message} ({code})" if code else f"error: {message}"
    return f"error: {code or 'failed'}"


def arguments_text(entry: dict) -> str:
    args = entry.get("arguments") or {}
    text = (
        args.get("sql")
        if isinstance(args.get("sql"), str)
        else json.dumps(args, ensure_ascii=False)
        if args
        else ""
    )
    text = " ".join(str(text).split())
    return text if len(text) <= ARGUMENT_CHARS else text[: ARGUMENT_CHARS - 1] + "…"


class ActivityPanel(QWidget):
    def __init__(self, services, host=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ActivityPanel")
        self.services = services
        self.entries: list[dict] = []
        self.status = QLabel(self)
        self.status.setStyleSheet(f"color: {colors().muted.name()};")
        self.refresh_button = QPushButton(icon("refresh"), "", self)
        self.refresh_button.setToolTip("Reload the activity")
        self.refresh_button.clicked.connect(self.reload)
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.refresh_button)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        # calls come in bursts: one reload for a burst
        self._reload_timer = QTimer(self, singleShot=True, interval=150)
        self._reload_timer.timeout.connect(self.reload)
        if host is not None:
            host.sig_call_recorded.connect(lambda *_: self._reload_timer.start())
        services.sig_files_changed.connect(self._files_changed)
        self.reload()

    def _files_changed(self, changes) -> None:
        if any(
            "/.lantide/activity/" in str(getattr(c, "path", "")).replace("\\", "/") for c in changes
        ):
            self._reload_timer.start()

    def reload(self) -> None:
        self.services.workers.submit(
            _read,
            self.services.workspace.root,
            on_result=self._fill,
            on_error=lambda exc: self.status.setText(f"The activity cannot be read: {exc}"),
            name="read MCP activity",
        )

    def _fill(self, entries: list[dict]) -> None:
        from lantide.ui.sql.query_history_view import local_time

        self.entries = list(reversed(entries))
        theme = colors()
        self.tree.clear()
        for entry in self.entries:
            item = QTreeWidgetItem(
                [
                    local_time(entry.get("at")),
                    str(entry.get("client_name") or entry.get("client")),
                    str(entry.get("mode", "")).capitalize(),
                    str(entry.get("tool", "")),
                    outcome_text(entry),
                    ", ".join(entry.get("step_ids") or []),
                    arguments_text(entry),
                ]
            )
            item.setToolTip(
                len(COLUMNS) - 1,
                json.dumps(entry.get("arguments") or {}, ensure_ascii=False, indent=1)[:2000],
            )
            if not entry.get("ok"):
                item.setForeground(4, theme.danger)
            self.tree.addTopLevelItem(item)
        clients = {e.get("client") for e in entries}
        self.status.setText(
            f"{len(entries)} call{'s' if len(entries) != 1 else ''} by {len(clients)} outside "
            f"agent{'s' if len(clients) != 1 else ''}"
            if entries
            else "No outside agent has worked in this workspace yet. Connect one in Settings > "
            "Agent Integration."
        )
        self.tree.setEnabled(bool(entries))
