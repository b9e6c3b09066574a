"""The column profile of a table: one row per column with its type, nulls, distinct count,
min and max, and a small histogram (equal-width bins for numbers and dates, the most
frequent values for the rest) drawn in the cell. The numbers come from
``QueryService.profile_table``, computed in DuckDB.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QHeaderView, QStyledItemDelegate, QTableView, QWidget

from lantide.ui.sql.result_model import format_value

_ROOT = QModelIndex()  # the invalid index: Qt's default parent of a flat model's rows
COLUMNS = ("Column", "Type", "Nulls", "Distinct", "Min", "Max", "Distribution")
HISTOGRAM_COLUMN = COLUMNS.index("Distribution")
ROLE_HISTOGRAM = Qt.ItemDataRole.UserRole + 2
BAR_COLOR = "#3b82f6"


def histogram_counts(histogram: dict | None) -> list[int]:
    if not histogram:
        return []
    if histogram.get("kind") == "numeric":
        return [int(b.get("count") or 0) for b in histogram.get("bins", [])]
    counts = [int(v.get("count") or 0) for v in histogram.get("values", [])]
    return counts


def histogram_tooltip(histogram: dict | None) -> str:
    if not histogram:
        return ""
    lines = []
    if histogram.get("kind") == "numeric":
        for b in histogram.get("bins", []):
            lines.append(
                f"{format_value(b.get('low'))} – {format_value(b.get('high'))}: "
                f"{int(b.get('count') or 0):,}"
            )
    else:
        for v in histogram.get("values", []):
            lines.append(f"{v.get('value')}: {int(v.get('count') or 0):,}")
        if histogram.get("other_count"):
            lines.append(f"(other values): {histogram['other_count']:,}")
    return "\n".join(lines)


class ColumnProfileModel(QAbstractTableModel):
    def __init__(self, profile: dict | None = None, parent=None):
        super().__init__(parent)
        self.profile = profile or {"columns": [], "row_count": 0}

    def set_profile(self, profile: dict) -> None:
        self.beginResetModel()
        self.profile = profile
        self.endResetModel()

    def rowCount(self, parent=_ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.profile.get("columns", []))

    def columnCount(self, parent=_ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        col = self.profile["columns"][index.row()]
        field = COLUMNS[index.column()]
        if role == ROLE_HISTOGRAM and index.column() == HISTOGRAM_COLUMN:
            return histogram_counts(col.get("histogram"))
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == HISTOGRAM_COLUMN:
            return histogram_tooltip(col.get("histogram"))
        if role == Qt.ItemDataRole.TextAlignmentRole and field in ("Nulls", "Distinct"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if field == "Column":
            return col.get("name")
        if field == "Type":
            return str(col.get("type") or "").lower()
        if field == "Nulls":
            nulls = int(col.get("null_count") or 0)
            fraction = float(col.get("null_fraction") or 0.0)
            return f"{nulls:,} ({fraction:.1%})" if nulls else "0"
        if field == "Distinct":
            count = f"{int(col.get('distinct_count') or 0):,}"
            return count if col.get("distinct_exact", True) else f"≈ {count}"
        if field in ("Min", "Max"):
            value = col.get(field.lower())
            return "" if value is None else format_value(value)
        return None


class HistogramDelegate(QStyledItemDelegate):
    """Draws a cell's counts as small bars."""

    def paint(self, painter: QPainter, option, index) -> None:
        counts = index.data(ROLE_HISTOGRAM) or []
        super().paint(painter, option, index)
        if not counts or max(counts) <= 0:
            return
        rect = QRectF(option.rect).adjusted(6, 4, -6, -4)
        peak = max(counts)
        slot = rect.width() / len(counts)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        color = QColor(BAR_COLOR)
        for i, count in enumerate(counts):
            height = max(1.0 if count else 0.0, rect.height() * count / peak)
            painter.fillRect(
                QRectF(
                    rect.left() + i * slot + 1, rect.bottom() - height, max(1.0, slot - 2), height
                ),
                color,
            )
        painter.restore()

    def sizeHint(self, option, index) -> QSize:  # noqa: N802
        return QSize(160, 28)


class ColumnProfileView(QTableView):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.profile_model = ColumnProfileModel(parent=self)
        self.setModel(self.profile_model)
        self.setItemDelegateForColumn(HISTOGRAM_COLUMN, HistogramDelegate(self))
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(30)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.setWordWrap(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

    def set_profile(self, profile: dict) -> None:
        self.profile_model.set_profile(profile)
        self.resizeColumnsToContents()
        for col in (4, 5):  # min / max can be long texts
            self.setColumnWidth(col, min(self.columnWidth(col), 220))
        self.setColumnWidth(HISTOGRAM_COLUMN, 240)
