"""The boxes and edges of the lineage graph (:mod:`lantide.ui.sql.lineage_graph_view`).

A box says what it is in words on its second line (*▲ stale*, *○ never run*, *✓ up to
date*, *✕ error*, *data file*, *✕ not found*, …); its outline (rounded for a tab, square
for a source, dashed for a table that is nothing yet) and a strip in the state's colour
repeat it. An edge runs from what is read to the reader, through the free slot the
layout (:mod:`lantide.query.lineage_graph`) kept in each column it crosses; an edge that
closes a cycle is dashed.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QStyleOptionGraphicsItem

from lantide.ui.theme import colors

NODE_W, NODE_H = 160.0, 44.0
LAYER_GAP, ROW_GAP = 34.0, 16.0
FIT_SMALLEST = 0.68  # Fit shrinks no further (the names stay readable); the rest scrolls
STATE_WORDS = {
    "up_to_date": "✓ up to date",
    "stale": "▲ stale",
    "never_run": "○ never run",
}
KIND_WORDS = {
    "data": "data file",
    "cached": "cached table",
    "external": "connection table",
    "file": "file",
    "missing": "✕ not found",
}
ZOOM_STEP = 1.2


def node_caption(node: dict) -> str:
    """The second line of a node: its state or kind in words."""
    if node.get("kind") == "tab":
        if node.get("error"):
            return "✕ error"
        return STATE_WORDS.get(node.get("state") or "", "? unknown")
    return KIND_WORDS.get(node.get("kind") or "", node.get("kind") or "")


class NodeItem(QGraphicsItem):
    def __init__(self, node: dict):
        super().__init__()
        self.node = node
        self.highlighted = True
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, True)
        self.setAcceptHoverEvents(True)
        tip = [node.get("label", ""), node_caption(node)]
        if node.get("error"):
            tip.append(str(node["error"]))
        if node.get("kind") == "tab":
            tip.append("Double-click or Enter opens it; right-click for Source Run")
        elif node.get("kind") in ("data", "cached"):
            tip.append("Double-click or Enter opens the table")
        self.setToolTip("\n".join(t for t in tip if t))

    @property
    def node_id(self) -> str:
        return str(self.node["id"])

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(-2, -2, NODE_W + 4, NODE_H + 4)

    def _tint(self) -> QColor:
        theme = colors()
        node = self.node
        if node.get("kind") == "missing" or node.get("error"):
            return theme.danger
        if node.get("kind") == "tab":
            return {
                "up_to_date": theme.success,
                "stale": theme.warning,
            }.get(node.get("state") or "", theme.muted)
        return theme.muted

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        theme = colors()
        palette = widget.palette() if widget is not None else None
        base = palette.base().color() if palette else QColor("white")
        text = palette.text().color() if palette else QColor("black")
        selected = self.isSelected()
        painter.setOpacity(1.0 if self.highlighted else 0.4)
        rect = QRectF(0, 0, NODE_W, NODE_H)
        tint = self._tint()
        pen = QPen(theme.link if selected else tint, 2.6 if selected else 1.4)
        if self.node.get("kind") == "missing":
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(QBrush(theme.panel if self.node.get("kind") != "tab" else base))
        if self.node.get("kind") == "tab":
            painter.drawRoundedRect(rect, 9, 9)
        else:
            painter.drawRect(rect)
        # a strip on the left in the state's colour, for a quick scan
        painter.fillRect(QRectF(1.5, 6, 4, NODE_H - 12), tint)
        font = QFont(painter.font())
        font.setBold(self.node.get("kind") == "tab")
        painter.setFont(font)
        painter.setPen(text)
        metrics = QFontMetrics(font)
        label = metrics.elidedText(
            str(self.node.get("label", "")), Qt.TextElideMode.ElideMiddle, int(NODE_W - 16)
        )
        painter.drawText(QRectF(12, 5, NODE_W - 18, 18), Qt.AlignmentFlag.AlignVCenter, label)
        font.setBold(False)
        painter.setFont(font)
        painter.setPen(tint if tint != theme.muted else theme.muted)
        painter.drawText(
            QRectF(12, 24, NODE_W - 18, 17), Qt.AlignmentFlag.AlignVCenter, node_caption(self.node)
        )


def slot(layer: int, row: int) -> QPointF:
    """The top left corner of the box at ``(layer, row)`` of the engine's layout."""
    return QPointF(layer * (NODE_W + LAYER_GAP), row * (NODE_H + ROW_GAP))


class EdgeItem(QGraphicsPathItem):
    def __init__(self, source: NodeItem, target: NodeItem, back: bool, via=()):
        super().__init__()
        self.source, self.target, self.back = source, target, back
        start = source.pos() + QPointF(NODE_W, NODE_H / 2)
        end = target.pos() + QPointF(0, NODE_H / 2)
        path = QPainterPath(start)
        if back:  # a cycle: around below, back to the left
            low = max(start.y(), end.y()) + NODE_H
            path.cubicTo(start + QPointF(40, NODE_H * 1.5), QPointF(end.x() - 40, low), end)
        else:
            # through the empty slot of each layer it crosses (the engine kept it free)
            here = start
            for layer, row in via:
                entry = slot(layer, row) + QPointF(0, NODE_H / 2)
                _curve(path, here, entry)
                here = entry + QPointF(NODE_W, 0)
                path.lineTo(here)
            _curve(path, here, end)
        # the arrow head, at the reader
        path.moveTo(end)
        path.lineTo(end + QPointF(-8, -4.5))
        path.moveTo(end)
        path.lineTo(end + QPointF(-8, 4.5))
        self.setPath(path)
        self.setZValue(-1)
        self.set_highlighted(True)

    def set_highlighted(self, on: bool) -> None:
        theme = colors()
        color = QColor(theme.danger if self.back else (theme.link if on else theme.muted))
        if not on:
            color.setAlphaF(0.35)
        pen = QPen(color, 2.2 if on else 1.1)
        if self.back:
            pen.setStyle(Qt.PenStyle.DashLine)
        self.setPen(pen)


def _curve(path: QPainterPath, start: QPointF, end: QPointF) -> None:
    bend = max(24.0, (end.x() - start.x()) / 2)
    path.cubicTo(start + QPointF(bend, 0), end - QPointF(bend, 0), end)
