"""The items of a ``QTreeWidget`` as lists.

Qt types ``topLevelItem(i)`` and ``child(i)`` as Optional (they are None out of range); walked
in range they never are, and these helpers say so once for every tree of the app.
"""

from __future__ import annotations

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem


def top_level_items(tree: QTreeWidget) -> list[QTreeWidgetItem]:
    items = (tree.topLevelItem(i) for i in range(tree.topLevelItemCount()))
    return [item for item in items if item is not None]


def child_items(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    children = (item.child(i) for i in range(item.childCount()))
    return [child for child in children if child is not None]
