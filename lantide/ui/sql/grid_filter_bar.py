"""The result grid's filter widgets: the popup that edits one column's filter and the bar
above the grid that lists the filters in force.

They only collect what the analyst typed and send it on; what a filter means, whether its
value reads as the column's type and the SQL it becomes are the engine's
(:mod:`lantide.query.grid_filters`), which answers a bad value with what to type.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from lantide.query.duckdb_types import is_date_or_timestamp, is_numeric
from lantide.query.grid_filters import describe_filter, normalize_filters, ops_for
from lantide.ui.icons import icon

# how the popup names each filter the engine offers (lantide.query.grid_filters.ops_for)
OP_LABELS = {
    "contains": "contains",
    "equals": "equals",
    "range": "between",
    "null": "is NULL",
    "not_null": "is not NULL",
}


def placeholder_for(type_name: str) -> str:
    if is_date_or_timestamp(type_name):
        return "2024-03-31" if type_name.upper().startswith("DATE") else "2024-03-31 18:00"
    return "a number" if is_numeric(type_name) else "text"


class ColumnFilterPopup(QFrame):
    """Edits the filter of one column; ``sig_filter_chosen`` carries the filter dict, or
    None to remove the column's filter."""

    sig_filter_chosen = Signal(object)

    def __init__(
        self,
        column: str,
        type_name: str,
        current: dict | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("ColumnFilterPopup")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.column, self.type_name = column, type_name
        self.setAccessibleName(f"Filter {column}")
        title = QLabel(f"<b>Filter {column}</b> <span>({type_name.lower()})</span>", self)
        title.setTextFormat(Qt.TextFormat.RichText)
        self.op = QComboBox(self)
        for op in ops_for(type_name):
            self.op.addItem(OP_LABELS.get(op, op), op)
        hint = placeholder_for(type_name)
        self.value = QLineEdit(self)
        self.value.setPlaceholderText(hint)
        self.low = QLineEdit(self)
        self.low.setPlaceholderText(f"from ({hint}), or empty")
        self.high = QLineEdit(self)
        self.high.setPlaceholderText(f"to ({hint}), or empty")
        form = QFormLayout()
        form.addRow("Rows where", self.op)
        self._value_row = QLabel("Value", self)
        form.addRow(self._value_row, self.value)
        self._low_row = QLabel("From", self)
        form.addRow(self._low_row, self.low)
        self._high_row = QLabel("To", self)
        form.addRow(self._high_row, self.high)
        self.apply_button = QPushButton("Apply", self)
        self.apply_button.setDefault(True)
        self.apply_button.clicked.connect(self.apply)
        self.remove_button = QPushButton("Remove filter", self)
        self.remove_button.setEnabled(current is not None)
        self.remove_button.clicked.connect(self.remove)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(title)
        layout.addLayout(form)
        layout.addLayout(buttons)
        self.op.currentIndexChanged.connect(self._show_fields)
        if current:
            index = self.op.findData(current.get("op"))
            self.op.setCurrentIndex(max(0, index))
            self.value.setText(str(current.get("value") or ""))
            self.low.setText(str(current.get("low") or ""))
            self.high.setText(str(current.get("high") or ""))
        self._show_fields()

    def _show_fields(self) -> None:
        op = self.op.currentData()
        for label, edit, shown in (
            (self._value_row, self.value, op in ("contains", "equals")),
            (self._low_row, self.low, op == "range"),
            (self._high_row, self.high, op == "range"),
        ):
            label.setVisible(shown)
            edit.setVisible(shown)
        (self.low if op == "range" else self.value).setFocus()
        self.adjustSize()

    def chosen(self) -> dict:
        """The filter as typed (the engine checks it)."""
        op = self.op.currentData()
        out: dict = {"column": self.column, "op": op}
        if op in ("contains", "equals"):
            out["value"] = self.value.text()
        elif op == "range":
            out["low"], out["high"] = self.low.text() or None, self.high.text() or None
        return out

    def apply(self) -> None:
        self.sig_filter_chosen.emit(self.chosen())
        self.close()

    def remove(self) -> None:
        self.sig_filter_chosen.emit(None)
        self.close()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.apply()
            return
        super().keyPressEvent(event)

    def show_at(self, pos: QPoint) -> None:
        self.move(pos)
        self.show()
        self.raise_()
        self.activateWindow()


class FilterBar(QWidget):
    """The filters in force, one button each (a click removes it), and Clear all."""

    sig_filter_removed = Signal(str)  # column
    sig_filters_cleared = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("GridFilterBar")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(8, 2, 6, 2)
        self._layout.setSpacing(4)
        self.label = QLabel(self)
        self._layout.addWidget(self.label)
        self._chips: list[QToolButton] = []
        self._layout.addStretch(1)
        self.clear_button = QToolButton(self)
        self.clear_button.setText("Clear filters")
        self.clear_button.setToolTip("Show every row of the result again")
        self.clear_button.clicked.connect(self.sig_filters_cleared)
        self._layout.addWidget(self.clear_button)
        self.setVisible(False)

    @property
    def chip_texts(self) -> list[str]:
        return [chip.text() for chip in self._chips]

    def show_filters(self, filters: list[dict], passing: int, total: int) -> None:
        """``passing``: rows passing the filters, -1 while DuckDB counts them."""
        for chip in self._chips:
            self._layout.removeWidget(chip)
            chip.setParent(None)  # gone now, not at the next turn of the event loop
            chip.deleteLater()
        self._chips = []
        self.setVisible(bool(filters))
        if not filters:
            return
        shown = "… of" if passing < 0 else f"{passing:,} of"
        self.label.setText(f"{shown} {total:,} rows where")
        for n, f in enumerate(normalize_filters(filters)):
            chip = QToolButton(self)
            chip.setObjectName("FilterChip")
            chip.setText(describe_filter(f))
            chip.setIcon(icon("close"))
            chip.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            chip.setLayoutDirection(Qt.LayoutDirection.RightToLeft)  # the × after the text
            chip.setToolTip(f"Remove the filter on {f['column']}")
            chip.clicked.connect(lambda _=False, c=f["column"]: self.sig_filter_removed.emit(c))
            self._layout.insertWidget(1 + n, chip)
            self._chips.append(chip)
