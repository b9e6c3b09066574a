"""Driver, host, port and database fields that write a connection's ODBC string for the
common drivers (SQL Server, PostgreSQL, MySQL/MariaDB), and are filled back from a string
typed by hand. The rules (key names, ports, dialects) are the connection layer's
:mod:`lantide.query.odbc_strings`; this only shows them."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QIntValidator
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from lantide.query.odbc_strings import (
    FAMILIES,
    build_connection_string,
    dialect_for_driver,
    family_of,
    fields_of,
)


class ConnectionFieldsWidget(QWidget):
    # The string the fields make (the analyst changed a field).
    sig_string_built = Signal(str)
    # The dialect the chosen driver speaks.
    sig_dialect_suggested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._filling = False
        self.driver_combo = QComboBox(self)
        self.driver_combo.setEditable(True)
        self.driver_combo.setToolTip("The ODBC driver; the dialect follows it")
        for family in FAMILIES:
            self.driver_combo.addItems(family.drivers)
        self.host_edit = QLineEdit(self)
        self.host_edit.setPlaceholderText("host name or address")
        self.port_edit = QLineEdit(self)
        self.port_edit.setValidator(QIntValidator(1, 65535, self))
        self.port_edit.setMaximumWidth(80)
        self.database_edit = QLineEdit(self)
        self.database_edit.setPlaceholderText("database")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.host_edit, 3)
        row.addWidget(QLabel("Port", self))
        row.addWidget(self.port_edit)
        row.addWidget(QLabel("Database", self))
        row.addWidget(self.database_edit, 2)
        self.driver_combo.currentTextChanged.connect(self._driver_changed)
        for edit in (self.host_edit, self.port_edit, self.database_edit):
            edit.textEdited.connect(lambda _t: self._build())

    def add_installed_drivers(self, drivers: list[str]) -> None:
        """Offer the drivers registered on this machine first."""
        known = {self.driver_combo.itemText(i) for i in range(self.driver_combo.count())}
        current = self.driver_combo.currentText()
        self._filling = True
        for i, name in enumerate(d for d in drivers if d not in known):
            self.driver_combo.insertItem(i, name)
        self.driver_combo.setCurrentText(current)
        self._filling = False

    def _driver_changed(self, driver: str) -> None:
        if self._filling:
            return
        dialect = dialect_for_driver(driver)
        if dialect:
            self.sig_dialect_suggested.emit(dialect)
        family = family_of(driver)
        if family is not None and not self.port_edit.text() and self.host_edit.text():
            self.port_edit.setText(str(family.default_port))
        self._build()

    def _build(self) -> None:
        if self._filling:
            return
        self.sig_string_built.emit(
            build_connection_string(
                self.driver_combo.currentText(),
                self.host_edit.text(),
                self.port_edit.text(),
                self.database_edit.text(),
            )
        )

    def show_string(self, text: str) -> None:
        """Fill the fields from a connection string (typed by hand, or a saved one)."""
        fields = fields_of(text)
        self._filling = True
        try:
            if fields["driver"]:
                self.driver_combo.setCurrentText(fields["driver"])
            self.host_edit.setText(fields["host"])
            self.port_edit.setText(fields["port"])
            self.database_edit.setText(fields["database"])
        finally:
            self._filling = False

    def clear(self, driver: str) -> None:
        self._filling = True
        self.driver_combo.setCurrentText(driver)
        for edit in (self.host_edit, self.port_edit, self.database_edit):
            edit.clear()
        self._filling = False
