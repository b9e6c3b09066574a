"""The central tab area: Plan/Report, SQL and table tabs, one per document.

Opening something already open switches to it. Each tab widget exposes ``title()``,
``is_dirty()``, ``save()`` and ``unsaved_text()`` (where meaningful) and
``sig_title_changed``; the tab bar shows the title with a dot when dirty (widgets return
the bare title). Closing a dirty tab asks
Save / Discard / Cancel. Whenever tabs open, close, switch or change dirty state, the
open-tab state goes to :meth:`AppServices.set_open_tabs` (the agent reads it, and
session.json keeps it for the next start).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QTabBar, QTabWidget, QToolButton, QWidget

from lantide.ui.adaptive_layout import ReadableTabBar
from lantide.ui.icons import icon
from lantide.ui.services import TAB_PLAN, TAB_REPORT, TAB_SQL, TAB_TABLE, AppServices, TabRef

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMessageBox

log = logging.getLogger(__name__)

DIRTY_MARK = " ●"
_ICONS = {TAB_PLAN: "plan", TAB_REPORT: "report", TAB_SQL: "sql-tab", TAB_TABLE: "table"}

TabFactory = Callable[[AppServices, TabRef], QWidget]


def ask_save_changes(parent: QWidget, names: list[str]) -> QMessageBox.StandardButton:
    """Save / Discard / Cancel for unsaved tabs; returns the button chosen."""
    from PySide6.QtWidgets import QMessageBox  # made when asked, not with the window

    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Unsaved changes")
    if len(names) == 1:
        box.setText(f"{names[0]} has changes that are not saved.")
    else:
        box.setText(f"{len(names)} tabs have changes that are not saved:")
        box.setInformativeText("\n".join(names))
    box.setStandardButtons(
        QMessageBox.StandardButton.Save
        | QMessageBox.StandardButton.Discard
        | QMessageBox.StandardButton.Cancel
    )
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    box.setObjectName("UnsavedChangesDialog")
    return QMessageBox.StandardButton(box.exec())


class TabAreaWidget(QTabWidget):
    # The number of open tabs changed (the main window swaps in the welcome page at 0).
    sig_count_changed = Signal(int)
    # The current tab changed (the widget or None).
    sig_current_changed = Signal(object)

    def __init__(
        self, services: AppServices, factories: dict[str, TabFactory], parent: QWidget | None = None
    ):
        super().__init__(parent)
        self.services = services
        self.factories = factories
        self.setObjectName("TabArea")
        self.setTabBar(ReadableTabBar(self))  # titles elide in the middle, never to "…"
        self.setDocumentMode(True)
        self.setTabsClosable(True)
        self.setMovable(True)
        self.setElideMode(Qt.TextElideMode.ElideMiddle)
        self._refs: dict[int, TabRef] = {}  # id(widget) -> what it shows
        services.set_unsaved_text_source(self.current_unsaved_text)
        services.sig_sql_tab_renamed.connect(self._sql_tab_renamed)
        self.tabCloseRequested.connect(lambda i: self.close_tab(i))
        self.currentChanged.connect(self._current_changed)
        self.tabBar().tabMoved.connect(lambda *_: self.report_state())
        # right-click on a tab: close others, copy its path, show it (lantide.ui.tab_menu)
        self.tabBar().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tabBar().customContextMenuRequested.connect(self._tab_menu)

    def _tab_menu(self, pos) -> None:
        from lantide.ui.tab_menu import show_tab_menu

        self.tab_menu = show_tab_menu(self, pos)

    # -- opening -------------------------------------------------------------------------
    def find_tab(self, ref: TabRef) -> QWidget | None:
        for w in self.widgets():
            if self.ref_of(w).key() == ref.key():
                return w
        return None

    def open(self, ref: TabRef, *, activate: bool = True) -> QWidget | None:
        """Open ``ref`` (or switch to it); None when its kind cannot be opened."""
        existing = self.find_tab(ref)
        if existing is not None:
            if activate:
                self.setCurrentWidget(existing)
            return existing
        factory = self.factories.get(ref.kind)
        if factory is None:
            log.warning("no tab for %s", ref)
            return None
        widget = factory(self.services, ref)
        self._refs[id(widget)] = TabRef(ref.kind, ref.project, ref.name)
        index = self.addTab(widget, icon(_ICONS.get(ref.kind, "table")), "")
        close = QToolButton(self)
        close.setIcon(icon("close"))
        close.setAutoRaise(True)
        close.setIconSize(QSize(12, 12))
        close.setToolTip("Close (Ctrl+W)")
        close.clicked.connect(lambda _c=False, w=widget: self.close_tab(self.indexOf(w)))
        self.tabBar().setTabButton(index, QTabBar.ButtonPosition.RightSide, close)
        self._update_title(widget)
        signal = getattr(widget, "sig_title_changed", None)
        if signal is not None:
            signal.connect(lambda *_a, w=widget: self._title_changed(w))
        dirty_signal = getattr(widget, "sig_dirty_changed", None)
        if dirty_signal is not None:
            dirty_signal.connect(lambda *_a, w=widget: self._title_changed(w))
        if activate:
            self.setCurrentIndex(index)
        self.sig_count_changed.emit(self.count())
        self.report_state()
        return widget

    def _sql_tab_renamed(self, project: str, old: str, new: str) -> None:
        for widget in self.widgets():
            ref = self.ref_of(widget)
            follow = getattr(widget, "follow_rename", None)
            if ref.kind == TAB_SQL and ref.project == project and ref.name == old and follow:
                follow(new)
                self._refs[id(widget)] = TabRef(TAB_SQL, project, new)
                self._update_title(widget)
        self.report_state()

    # -- titles and state ----------------------------------------------------------------
    def ref_of(self, widget: QWidget) -> TabRef:
        ref = self._refs.get(id(widget), TabRef("table"))
        # A SQL tab can be renamed from inside; follow its current name.
        name = getattr(widget, "tab_name", None)
        if ref.kind == TAB_SQL and isinstance(name, str) and name and name != ref.name:
            ref = TabRef(ref.kind, ref.project, name)
            self._refs[id(widget)] = ref
        return TabRef(ref.kind, ref.project, ref.name, dirty=self.is_dirty(widget))

    @staticmethod
    def is_dirty(widget: QWidget) -> bool:
        check = getattr(widget, "is_dirty", None)
        try:
            return bool(check()) if check else False
        except Exception:
            return False

    @staticmethod
    def title_of(widget: QWidget) -> str:
        title = getattr(widget, "title", None)
        return title() if callable(title) else widget.objectName() or "Tab"

    def _update_title(self, widget: QWidget) -> None:
        index = self.indexOf(widget)
        if index < 0:
            return
        text = self.title_of(widget)
        self.setTabText(index, text + (DIRTY_MARK if self.is_dirty(widget) else ""))
        ref = self.ref_of(widget)
        where = f"{ref.project} · " if ref.project else ""
        self.setTabToolTip(index, f"{where}{text}" + (" (not saved)" if ref.dirty else ""))

    def _title_changed(self, widget: QWidget) -> None:
        self._update_title(widget)
        self.report_state()
        if widget is self.currentWidget():
            self.sig_current_changed.emit(widget)

    def _current_changed(self, _index: int) -> None:
        self.report_state()
        self.sig_current_changed.emit(self.currentWidget())

    def report_state(self) -> None:
        tabs = [self.ref_of(w) for w in self.widgets()]
        current = self.currentWidget()
        self.services.set_open_tabs(tabs, self.ref_of(current) if current is not None else None)

    def current_unsaved_text(self) -> str | None:
        """The current tab's text when it has unsaved edits (tabs that edit text say so
        with ``unsaved_text()``), else None."""
        read = getattr(self.currentWidget(), "unsaved_text", None)
        return read() if callable(read) else None

    def widgets(self) -> list[QWidget]:
        tabs = (self.widget(i) for i in range(self.count()))
        return [w for w in tabs if w is not None]  # never None in range

    def dirty_widgets(self) -> list[QWidget]:
        return [w for w in self.widgets() if self.is_dirty(w)]

    # -- saving and closing ----------------------------------------------------------------
    def save_widget(self, widget: QWidget | None, *, wait: bool = False) -> bool:
        """Save a tab; ``wait`` (before closing it) waits for an asynchronous save to end."""
        if widget is None:
            return True
        save = getattr(widget, "save_and_wait", None) if wait else None
        save = save if callable(save) else getattr(widget, "save", None)
        if not callable(save):
            return True
        try:
            ok = save()
        except Exception as exc:  # the widget reports its own errors; never lose the tab
            self.services.report_error(exc, f"Saving {self.title_of(widget)}")
            return False
        self._update_title(widget)
        self.report_state()
        return ok is not False

    def save_current(self) -> bool:
        return self.save_widget(self.currentWidget())

    def save_all(self, *, wait: bool = False) -> bool:
        return all([self.save_widget(w, wait=wait) for w in self.dirty_widgets()])

    def close_tab(self, index: int, *, ask: bool = True) -> bool:
        widget = self.widget(index)
        if widget is None:
            return True
        if ask and self.is_dirty(widget):
            from PySide6.QtWidgets import QMessageBox

            answer = ask_save_changes(self, [self.title_of(widget)])
            if answer == QMessageBox.StandardButton.Cancel:
                return False
            if answer == QMessageBox.StandardButton.Save and not self.save_widget(
                widget, wait=True
            ):
                return False
        self._remove(widget)
        return True

    def _remove(self, widget: QWidget, *, report: bool = True) -> None:
        index = self.indexOf(widget)
        if index >= 0:
            self.removeTab(index)
        self._refs.pop(id(widget), None)
        shutdown = getattr(widget, "shutdown", None)
        if callable(shutdown):
            try:
                shutdown()
            except Exception as exc:
                log.warning("closing a tab: %s", exc)
        widget.deleteLater()
        if report:
            self.sig_count_changed.emit(self.count())
            self.report_state()

    def close_current(self) -> bool:
        return self.close_tab(self.currentIndex()) if self.count() else True

    def confirm_close_all(self) -> bool:
        """Before quitting or switching workspace: True when nothing unsaved is left."""
        dirty = self.dirty_widgets()
        if not dirty:
            return True
        from PySide6.QtWidgets import QMessageBox

        answer = ask_save_changes(self, [self.title_of(w) for w in dirty])
        if answer == QMessageBox.StandardButton.Cancel:
            return False
        if answer == QMessageBox.StandardButton.Save:
            return self.save_all(wait=True)
        return True

    def close_all(self, *, report: bool = True) -> None:
        """Close every tab without asking; ``report=False`` on shutdown keeps session.json."""
        if not report:
            self.blockSignals(True)
        for widget in self.widgets():
            self._remove(widget, report=report)

    def next_tab(self, step: int = 1) -> None:
        if self.count():
            self.setCurrentIndex((self.currentIndex() + step) % self.count())
