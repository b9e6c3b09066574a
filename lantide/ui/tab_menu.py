"""The context menu of a tab in the tab bar: close it, the others, those to its right or all
(each dirty tab asks, as closing one does), rename a SQL tab (as the explorer does), copy
the path of its file, or show the file in the system's file manager."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from lantide.ui.icons import icon
from lantide.ui.services import TAB_PLAN, TAB_REPORT, TAB_SQL
from lantide.workspace import layout

if TYPE_CHECKING:
    from lantide.ui.tab_area import TabAreaWidget


def tab_file(tabs: TabAreaWidget, widget: QWidget) -> Path | None:
    """The file a tab shows (None for a table tab)."""
    own = getattr(widget, "path", None)
    if isinstance(own, Path):
        return own
    ref = tabs.ref_of(widget)
    if ref.project is None or ref.kind not in (TAB_PLAN, TAB_REPORT, TAB_SQL):
        return None
    folder = layout.project_dir(tabs.services.workspace.root, ref.project)
    if ref.kind == TAB_SQL:
        return layout.sql_tab_path(folder, ref.name)
    return folder / ref.name if ref.name else None


def close_others(tabs: TabAreaWidget, keep: QWidget | None, *, right_only: bool = False) -> None:
    """Close every tab but ``keep`` (all with None; or those to its right); a Cancel stops
    there."""
    start = tabs.indexOf(keep) + 1 if right_only and keep is not None else 0
    for widget in tabs.widgets()[start:]:
        if widget is not keep and not tabs.close_tab(tabs.indexOf(widget)):
            return


def rename_tab(tabs: TabAreaWidget, project: str, name: str, new: str | None = None) -> bool:
    """Rename a SQL tab by the explorer's path (the open tab follows when it is done)."""
    from lantide.ui.sql.tab_rename import rename_sql_tab

    return rename_sql_tab(tabs, tabs.services, project, name, new=new)


def show_tab_menu(tabs: TabAreaWidget, pos: QPoint) -> QMenu | None:
    """The menu for the tab under ``pos`` (tab bar coordinates); None off the tabs."""
    index = tabs.tabBar().tabAt(pos)
    widget = tabs.widget(index) if index >= 0 else None
    if widget is None:
        return None
    menu = QMenu(tabs)
    menu.addAction(icon("close"), "Close", lambda: tabs.close_tab(tabs.indexOf(widget)))
    others = menu.addAction("Close others", lambda: close_others(tabs, widget))
    others.setEnabled(tabs.count() > 1)
    right = menu.addAction(
        "Close tabs to the right", lambda: close_others(tabs, widget, right_only=True)
    )
    right.setEnabled(tabs.indexOf(widget) < tabs.count() - 1)
    menu.addAction("Close all", lambda: close_others(tabs, None))
    ref = tabs.ref_of(widget)
    if ref.kind == TAB_SQL and ref.project and ref.name:
        menu.addSeparator()
        project, name = ref.project, ref.name
        menu.addAction("Rename…", lambda: rename_tab(tabs, project, name))
    path = tab_file(tabs, widget)
    if path is not None:
        menu.addSeparator()
        menu.addAction("Copy file path", lambda: QGuiApplication.clipboard().setText(str(path)))
        reveal = menu.addAction(
            icon("open"),
            "Show in file manager",
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent))),
        )
        reveal.setToolTip(f"Open {path.parent} in the system's file manager")
    menu.popup(tabs.tabBar().mapToGlobal(pos))
    return menu
