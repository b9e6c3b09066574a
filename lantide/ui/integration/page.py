"""Settings > Agent Integration: connect outside agents (Claude Code, Codex, Cursor) to
this Lantide over MCP, and see or revoke the connections.

*Connect a client*: the client, its scope (this workspace or all), its access mode and
how long its token lives. Lantide makes the token (kept in the keyring, only its hash in a
file, :mod:`lantide.mcp.clients`) and shows the exact configuration to paste in that
client's own format, with a Copy button. The list below shows every paired client with
its last use; *Revoke* ends a connection at its next request. Each action applies at once
and runs in a worker; the rules live in :mod:`lantide.mcp`, this page only shows and asks.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.icons import icon
from lantide.ui.theme import colors

CLIENTS = [
    ("claude-code", "Claude Code"),
    ("codex", "Codex"),
    ("cursor", "Cursor"),
    ("other", "Other"),
]
MODES = [
    ("observe", "Observe — read tables, documents and steps; previews only"),
    ("execute", "Execute — also formal queries, SQL tabs, Source Run, annotations"),
    ("admin", "Admin — also project status (never Plan approval)"),
]
EXPIRIES = [("1 day", 1), ("7 days", 7), ("30 days", 30), ("90 days", 90), ("Never", None)]
COLUMNS = ("Client", "Mode", "Scope", "Status", "Expires", "Last used")


def _pair(context, name: str, kind: str, scope: str, mode: str, days):
    from lantide.mcp.clients import ClientStore

    return ClientStore().pair(name, kind=kind, scope=scope, mode=mode, expires_days=days)


def _list(context):
    """The readable clients, and a line for each entry of the file that is not."""
    from lantide.mcp.clients import FIX_HINT, ClientStore

    store = ClientStore()
    problems = [f"{p.message}; it cannot connect. {FIX_HINT}" for p in store.problems()]
    return [c.public() for c in store.clients()], problems


def _revoke(context, client_id: str):
    from lantide.mcp.clients import ClientStore

    return ClientStore().revoke(client_id).public()


def _stored(context, client_id: str):
    from lantide.mcp.clients import stored_token

    return stored_token(client_id)


def _short_time(stamp) -> str:
    if not stamp:
        return "never"
    from lantide.ui.sql.query_history_view import local_time

    return local_time(stamp)


class IntegrationPage(QWidget):
    """The Agent Integration tab of the settings dialog."""

    sig_paired = Signal(object)  # a Pairing: the host starts serving if it was not

    def __init__(self, services, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("IntegrationPage")
        self.services = services
        self.host = getattr(services, "mcp_host", None)
        self.rows: list[dict] = []

        self.state_label = QLabel(self)
        self.state_label.setWordWrap(True)
        self.state_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.client_box = QComboBox(self)
        for kind, label in CLIENTS:
            self.client_box.addItem(label, kind)
        self.name_edit = QLineEdit(self)
        self.name_edit.setPlaceholderText("optional: a name to tell two clients apart")
        self.scope_box = QComboBox(self)
        self.scope_box.addItem(
            f"This workspace ({services.workspace.name})", str(services.workspace.root)
        )
        self.scope_box.addItem("All workspaces", "all")
        self.mode_box = QComboBox(self)
        for mode, label in MODES:
            self.mode_box.addItem(label, mode)
        self.expiry_box = QComboBox(self)
        for label, days in EXPIRIES:
            self.expiry_box.addItem(label, days)
        self.expiry_box.setCurrentIndex(2)
        self.connect_button = QPushButton(icon("add"), "Connect a client", self)
        self.connect_button.clicked.connect(self.connect_client)
        form = QFormLayout()
        form.addRow("Client", self.client_box)
        form.addRow("Name", self.name_edit)
        form.addRow("Scope", self.scope_box)
        form.addRow("Access", self.mode_box)
        form.addRow("Expires", self.expiry_box)
        form.addRow("", self.connect_button)

        self.where_label = QLabel(self)
        self.where_label.setWordWrap(True)
        self.config_view = QPlainTextEdit(self)
        self.config_view.setReadOnly(True)
        self.config_view.setObjectName("McpConfig")
        self.config_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.config_view.setMaximumHeight(170)
        self.config_view.setPlaceholderText("The configuration to paste appears here.")
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_config)
        config_row = QHBoxLayout()
        config_row.addWidget(self.where_label, 1)
        config_row.addWidget(self.copy_button)

        connect_group = QGroupBox("Connect a client", self)
        group_layout = QVBoxLayout(connect_group)
        group_layout.addLayout(form)
        group_layout.addLayout(config_row)
        group_layout.addWidget(self.config_view)

        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.tree.itemSelectionChanged.connect(self._selection_changed)
        self.show_button = QPushButton("Show configuration", self)
        self.show_button.clicked.connect(self.show_selected_config)
        self.revoke_button = QPushButton(icon("delete"), "Revoke", self)
        self.revoke_button.clicked.connect(self.revoke_selected)
        self.refresh_button = QPushButton(icon("refresh"), "", self)
        self.refresh_button.setToolTip("Refresh the list")
        self.refresh_button.clicked.connect(self.refresh)
        buttons = QHBoxLayout()
        buttons.addWidget(QLabel("Connections", self), 1)
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.show_button)
        buttons.addWidget(self.revoke_button)

        self.error_label = QLabel(self)
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {colors().danger.name()};")
        self.error_label.hide()

        layout = QVBoxLayout(self)
        layout.addWidget(self.state_label)
        layout.addWidget(connect_group)
        layout.addLayout(buttons)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.error_label)
        if self.host is not None:
            self.host.sig_state_changed.connect(lambda *_: self._show_state())
            self.sig_paired.connect(lambda _p: self.host.start_if_paired())
        self._show_state()
        self._selection_changed()
        self.refresh()

    # -- state -------------------------------------------------------------------------
    def server_url(self) -> str:
        from lantide.mcp.server import DEFAULT_PORT, MCP_PATH

        if self.host is not None and self.host.url:
            return self.host.url
        return f"http://127.0.0.1:{DEFAULT_PORT}{MCP_PATH}"

    def _show_state(self) -> None:
        muted = colors().muted.name()
        if self.host is not None and self.host.url:
            text = (
                f"Outside agents connect to <b>{self.host.url}</b> while Lantide runs. "
                "Each needs its own token; every call is recorded in the Activity panel."
            )
        elif self.host is not None and self.host.problem and self.host.problem != "stopped":
            text = f"The MCP server is not running: {self.host.problem}"
        else:
            text = (
                "The MCP server starts when a client is connected. Without the app, a "
                "client can run <code>lantide mcp WORKSPACE --stdio</code> instead."
            )
        self.state_label.setText(f"<span style='color:{muted}'>{text}</span>")

    def _error(self, exc: BaseException | str) -> None:
        message = getattr(exc, "message", None) or str(exc)
        hint = getattr(exc, "hint", None)
        self.error_label.setText(message + (f" {hint}" if hint else ""))
        self.error_label.setVisible(bool(message))

    # -- connect -------------------------------------------------------------------------
    def connect_client(self) -> None:
        self._error("")
        self.connect_button.setEnabled(False)
        self.services.workers.submit(
            _pair,
            self.name_edit.text().strip() or self.client_box.currentText(),
            self.client_box.currentData(),
            self.scope_box.currentData(),
            self.mode_box.currentData(),
            self.expiry_box.currentData(),
            on_result=self._paired,
            on_error=self._pair_failed,
            name="pair an MCP client",
        )

    def _paired(self, pairing) -> None:
        self.connect_button.setEnabled(True)
        self.show_config(
            pairing.client.kind,
            pairing.token,
            None if pairing.client.all_workspaces else pairing.client.scope,
        )
        if not pairing.in_keyring:
            self._error(
                "No system keyring: copy the configuration now, Lantide cannot show "
                "this token again."
            )
        self.sig_paired.emit(pairing)
        self.refresh()

    def _pair_failed(self, exc: BaseException) -> None:
        self.connect_button.setEnabled(True)
        self._error(exc)

    def show_config(self, kind: str, token: str, workspace: str | None) -> None:
        from lantide.mcp.client_config import client_config

        config = client_config(kind, token, self.server_url(), workspace)
        self.where_label.setText(f"Paste into {config.where}:")
        self.config_view.setPlainText(config.text)
        self.copy_button.setEnabled(True)

    def copy_config(self) -> None:
        QGuiApplication.clipboard().setText(self.config_view.toPlainText())
        self.copy_button.setText("Copied")

    # -- connections ---------------------------------------------------------------------
    def refresh(self) -> None:
        self.services.workers.submit(
            _list, on_result=self._fill, on_error=self._error, name="list MCP clients"
        )

    def _fill(self, listing: tuple[list[dict], list[str]]) -> None:
        rows, problems = listing
        if problems:  # the other clients are listed and keep working
            self._error("\n".join(problems))
        self.rows = rows
        theme = colors()
        self.tree.clear()
        for row in rows:
            scope = "all workspaces" if row["scope"] == "all" else row["scope"]
            item = QTreeWidgetItem(
                [
                    row["name"],
                    row["mode"].capitalize(),
                    scope,
                    row["status"],
                    _short_time(row.get("expires_at")),
                    _short_time(row.get("last_used_at")),
                ]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, row["id"])
            if row["status"] != "active":
                for column in range(len(COLUMNS)):
                    item.setForeground(column, theme.muted)
            self.tree.addTopLevelItem(item)
        self._selection_changed()

    def selected(self) -> dict | None:
        item = self.tree.currentItem()
        if item is None or not item.isSelected():
            return None
        wanted = item.data(0, Qt.ItemDataRole.UserRole)
        return next((r for r in self.rows if r["id"] == wanted), None)

    def _selection_changed(self) -> None:
        row = self.selected()
        active = row is not None and row["status"] == "active"
        self.revoke_button.setEnabled(active)
        self.show_button.setEnabled(active)

    def revoke_selected(self) -> None:
        row = self.selected()
        if row is None:
            return
        self.services.workers.submit(
            _revoke,
            row["id"],
            on_result=lambda _r: self.refresh(),
            on_error=self._error,
            name="revoke an MCP client",
        )

    def show_selected_config(self) -> None:
        row = self.selected()
        if row is None:
            return

        def shown(token) -> None:
            if not token:
                self._error(
                    "This client's token is not in the keyring (it was shown once). "
                    "Revoke it and connect the client again."
                )
                return
            self.show_config(row["kind"], token, None if row["scope"] == "all" else row["scope"])

        self.services.workers.submit(
            _stored, row["id"], on_result=shown, on_error=self._error, name="read an MCP token"
        )
