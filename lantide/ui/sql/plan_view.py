"""A query plan as a tree (Explain / Explain Analyze of a SQL tab), shown beside the grid.

Renders :class:`lantide.query.explain.QueryPlan` (the engine parses DuckDB's JSON plan):
one row per operator with the rows it produced, the optimizer's estimate, its own time
and its share of the query's time; the hotspots (:meth:`QueryPlan.hotspots`: the three
slowest that each took a tenth of the time or more) are tinted and bold, so the place to
look first stands out. A row's tooltip holds DuckDB's details (conditions,
filters, projections) in full; the Details column shows them on one line.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QTreeView, QVBoxLayout, QWidget

from lantide.query.explain import ESTIMATED, PlanNode, QueryPlan
from lantide.ui.theme import colors
from lantide.ui.themed import mark_theme, theme_switched

COLUMNS = ["Operator", "Rows", "Estimated", "Time", "Share", "Details"]
SLOWEST = 3  # operators highlighted
ROLE_SLOW = Qt.ItemDataRole.UserRole + 1  # rank among the slowest (1 = slowest), else None


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.001:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds * 1_000_000:.0f} µs"


def _count(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def headline(plan: QueryPlan) -> str:
    """One line above the tree: what was explained and where the time went."""
    if not plan.analyzed:
        return "The plan with DuckDB's row estimates; nothing ran (Explain Analyze runs it)."
    parts = []
    if plan.total_seconds is not None:
        parts.append(f"Ran in {duration_text(plan.total_seconds)}")
    slowest = plan.slowest(1)
    if slowest:
        node = slowest[0]
        share = plan.share(node)
        parts.append(
            f"slowest: {node.operator} {duration_text(node.seconds)}"
            + (f" ({share:.0%})" if share is not None else "")
        )
    return " · ".join(parts) or "Ran; DuckDB measured no time."


class PlanView(QWidget):
    """The plan tree with its headline; :meth:`show_plan` fills it."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        mark_theme(self)
        self.plan: QueryPlan | None = None
        self.headline = QLabel("Explain (Ctrl+E) shows the query's plan here.", self)
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(COLUMNS)
        self.tree = QTreeView(self)
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setEditTriggers(QTreeView.EditTrigger.NoEditTriggers)
        self.tree.setAccessibleName("Query plan")
        self._buttons = QHBoxLayout()
        self._buttons.setSpacing(4)
        top = QHBoxLayout()
        top.addWidget(self.headline, 1)
        top.addLayout(self._buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)

    def set_actions(self, actions: list[QAction]) -> None:
        """Buttons beside the headline (the tab's Explain and Explain Analyze)."""
        for action in actions:
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            self._buttons.addWidget(button)

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if theme_switched(self, event) and self.plan is not None:
            self.show_plan(self.plan)  # the highlight in the new theme's colours

    def show_message(self, text: str) -> None:
        self.plan = None
        self.model.removeRows(0, self.model.rowCount())
        self.headline.setText(text)

    def show_plan(self, plan: QueryPlan) -> None:
        self.plan = plan
        self.model.removeRows(0, self.model.rowCount())
        ranks = {id(n): i + 1 for i, n in enumerate(plan.hotspots(SLOWEST))}
        total = sum(n.seconds or 0.0 for n in plan.nodes())
        for root in plan.roots:
            self._add(self.model.invisibleRootItem(), root, ranks, total)
        self.headline.setText(headline(plan))
        self.tree.setColumnHidden(1, not plan.analyzed)
        self.tree.setColumnHidden(3, not plan.analyzed)
        self.tree.setColumnHidden(4, not plan.analyzed)
        self.tree.expandAll()
        for column in range(len(COLUMNS) - 1):
            self.tree.resizeColumnToContents(column)

    def _add(self, parent: QStandardItem, node: PlanNode, ranks: dict[int, int], total: float):
        details = " · ".join(
            f"{k}: {' '.join(v.split())}" for k, v in node.extra_info.items() if k != ESTIMATED
        )
        share = (node.seconds or 0.0) / total if node.seconds is not None and total > 0 else None
        cells = [
            node.operator,
            _count(node.rows),
            _count(node.estimated_rows),
            duration_text(node.seconds),
            "" if share is None else f"{share:.0%}",
            details,
        ]
        items = [QStandardItem(text) for text in cells]
        tip = "\n".join(f"{k}: {v}" for k, v in node.extra_info.items()) or node.operator
        rank = ranks.get(id(node))
        theme = colors()
        for column, item in enumerate(items):
            item.setToolTip(tip)
            if 0 < column < 5:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if rank is not None:
                item.setData(rank, ROLE_SLOW)
                tint = QColor(theme.danger if rank == 1 else theme.warning)
                tint.setAlpha(70 if rank == 1 else 45)
                item.setBackground(QBrush(tint))
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
        if rank is not None:
            items[0].setToolTip(f"slowest operator #{rank}\n{tip}")
        parent.appendRow(items)
        for child in node.children:
            self._add(items[0], child, ranks, total)

    def highlighted(self) -> list[str]:
        """The highlighted operators, slowest first (for tests and the accessibility tree)."""
        found: list[tuple[int, str]] = []

        def visit(parent: QStandardItem) -> None:
            for row in range(parent.rowCount()):
                item = parent.child(row, 0)
                rank = item.data(ROLE_SLOW)
                if rank is not None:
                    found.append((int(rank), item.text()))
                visit(item)

        visit(self.model.invisibleRootItem())
        return [name for _rank, name in sorted(found)]
