"""Settings > Connections: the open workspace's external databases (ODBC).

Unlike the rest of the settings (the user's, saved on *OK*), connections belong to the
workspace (``.lantide/workspace.json``) and each action applies at once: *Save* adds or
replaces the entry (its password goes to the system keyring, never to a file), *Remove*
drops it and its password, *Test* connects and counts the tables. Every action runs in a
worker through :mod:`lantide.query.connections`, which holds the rules; this page only
shows and asks.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from lantide.query.odbc_strings import dialect_for_driver
from lantide.ui.icons import icon
from lantide.ui.settings.connection_fields import ConnectionFieldsWidget
from lantide.ui.theme import colors

if TYPE_CHECKING:
    from lantide.query.connections import ConnectionEntry, ConnectionTest


def _read(context, workspace) -> dict:
    from lantide.query.connections import list_connections, odbc_drivers

    return {"connections": list_connections(workspace), "drivers": odbc_drivers()}


def _save(context, workspace, original: str | None, values: dict) -> ConnectionEntry:
    from lantide.query.connections import add_connection, edit_connection

    args = (values["name"], values["connection_string"])
    kwargs = {
        "dialect": values["dialect"],
        "user": values["user"] or None,
        "password": values["password"] or None,
    }
    if original is None:
        return add_connection(workspace, *args, replace=False, **kwargs)
    return edit_connection(workspace, original, *args, **kwargs)


def _remove(context, workspace, name: str) -> dict:
    from lantide.query.connections import remove_connection

    return remove_connection(workspace, name)


def _test(context, workspace, name: str) -> ConnectionTest:
    from lantide.query.connections import test_connection

    return test_connection(workspace, name)


DEFAULT_DRIVER = "ODBC Driver 18 for SQL Server"  # when no driver is registered at all


class ConnectionsPage(QWidget):
    """The Connections tab of the settings dialog."""

    sig_connections_changed = Signal()

    def __init__(self, services, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ConnectionsPage")
        self.services = services
        self.rows: list[dict] = []
        self.installed_drivers: list[str] = []  # registered on this machine (read in a worker)
        self._busy = False
        self.list = QListWidget(self)
        self.list.setMaximumWidth(200)
        self.list.currentTextChanged.connect(self._selected)
        self.new_button = QPushButton(icon("add"), "New", self)
        self.new_button.clicked.connect(self.new_connection)
        self.remove_button = QPushButton(icon("delete"), "Remove", self)
        self.remove_button.clicked.connect(self.remove_connection)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        row = QHBoxLayout()
        row.addWidget(self.new_button)
        row.addWidget(self.remove_button)
        left.addLayout(row)

        self.name_edit = QLineEdit(self)
        self.name_edit.setPlaceholderText("how queries name it: NAME.schema.table")
        self.string_edit = QLineEdit(self)
        self.string_edit.setPlaceholderText(
            "Driver={ODBC Driver 18 for SQL Server};Server=host;Database=db  (no password)"
        )
        self.dialect_combo = QComboBox(self)
        self.dialect_combo.setEditable(True)
        from lantide.query.connections import COMMON_DIALECTS

        self.dialect_combo.addItems(COMMON_DIALECTS)
        self.dialect_combo.setToolTip("The SQL the database speaks: tsql for SQL Server")
        # Host, port and database write the string; a string typed by hand fills them.
        self.fields = ConnectionFieldsWidget(self)
        self.fields.sig_string_built.connect(self.string_edit.setText)
        self.fields.sig_string_built.connect(lambda _t: self.string_edit.setCursorPosition(0))
        self.fields.sig_dialect_suggested.connect(self.dialect_combo.setCurrentText)
        self.string_edit.textEdited.connect(self.fields.show_string)
        self.user_edit = QLineEdit(self)
        self.password_edit = QLineEdit(self)
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.save_button = QPushButton(icon("save"), "Save", self)
        self.save_button.clicked.connect(self.save_connection)
        self.test_button = QPushButton(icon("refresh"), "Test", self)
        self.test_button.clicked.connect(self.test_connection)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        self.result_label = QLabel(self)
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.drivers_label = QLabel(self)
        self.drivers_label.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Driver", self.fields.driver_combo)
        form.addRow("Host", self.fields)
        form.addRow("Connection string", self.string_edit)
        form.addRow("Dialect", self.dialect_combo)
        form.addRow("User", self.user_edit)
        form.addRow("Password", self.password_edit)
        form.addRow("", buttons)
        form.addRow("", self.result_label)
        form.addRow(self.drivers_label)
        intro = QLabel(
            "Connections belong to this workspace; changes apply at once. Queries "
            "run on the source and land as local cached tables.",
            self,
        )
        intro.setWordWrap(True)
        form.insertRow(0, intro)
        layout = QHBoxLayout(self)
        layout.addLayout(left)
        layout.addLayout(form, 1)
        self._current: str | None = None
        self.reload()

    # -- reading ---------------------------------------------------------------------------
    def reload(self, select: str | None = None, message: str | None = None) -> None:
        """Re-read the list; select ``select``; then show ``message`` (an action's outcome)."""
        self._run(
            _read,
            self.services.workspace,
            then=lambda r: self._fill(r, select, message),
            what="Reading the connections",
        )

    def _fill(self, read: dict, select: str | None, message: str | None = None) -> None:
        self.rows = read["connections"]
        drivers = read["drivers"]
        self.installed_drivers = list(drivers)
        self.fields.add_installed_drivers(drivers)
        self.drivers_label.setText(
            "ODBC drivers on this machine: " + ", ".join(drivers)
            if drivers
            else "No ODBC driver is registered on this machine: install unixODBC and the "
            "database's driver (e.g. Microsoft's ODBC Driver 18 for SQL Server)."
        )
        names = [r["name"] for r in self.rows]
        self.list.blockSignals(True)
        self.list.clear()
        self.list.addItems(names)
        self.list.blockSignals(False)
        target = (
            select
            if select in names
            else (self._current if self._current in names else (names[0] if names else None))
        )
        if target is None:
            self.new_connection()
        else:
            self.list.setCurrentRow(names.index(target))
            self._selected(target)
        if message:
            self._show(True, message)

    def _row(self, name: str | None) -> dict | None:
        return next((r for r in self.rows if r["name"] == name), None)

    def _selected(self, name: str) -> None:
        row = self._row(name)
        if row is None:
            return
        self._current = name
        self.name_edit.setText(row["name"])
        self.string_edit.setText(row["connection_string"])
        self.string_edit.setCursorPosition(0)  # show where it starts: the driver
        self.fields.show_string(row["connection_string"])
        self.dialect_combo.setCurrentText(row["dialect"])
        self.user_edit.setText(row["user"] or "")
        self.password_edit.clear()
        self.password_edit.setPlaceholderText(
            {
                "keyring": "stored in the system keyring (type to replace)",
                "environment": f"taken from {row['password_env']}",
                "none": "none stored",
            }[row["password"]]
        )
        self.remove_button.setEnabled(True)
        self.test_button.setEnabled(True)
        self.result_label.clear()

    def new_connection(self) -> None:
        self._current = None
        self.list.clearSelection()
        for w in (self.name_edit, self.string_edit, self.user_edit, self.password_edit):
            w.clear()
        # a driver this machine has, not one it would fail to load
        driver = self.installed_drivers[0] if self.installed_drivers else DEFAULT_DRIVER
        self.fields.clear(driver)
        self.dialect_combo.setCurrentText(dialect_for_driver(driver) or "tsql")
        self.password_edit.setPlaceholderText("stored in the system keyring")
        self.remove_button.setEnabled(False)
        self.test_button.setEnabled(False)
        self.name_edit.setFocus()

    # -- actions ---------------------------------------------------------------------------
    def values(self) -> dict:
        return {
            "name": self.name_edit.text().strip(),
            "connection_string": self.string_edit.text().strip(),
            "dialect": self.dialect_combo.currentText().strip(),
            "user": self.user_edit.text().strip(),
            "password": self.password_edit.text(),
        }

    def save_connection(self) -> None:
        values = self.values()
        if not values["name"] or not values["connection_string"]:
            self._show(False, "Enter a name and a connection string.")
            return
        self._run(
            _save,
            self.services.workspace,
            self._current,
            values,
            then=lambda entry: self._changed(entry["name"], "Saved."),
            what="Saving the connection",
        )

    def remove_connection(self) -> None:
        if self._current:
            self._run(
                _remove,
                self.services.workspace,
                self._current,
                then=lambda entry: self._changed(None, f"Removed {entry['name']!r}."),
                what="Removing the connection",
            )

    def test_connection(self) -> None:
        if self._current:
            self._show(None, f"Connecting to {self._current}…")
            self._run(
                _test,
                self.services.workspace,
                self._current,
                then=self._tested,
                what="Testing the connection",
            )

    def _tested(self, report: dict) -> None:
        sample = ", ".join(report["sample"]) + (
            " …" if report["tables"] > len(report["sample"]) else ""
        )
        self._show(
            True,
            f"Connected in {report['seconds']:.2f} s: {report['tables']} tables"
            + (f"<br>{html.escape(sample, quote=False)}" if sample else ""),
            escape=False,
        )

    def _changed(self, select: str | None, message: str) -> None:
        self.reload(select, message)
        self.sig_connections_changed.emit()

    def _run(self, fn, *args, then, what: str) -> None:
        self._set_busy(True)

        # The buttons come back with the answer, not a queued event later: a click right
        # after "Saved." showed would otherwise land on a still-disabled button.
        def done(result) -> None:
            self._set_busy(False)
            then(result)

        def failed(exc: BaseException) -> None:
            self._set_busy(False)
            message = getattr(exc, "message", None) or str(exc)
            hint = getattr(exc, "hint", None)
            self._show(False, message + (f" — {hint}" if hint else ""))

        self.services.workers.submit(
            fn,
            *args,
            on_result=done,
            on_error=failed,
            on_finished=lambda: self._set_busy(False),
            name=what,
        )

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        for w in (self.save_button, self.new_button):
            w.setEnabled(not busy)
        for w in (self.test_button, self.remove_button):
            w.setEnabled(not busy and self._current is not None)

    def _show(self, ok: bool | None, text: str, escape: bool = True) -> None:
        theme = colors()
        body = html.escape(text, quote=False) if escape else text
        if ok is None:
            self.result_label.setText(body)
            return
        colour = (theme.success if ok else theme.danger).name()
        self.result_label.setText(
            f"<span style='color:{colour}'>{'✓' if ok else '✗'}</span> {body}"
        )
