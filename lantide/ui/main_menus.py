"""The main window's actions, toolbar and menus: built once by :class:`MainWindow`.

Each action is a window-wide shortcut (``Qt.WindowShortcut``) that calls a slot of the
window; the window keeps them as ``window.act_*`` for its menus, toolbar, command palette
and tabs. No rule lives here: what an action does is the window's or its tab's.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QIcon
from PySide6.QtWidgets import QComboBox, QLabel, QToolBar

from lantide.ui.edit_actions import build_edit_menu, build_query_menu
from lantide.ui.icons import icon
from lantide.ui.services import TAB_PLAN, TAB_REPORT
from lantide.ui.shortcuts import shortcut
from lantide.workspace.lifecycle import PROJECT_STATUSES

if TYPE_CHECKING:
    from lantide.ui.main_window import MainWindow


def _action(
    window: MainWindow,
    text: str,
    slot,
    *,
    key: str | None = None,
    icon_name: str | None = None,
    tip: str | None = None,
) -> QAction:
    action = QAction(icon(icon_name) if icon_name else QIcon(), text, window)
    if key:
        action.setShortcut(shortcut(key))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    if tip:
        action.setStatusTip(tip)
        action.setToolTip(tip)
    action.triggered.connect(lambda _checked=False: slot())
    window.addAction(action)
    return action


def build_actions(window: MainWindow) -> None:
    """The window's actions (``window.act_*``), each with its shortcut and icon."""
    a = partial(_action, window)
    window.act_new_project = a("New project…", window.explorer.new_project, icon_name="add")
    window.act_new_sql = a(
        "New SQL tab…",
        window.new_sql_tab,
        key="new_sql_tab",
        icon_name="sql-tab",
        tip="New SQL tab in the focused project",
    )
    window.act_open_plan = a(
        "Open Plan",
        lambda: window.open_document(TAB_PLAN),
        key="quick_open_plan",
        icon_name="plan",
    )
    window.act_open_report = a(
        "Open Report",
        lambda: window.open_document(TAB_REPORT),
        key="quick_open_report",
        icon_name="report",
    )
    window.act_open_workspace = a(
        "Open workspace…", window.choose_workspace, key="open_workspace", icon_name="open"
    )
    window.act_save = a(
        "Save", window.tabs.save_current, key="save", icon_name="save", tip="Save the current tab"
    )
    window.act_save_all = a("Save all", window.tabs.save_all, key="save_all")
    window.act_close_tab = a("Close tab", window.tabs.close_current, key="close_tab")
    window.act_next_tab = a("Next tab", lambda: window.tabs.next_tab(1), key="next_tab")
    window.act_prev_tab = a("Previous tab", lambda: window.tabs.next_tab(-1), key="previous_tab")
    window.act_settings = a("Settings…", window.open_settings, key="settings", icon_name="settings")
    window.act_quit = a("Quit", window.close, key="quit")
    window.act_cancel_query = a(
        "Cancel running query",
        window.status.cancel_running_query,
        key="cancel_query",
        icon_name="stop",
    )
    window.act_shortcuts = a(
        "Keyboard shortcuts", window.show_shortcuts, key="shortcuts", icon_name="keyboard"
    )
    window.act_about = a("About Lantide", window.show_about, icon_name="info")
    window.act_palette = a(
        "Command palette…",
        window.show_command_palette,
        key="command_palette",
        icon_name="keyboard",
    )
    window.act_reset_layout = a("Reset layout", window.reset_layout)
    window.act_focus_explorer = a(
        "Explorer", lambda: window._show_dock(window.explorer_dock), key="focus_explorer"
    )
    window.act_focus_chat = a("Chat", window._focus_chat, key="focus_chat")
    window.act_focus_ledger = a(
        "Ledger", lambda: window._show_dock(window.ledger_dock), key="focus_ledger"
    )
    window.act_focus_knowledge = a(
        "Knowledge", lambda: window._show_dock(window.knowledge_dock), key="focus_knowledge"
    )
    # Document commands act on the current tab when it supports them.
    window.act_find = a(
        "Find…", lambda: window._on_current("show_find"), key="find", icon_name="find"
    )
    window.act_replace = a(
        "Replace…", lambda: window._on_current("show_replace"), key="replace", icon_name="replace"
    )
    window.act_annotate = a(
        "Annotate selection…",
        lambda: window._on_current("annotate_selection"),
        key="annotate",
        icon_name="annotate",
    )


