"""The SQL tab's connection picker: where the tab runs, "DuckDB (local)" or one of the
workspace's connections (the names Settings > Connections keeps in workspace.json).

The picker and the tab's header line (``-- lantide: connection=NAME``) say the same thing:
choosing a connection rewrites the header through the engine's rule
(:func:`lantide.query.remote_tabs.set_tab_connection`) as one undoable edit, and a header
edited by hand moves the picker (:func:`lantide.query.remote_tabs.tab_connection`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QPlainTextEdit,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QWidget,
)

from lantide.query.names import same_name
from lantide.ui.sql.reading_actions import qt_position

LOCAL = "DuckDB"  # short: the toolbar is full at 1024 px (its tooltip says "local")
LOCAL_TIP = "DuckDB (local): the tab runs on this machine"
NOT_SET_UP = " (not set up)"
TIP = (
    "Where the tab runs: DuckDB on this machine, or wholly on a connection "
    "(the tab's first line says -- lantide: connection=NAME)"
)


class ConnectionPicker(QComboBox):
    """Items carry the connection's name as data (None for DuckDB)."""

    sig_chosen = Signal(object)  # the name the analyst picked, or None for DuckDB

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName("Where the tab runs")
        self.setToolTip(TIP)
        # as wide as "DuckDB" needs, no wider: a long connection name shows whole in the
        # list and the tooltip, its start and "…" in the field, and never pushes the
        # purpose out of the toolbar
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(len(LOCAL))
        self._fit_width()
        self.view().setMinimumWidth(160)
        self._names: list[str] = []
        self._shown: str | None = None
        self.activated.connect(lambda index: self.sig_chosen.emit(self.itemData(index)))
        self.currentIndexChanged.connect(self._name_in_tip)
        self._fill()

    def _fit_width(self) -> None:
        """The width the style gives a combo showing ``LOCAL`` (its frame, padding and
        arrow included), so the picker is sized to what it shows in the usual case."""
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        metrics = self.fontMetrics()
        content = QSize(metrics.horizontalAdvance(LOCAL) + 4, metrics.height())
        size = self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, option, content, self)
        self.setMaximumWidth(size.width())

    def shown_text(self) -> str:
        """The current item's text as it fits the field (a long name ends in "…")."""
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox,
            option,
            QStyle.SubControl.SC_ComboBoxEditField,
            self,
        )
        return self.fontMetrics().elidedText(
            option.currentText, Qt.TextElideMode.ElideRight, field.width()
        )

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # QComboBox cuts a long name at the arrow; this ends it in "…" (whole in the tip)
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        option.currentText = self.shown_text()
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit_width()

    def set_connections(self, names: list[str]) -> None:
        """The workspace's connections (their names as configured)."""
        self._names = list(names)
        self._fill()

    def show_connection(self, name: str | None) -> None:
        """Show where the header says the tab runs (a name no connection has gets its own
        item, marked, so the picker never claims what the header does not say)."""
        self._shown = name
        self._fill()

    def connection(self) -> str | None:
        return self.currentData()

    def _fill(self) -> None:
        self.blockSignals(True)
        self.clear()
        self.addItem(LOCAL, None)
        self.setItemData(0, LOCAL_TIP, Qt.ItemDataRole.ToolTipRole)
        for name in self._names:
            self.addItem(name, name)
            self.setItemData(self.count() - 1, f"runs on {name}", Qt.ItemDataRole.ToolTipRole)
        index = 0
        if self._shown is not None:
            match = [i for i, n in enumerate(self._names) if same_name(n, self._shown)]
            if match:
                index = match[0] + 1
            else:
                self.addItem(self._shown + NOT_SET_UP, self._shown)
                index = self.count() - 1
        self.setCurrentIndex(index)
        self.blockSignals(False)
        self._name_in_tip()

    def _name_in_tip(self) -> None:
        """The tooltip names the connection: the field may show only its start."""
        index = self.currentIndex()
        self.setToolTip(TIP if index <= 0 else f"Runs on {self.itemText(index)}. {TIP}")


def header_connection_of(editor: QPlainTextEdit) -> str | None:
    """The connection the editor's first line names (only that line is read)."""
    from lantide.query.remote_tabs import tab_connection

    return tab_connection(editor.document().firstBlock().text())


def bind_connection(editor: QPlainTextEdit, name: str | None) -> bool:
    """Rewrite the editor's header for ``name`` as one undoable edit of the changed part
    (the cursor and the rest of the text stay). Raises the engine's LantideError for a
    name a header cannot hold. False when nothing changed."""
    from lantide.query.remote_tabs import set_tab_connection

    old = editor.toPlainText()
    new = set_tab_connection(old, name)
    if new == old:
        return False
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    edit = QTextCursor(editor.document())
    edit.beginEditBlock()
    edit.setPosition(qt_position(old, start))
    edit.setPosition(qt_position(old, len(old) - end), QTextCursor.MoveMode.KeepAnchor)
    edit.insertText(new[start : len(new) - end])
    edit.endEditBlock()
    return True
