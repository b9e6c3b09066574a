"""The main window: explorer, central tabs, chat, ledger and knowledge docks, menus,
toolbar and status bar.

It wires parts together and holds no rules of its own: tabs come from
:class:`~lantide.ui.tab_area.TabAreaWidget`, cross-widget requests (open this, ask the
agent that) arrive through :class:`~lantide.ui.services.AppServices` signals, and engine
work runs in the worker pool. On close it asks about unsaved tabs, saves the layout and
closes the services. The window reports ``sig_idle`` once it is shown, the database is
open (or failed) and the explorer is filled: the point the start-up benchmark measures.

The chat, ledger and knowledge docks exist from the start (so the saved layout restores),
their panels are made once the window is usable (or when a dock is first shown, or the
panel first used, if that comes sooner): their imports, building and loading would
otherwise come before the first paint and beside the database's opening.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDockWidget,
    QMainWindow,
    QMenu,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from lantide.errors import LantideError
from lantide.ui.adaptive_layout import CENTRE_MIN_HEIGHT, CENTRE_MIN_WIDTH, AdaptiveDocks
from lantide.ui.explorer.explorer import ExplorerPanel
from lantide.ui.icons import app_icon, icon
from lantide.ui.layout_state import (
    fit_window_to_screen,
    forget_layout,
    restore_window_layout,
    save_window_layout,
)
from lantide.ui.main_menus import build_actions, build_menus, build_toolbar
from lantide.ui.message_bar import MessageBarWidget
from lantide.ui.services import (
    TAB_KINDS,
    TAB_PLAN,
    TAB_REPORT,
    TAB_SQL,
    TAB_TABLE,
    AppServices,
    TabRef,
)
from lantide.ui.status_bar import StatusBarWidget
from lantide.ui.tab_area import TabAreaWidget, TabFactory
from lantide.ui.welcome import WelcomeWidget
from lantide.ui.window_focus import DialogFocusReturn
from lantide.workspace.layout import sql_tab_path

if TYPE_CHECKING:
    from lantide.ui.chat.chat_panel import ChatPanel
    from lantide.ui.chat.ledger_panel import LedgerPanel
    from lantide.ui.edit_actions import FocusedEditor
    from lantide.ui.explorer.knowledge_panel import KnowledgePanel
    from lantide.ui.integration.host import McpHost

log = logging.getLogger(__name__)
EXPLORER_MIN_WIDTH = 210
# The docks' panels are made at the latest this long after the first paint, even when the
# database is still opening (a large workspace's first open).
PANELS_AT_LATEST_MS = 1500
# Made in this order: the ledger follows the chat's conversation from its first change.
DEFERRED_PANELS = ("ledger", "knowledge", "chat")


def _import_panel_modules(_context) -> None:
    """The deferred panels' modules (most of what making them costs), imported in a worker
    so the UI thread keeps answering meanwhile; they make no Qt object when imported."""
    import lantide.ui.chat.chat_panel
    import lantide.ui.chat.ledger_panel
    import lantide.ui.explorer.knowledge_panel  # noqa: F401 - imported for the panels


def _make_panel(name: str, services: AppServices, parent: QWidget) -> QWidget:
    if name == "chat":
        from lantide.ui.chat.chat_panel import ChatPanel

        return ChatPanel(services, parent)
    if name == "ledger":
        from lantide.ui.chat.ledger_panel import LedgerPanel

        return LedgerPanel(services, parent)
    from lantide.ui.explorer.knowledge_panel import KnowledgePanel

    return KnowledgePanel(services, parent)


def _project_of(ref: TabRef) -> str:
    if ref.project is None:  # only a table tab has none
        raise ValueError(f"a {ref.kind} tab needs a project")
    return ref.project


def _document_tab(services: AppServices, ref: TabRef) -> QWidget:
    from lantide.ui.documents.document_tab import DocumentTabWidget

    if ref.kind == TAB_REPORT and ref.name.lower().endswith((".html", ".htm")):
        from lantide.ui.documents.html_report_tab import HtmlReportTabWidget

        return HtmlReportTabWidget(services, _project_of(ref), ref.name)

    return DocumentTabWidget(services, _project_of(ref), ref.kind)


def _sql_tab(services: AppServices, ref: TabRef) -> QWidget:
    from lantide.ui.sql.sql_tab import SqlTabWidget

    return SqlTabWidget(services, _project_of(ref), ref.name)


def _table_tab(services: AppServices, ref: TabRef) -> QWidget:
    from lantide.ui.explorer.table_browser import TableBrowserWidget

    return TableBrowserWidget(services, ref.name)


TAB_FACTORIES: dict[str, TabFactory] = {
    TAB_PLAN: _document_tab,
    TAB_REPORT: _document_tab,
    TAB_SQL: _sql_tab,
    TAB_TABLE: _table_tab,
}


class MainWindow(QMainWindow):
    sig_shown = Signal()  # the first paint is done and the event loop runs
    sig_idle = Signal()  # shown, database open (or failed), explorer filled
    sig_workspace_requested = Signal(str)  # the analyst asked to open another workspace
    edit_actions: dict[str, QAction]  # filled by build_edit_menu
    query_actions: dict[str, QAction]  # filled by build_query_menu
    mcp_host: McpHost  # set by lantide.ui.integration.install
    # made by lantide.ui.main_menus (build_actions, build_toolbar, build_menus)
    act_new_project: QAction
    act_new_sql: QAction
    act_open_plan: QAction
    act_open_report: QAction
    act_open_workspace: QAction
    act_save: QAction
    act_save_all: QAction
    act_close_tab: QAction
    act_next_tab: QAction
    act_prev_tab: QAction
    act_settings: QAction
    act_quit: QAction
    act_cancel_query: QAction
    act_shortcuts: QAction
    act_about: QAction
    act_palette: QAction
    act_reset_layout: QAction
    act_focus_explorer: QAction
    act_focus_chat: QAction
    act_focus_ledger: QAction
    act_focus_knowledge: QAction
    act_find: QAction
    act_replace: QAction
    act_annotate: QAction
    toolbar: QToolBar
    project_combo: QComboBox
    status_combo: QComboBox
    recent_menu: QMenu
    appearance_actions: list[QAction]
    focused_editor: FocusedEditor

    def __init__(self, services: AppServices, *, restore: bool = True):
        super().__init__()
        self.services = services
        self.setObjectName("LantideMainWindow")
        self.setWindowIcon(app_icon())
        fit_window_to_screen(self, QSize(1360, 840))  # smaller on a small screen
        self.setDockNestingEnabled(True)
        self._closing = False
        self._painted = False
        self._idle_emitted = False
        # Idle once the database is open (or failed) and the explorer is filled.
        self._waiting_for = {"explorer"}  # its tree, with the database's tables
        if services.query is None and services.query_error is None:
            self._waiting_for.add("database")

        self.tabs = TabAreaWidget(services, TAB_FACTORIES, self)
        self.welcome = WelcomeWidget(services, self)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.tabs)
        self.message_bar = MessageBarWidget(self)
        central = QWidget(self)
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.message_bar)
        column.addWidget(self.stack, 1)
        # An explicit minimum: a tab being added briefly asks for more, and the window
        # must not widen itself for that (the docks make room instead, see AdaptiveDocks).
        central.setMinimumSize(CENTRE_MIN_WIDTH - 80, CENTRE_MIN_HEIGHT - 100)
        self.setCentralWidget(central)

        self._build_docks()
        self.status = StatusBarWidget(services, self)
        self.setStatusBar(self.status)
        build_actions(self)
        build_toolbar(self)
        build_menus(self)
        # active again after its dialogs close, window manager or not (window-wide keys)
        self.dialog_focus = DialogFocusReturn(self)

        self.tabs.sig_count_changed.connect(self._tab_count_changed)
        self.tabs.sig_current_changed.connect(lambda _w: self._update_title())
        self.welcome.sig_action_requested.connect(self._welcome_action)
        self.welcome.sig_workspace_requested.connect(self.sig_workspace_requested.emit)
        self.status.sig_settings_requested.connect(self.open_settings)
        services.sig_open_requested.connect(self._open_requested)
        services.sig_agent_asked.connect(self._ask_agent)
        services.sig_message_posted.connect(self.message_bar.show_message)
        services.sig_project_focused.connect(lambda _n: self._project_focused())
        services.sig_query_ready.connect(lambda _s: self._ready("database"))
        services.sig_query_failed.connect(self._database_failed)
        if services.query_error is not None:  # it failed before this window existed
            self._database_failed(services.query_error)
        self.explorer.sig_tree_refreshed.connect(self._explorer_refreshed)

        if restore:
            restore_window_layout(self)
        self._update_title()
        self._tab_count_changed(0)
        if restore:  # after the first paint: the window shows before documents load
            self.sig_shown.connect(lambda: QTimer.singleShot(0, self, self.restore_session))
        # the docks' panels once usable (their modules load in a worker first)
        self.sig_idle.connect(self._load_panels)
        self.sig_shown.connect(
            lambda: QTimer.singleShot(PANELS_AT_LATEST_MS, self, self.fill_docks)
        )

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            QTimer.singleShot(0, self, self._first_painted)

    def _first_painted(self) -> None:
        # The frame (title bar, borders) is known only once the window is on screen.
        fit_window_to_screen(self)
        self.sig_shown.emit()

    # -- building --------------------------------------------------------------------------
    def _dock(
        self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea, icon_name: str
    ) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        dock.toggleViewAction().setIcon(icon(icon_name))
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        s = self.services
        self.explorer = ExplorerPanel(s, self)
        self.explorer.setMinimumWidth(EXPLORER_MIN_WIDTH)  # names stay readable beside counts
        self.explorer.sig_connections_requested.connect(lambda: self.open_settings("Connections"))
        self._panels: dict[str, QWidget] = {}  # the deferred docks' panels made so far
        left, right, bottom = (
            Qt.DockWidgetArea.LeftDockWidgetArea,
            Qt.DockWidgetArea.RightDockWidgetArea,
            Qt.DockWidgetArea.BottomDockWidgetArea,
        )
        self.explorer_dock = self._dock(
            "Explorer", "ExplorerDock", self.explorer, left, "workspace"
        )
        self.knowledge_dock = self._dock(
            "Knowledge", "KnowledgeDock", QWidget(self), left, "knowledge"
        )
        self.tabifyDockWidget(self.explorer_dock, self.knowledge_dock)
        self.explorer_dock.raise_()
        self.chat_dock = self._dock("Chat", "ChatDock", QWidget(self), right, "chat")
        self.ledger_dock = self._dock(
            "Ledger and query history", "LedgerDock", QWidget(self), bottom, "ledger"
        )
        self._deferred_docks = {
            "chat": self.chat_dock,
            "ledger": self.ledger_dock,
            "knowledge": self.knowledge_dock,
        }
        for name, dock in self._deferred_docks.items():
            # a dock the analyst brings up before the panels are made gets its panel now
            dock.visibilityChanged.connect(
                lambda visible, n=name: visible and self._painted and self._panel(n)
            )
        from lantide.ui.integration import install

        install(self)  # Agent Integration: the MCP server in the app, the Activity dock
        self.default_dock_sizes()
        # A small window: the docks give up room before the tabs do.
        self.adaptive_docks = AdaptiveDocks(
            self, [self.explorer_dock, self.knowledge_dock, self.chat_dock], [self.ledger_dock]
        )

    # -- the deferred docks' panels ---------------------------------------------------------
    @property
    def chat(self) -> ChatPanel:
        from lantide.ui.chat.chat_panel import ChatPanel

        panel = self._panel("chat")
        assert isinstance(panel, ChatPanel)
        return panel

    @property
    def ledger(self) -> LedgerPanel:
        from lantide.ui.chat.ledger_panel import LedgerPanel

        panel = self._panel("ledger")
        assert isinstance(panel, LedgerPanel)
        return panel

    @property
    def knowledge(self) -> KnowledgePanel:
        from lantide.ui.explorer.knowledge_panel import KnowledgePanel

        panel = self._panel("knowledge")
        assert isinstance(panel, KnowledgePanel)
        return panel

    def panel_made(self, name: str) -> bool:
        """The panel of the ``name`` dock (chat, ledger, knowledge) exists."""
        return name in self._panels

    def _load_panels(self) -> None:
        self.services.workers.submit(
            _import_panel_modules,
            name="load the docks' panels",
            on_result=lambda _none: self.fill_docks(),
            on_error=lambda _exc: self.fill_docks(),  # made on the UI thread then
        )

    def fill_docks(self) -> None:
        """Make the docks' panels not made yet, one per turn of the event loop."""
        if self._closing:
            return
        missing = [n for n in DEFERRED_PANELS if n not in self._panels]
        if missing:
            self._panel(missing[0])
            if len(missing) > 1:
                QTimer.singleShot(0, self, self.fill_docks)

    def _panel(self, name: str) -> QWidget:
        panel = self._panels.get(name)
        if panel is None:
            dock = self._deferred_docks[name]
            panel = _make_panel(name, self.services, self)
            self._panels[name] = panel
            placeholder = dock.widget()
            dock.setWidget(panel)
            panel.show()
            if placeholder is not None and placeholder is not panel:
                placeholder.hide()
                placeholder.deleteLater()
        return panel

    def default_dock_sizes(self) -> None:
        """Explorer and chat wide enough to read, the ledger a strip below the tabs."""
        self.resizeDocks(
            [self.explorer_dock, self.chat_dock], [270, 420], Qt.Orientation.Horizontal
        )
        self.resizeDocks([self.ledger_dock], [190], Qt.Orientation.Vertical)

    # -- idle (start-up finished) ------------------------------------------------------------
    def _ready(self, part: str) -> None:
        self._waiting_for.discard(part)
        if not self._waiting_for and not self._idle_emitted:
            self._idle_emitted = True
            QTimer.singleShot(0, self, self.sig_idle.emit)  # after the paint; not once deleted

    def is_idle(self) -> bool:
        return self._idle_emitted

    def _database_failed(self, exc: BaseException) -> None:
        self._ready("database")
        if isinstance(exc, LantideError) and exc.code == "CACHE_UNREADABLE":
            self.message_bar.show_message(
                f"Opening the database: {exc.message} — it holds only cached results; set "
                "aside (renamed, not deleted), a fresh one is built and Source Run recomputes "
                "the tabs.",
                "error",
                action=("Set it aside and start fresh", self.set_aside_cache),
            )
            return
        self.services.report_error(exc, "Opening the database")

    def set_aside_cache(self) -> None:
        """Rename the unreadable cache database (in a worker) and open a fresh one."""
        from lantide.query.engine import set_aside_cache

        path = self.services.workspace.cache_db_path

        def done(target) -> None:
            self.services.post_message(
                f"The unreadable cache database was kept as {target.name}; building a fresh one.",
                "info",
            )
            self.services.open_query_service()

        self.services.workers.submit(
            lambda _ctx: set_aside_cache(path),
            on_result=done,
            on_error=lambda e: self.services.report_error(e, "Setting the cache database aside"),
            name="set the cache aside",
        )

    def _explorer_refreshed(self) -> None:
        self._fill_projects()
        # filled means the cached tables listed too (or the database failed to open)
        if self.explorer.tables_listed() or self.services.query_error is not None:
            self._ready("explorer")

    # -- tabs ------------------------------------------------------------------------------
    def open_tab(
        self, kind: str, project: str | None = None, name: str = "", *, activate: bool = True
    ) -> QWidget | None:
        if kind in (TAB_PLAN, TAB_REPORT, TAB_SQL) and not project:
            project = self.services.focused_project_name()
            if not project:
                self.services.post_message(
                    "Focus a project first (double-click it in the explorer).", "warning"
                )
                return None
        if kind in (TAB_PLAN, TAB_REPORT) and not name and project is not None:
            try:
                p = self.services.workspace.project(project)
                name = p.plan if kind == TAB_PLAN else p.report
            except Exception as exc:
                self.services.report_error(exc, "Opening the document")
                return None
        try:
            return self.tabs.open(
                TabRef(kind, project if kind != TAB_TABLE else None, name), activate=activate
            )
        except Exception as exc:
            self.services.report_error(exc, f"Opening {name or kind}")
            return None

    def open_document(self, kind: str) -> QWidget | None:
        return self.open_tab(kind, self.services.focused_project_name())

    def _open_requested(self, request: dict) -> None:
        kind = request.get("kind")
        if kind == "knowledge":
            self._show_dock(self.knowledge_dock)
            show = getattr(self.knowledge, "show_project", None)
            if callable(show):
                show(request.get("project"))
            return
        if kind in TAB_KINDS:
            widget = self.open_tab(kind, request.get("project"), request.get("name") or "")
            then = getattr(widget, "source_run_when_loaded", None)
            if request.get("then") == "source_run" and callable(then):
                then()  # the tab's own Source Run: its progress view and Stop

    def restore_session(self) -> None:
        """Reopen the tabs of the last session; a tab whose file is gone is skipped."""
        session = self.services.saved_session()
        rows = session.get("open_tabs")  # session.json may be hand-edited
        refs = [TabRef.from_dict(d) for d in rows] if isinstance(rows, list) else []
        active = TabRef.from_dict(session.get("active_tab") or {})
        for ref in refs:
            if ref is not None and self._still_exists(ref):
                self.open_tab(ref.kind, ref.project, ref.name, activate=False)
        if active is not None:
            widget = self.tabs.find_tab(active)
            if widget is not None:
                self.tabs.setCurrentWidget(widget)

    def _still_exists(self, ref: TabRef) -> bool:
        if ref.kind == TAB_TABLE:
            return True  # the table browser says so itself if the table is gone
        pdir = self.services.workspace.projects_dir / (ref.project or "")
        if ref.kind == TAB_SQL:
            return sql_tab_path(pdir, ref.name).is_file()
        return (pdir / ref.name).is_file() if ref.name else pdir.is_dir()

    def _tab_count_changed(self, count: int) -> None:
        self.stack.setCurrentWidget(self.tabs if count else self.welcome)
        self._update_title()

    def _on_current(self, method: str) -> None:
        widget = self.tabs.currentWidget()
        fn = getattr(widget, method, None) if widget is not None else None
        if callable(fn):
            fn()

    def _update_title(self) -> None:
        parts = []
        widget = self.tabs.currentWidget() if self.tabs.count() else None
        if widget is not None:
            ref = self.tabs.ref_of(widget)
            parts.append(self.tabs.title_of(widget) + (" ●" if ref.dirty else ""))
            if ref.project:
                parts.append(ref.project)
        parts += [self.services.workspace.name, "Lantide"]
        self.setWindowTitle(" — ".join(parts))

    # -- projects ------------------------------------------------------------------------
    def _fill_projects(self) -> None:
        snapshot = self.explorer.snapshot()
        projects = snapshot["projects"] if snapshot else []
        focused = self.services.focused_project_name()
        combo = self.project_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItem("(no project)", None)
        for p in projects:
            combo.addItem(icon("project"), p["name"], p["dir"])
            if p["dir"] == focused:
                combo.setCurrentIndex(combo.count() - 1)
                self.status_combo.setCurrentText(p["status"])
        combo.blockSignals(False)
        self.status_combo.setEnabled(focused is not None)
        self.act_open_plan.setEnabled(focused is not None)
        self.act_open_report.setEnabled(focused is not None)

    def _project_chosen(self, index: int) -> None:
        name = self.project_combo.itemData(index)
        try:
            self.services.focus_project(name)
        except Exception as exc:
            self.services.report_error(exc, "Focusing the project")

    def _project_focused(self) -> None:
        self._fill_projects()
        self._update_title()

    def _status_chosen(self, index: int) -> None:
        project = self.services.focused_project_name()
        status = self.status_combo.itemText(index)
        if not project:
            return
        ws = self.services.workspace

        def status_set(_result) -> None:
            self.explorer.refresh()
            self.services.post_message(f"{project} is now {status}.")

        def status_refused(exc: BaseException) -> None:
            # refused (executing needs the approved Plan): the combo shows the real status
            self.services.report_error(exc, "Setting the status")
            self.explorer.refresh()

        self.services.workers.submit(
            lambda _ctx: ws.project(project).set_status(status),
            on_result=status_set,
            on_error=status_refused,
            name="set project status",
        )

    def new_sql_tab(self) -> None:
        project = self.services.focused_project_name()
        if not project:
            self.services.post_message("Focus a project first, then create its SQL tab.", "warning")
            return
        self.explorer.new_sql_tab(project)

    # -- docks ---------------------------------------------------------------------------
    def _show_dock(self, dock: QDockWidget) -> None:
        for name, deferred in self._deferred_docks.items():
            if deferred is dock:
                self._panel(name)
        dock.show()
        dock.raise_()
        dock.widget().setFocus()

    def _focus_chat(self) -> None:
        self._show_dock(self.chat_dock)
        focus = getattr(self.chat, "focus_input", None)
        if callable(focus):
            focus()

    def _ask_agent(self, text: str) -> None:
        self._show_dock(self.chat_dock)
        self.chat.ask(text)

    def reset_layout(self) -> None:
        forget_layout()
        for dock, area in (
            (self.explorer_dock, Qt.DockWidgetArea.LeftDockWidgetArea),
            (self.knowledge_dock, Qt.DockWidgetArea.LeftDockWidgetArea),
            (self.chat_dock, Qt.DockWidgetArea.RightDockWidgetArea),
            (self.ledger_dock, Qt.DockWidgetArea.BottomDockWidgetArea),
        ):
            dock.setFloating(False)
            self.addDockWidget(area, dock)
            dock.show()
        self.tabifyDockWidget(self.explorer_dock, self.knowledge_dock)
        self.explorer_dock.raise_()
        self.default_dock_sizes()

    # -- dialogs -------------------------------------------------------------------------
    def open_settings(self, page: str | None = None) -> None:
        from lantide.ui.settings.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.services, self)
        if page:
            dialog.show_page(page)
        dialog.exec()

    def show_shortcuts(self) -> None:
        from lantide.ui.help_dialogs import ShortcutsDialog

        ShortcutsDialog(self).exec()

    def show_command_palette(self):
        from lantide.ui.command_palette import open_palette

        self.palette = open_palette(self)
        return self.palette

    def check_for_updates(self):
        from lantide.ui.update_check import open_update_dialog

        self.update_dialog = open_update_dialog(self)
        return self.update_dialog

    def show_about(self) -> None:
        from lantide.ui.help_dialogs import AboutDialog

        AboutDialog(self).exec()

    def _check_appearance(self) -> None:
        for act in self.appearance_actions:
            act.setChecked(act.data() == self.services.settings.appearance)

    def set_appearance(self, appearance: str) -> None:
        from lantide.ui.theme import install_theme

        app = QApplication.instance()
        if isinstance(app, QApplication):
            install_theme(app, appearance)
        self.services.settings.appearance = appearance
        self._check_appearance()
        try:
            self.services.save_settings()
        except Exception as exc:
            self.services.report_error(exc, "Saving the settings")

    def choose_workspace(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        folder = QFileDialog.getExistingDirectory(
            self, "Open workspace", str(self.services.workspace.root.parent)
        )
        if folder:
            self.sig_workspace_requested.emit(folder)

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        current = self.services.workspace.root
        recents = [r for r in self.services.settings.recent_workspaces if Path(r) != current]
        for path in recents:
            act = self.recent_menu.addAction(icon("workspace"), f"{Path(path).name}  —  {path}")
            act.triggered.connect(lambda _c=False, p=path: self.sig_workspace_requested.emit(p))
        if not recents:
            self.recent_menu.addAction("No other workspace yet").setEnabled(False)

    def _welcome_action(self, action: str) -> None:
        {
            "new_sql_tab": self.new_sql_tab,
            "new_project": self.explorer.new_project,
            "settings": self.open_settings,
            "open_workspace": self.choose_workspace,
        }[action]()

    # -- closing -------------------------------------------------------------------------
    def confirm_close(self) -> bool:
        """Ask about unsaved tabs; True when the window may close."""
        return self.tabs.confirm_close_all()

    def shutdown(self) -> None:
        """Save the layout and close the services (the caller decided to close)."""
        if self._closing:
            return
        self._closing = True
        try:
            save_window_layout(self)
        except Exception as exc:
            log.warning("saving the layout: %s", exc)
        self.tabs.close_all(report=False)  # session.json keeps the tabs for the next start
        self.mcp_host.stop()  # outside agents' calls end before the engine closes
        self.services.close()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        if not self._closing and not self.confirm_close():
            event.ignore()
            return
        self.shutdown()
        event.accept()