def build_toolbar(window: MainWindow) -> None:
    """The main toolbar: project and status pickers, the common actions."""
    bar = QToolBar("Main toolbar", window)
    bar.setObjectName("MainToolbar")
    bar.setMovable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
    bar.addWidget(QLabel(" Project ", bar))
    window.project_combo = QComboBox(bar)
    window.project_combo.setObjectName("ProjectSelector")
    window.project_combo.setMinimumWidth(180)
    window.project_combo.setToolTip("The focused project: the agent works in it")
    window.project_combo.activated.connect(window._project_chosen)
    bar.addWidget(window.project_combo)
    window.status_combo = QComboBox(bar)
    window.status_combo.setObjectName("ProjectStatus")
    window.status_combo.addItems(PROJECT_STATUSES)
    window.status_combo.setToolTip(
        "Project status: executing starts when the analyst approves "
        "the Plan (Plan tab); while executing, every query needs a "
        "purpose"
    )
    window.status_combo.activated.connect(window._status_chosen)
    bar.addWidget(window.status_combo)
    bar.addSeparator()
    for action in (
        window.act_open_plan,
        window.act_open_report,
        window.act_new_sql,
        window.act_save,
    ):
        bar.addAction(action)
    bar.addSeparator()
    bar.addAction(window.act_settings)
    window.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
    window.toolbar = bar


def build_menus(window: MainWindow) -> None:
    """The menu bar: File, Edit, View, Query, Help."""
    menu = window.menuBar()
    file_menu = menu.addMenu("&File")
    for act in (
        window.act_new_project,
        window.act_new_sql,
        window.act_open_plan,
        window.act_open_report,
    ):
        file_menu.addAction(act)
    file_menu.addSeparator()
    file_menu.addAction(window.act_open_workspace)
    window.recent_menu = file_menu.addMenu(icon("history"), "Open recent")
    window.recent_menu.aboutToShow.connect(window._fill_recent_menu)
    file_menu.addSeparator()
    for act in (window.act_save, window.act_save_all, window.act_close_tab):
        file_menu.addAction(act)
    file_menu.addSeparator()
    file_menu.addAction(window.act_settings)
    file_menu.addSeparator()
    file_menu.addAction(window.act_quit)

    edit_menu = menu.addMenu("&Edit")
    window.focused_editor = build_edit_menu(
        window, edit_menu, [window.act_find, window.act_replace, window.act_annotate]
    )

    view_menu = menu.addMenu("&View")
    view_menu.addAction(window.act_palette)
    view_menu.addSeparator()
    for dock in (window.explorer_dock, window.knowledge_dock, window.chat_dock, window.ledger_dock):
        view_menu.addAction(dock.toggleViewAction())
    view_menu.addSeparator()
    for act in (
        window.act_focus_explorer,
        window.act_focus_chat,
        window.act_focus_ledger,
        window.act_focus_knowledge,
    ):
        act.setText(f"Go to {act.text().lower()}")
        view_menu.addAction(act)
    view_menu.addSeparator()
    view_menu.addAction(window.act_next_tab)
    view_menu.addAction(window.act_prev_tab)
    appearance = view_menu.addMenu("Appearance")
    group = QActionGroup(window)
    window.appearance_actions = []
    for value, label in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
        act = appearance.addAction(label)
        act.setCheckable(True)
        act.setData(value)
        act.triggered.connect(lambda _c=False, v=value: window.set_appearance(v))
        group.addAction(act)
        window.appearance_actions.append(act)
    window._check_appearance()
    # the Settings dialog's Appearance page changes it too
    window.services.sig_settings_changed.connect(lambda _s: window._check_appearance())
    view_menu.addAction(window.act_reset_layout)

    query_menu = menu.addMenu("&Query")
    build_query_menu(window, query_menu, window.act_cancel_query)

    help_menu = menu.addMenu("&Help")
    help_menu.addAction(window.act_shortcuts)
    help_menu.addAction(icon("refresh"), "Check for updates…", window.check_for_updates)
    help_menu.addAction(window.act_about)
