"""The SQL tab's toolbar: Run, Source Run and Stop, where the tab runs (the connection
picker, :mod:`lantide.ui.sql.connection_picker`), the run's purpose with its length count,
and the running state (busy bar, elapsed time or the last run's outcome)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QToolBar,
    QToolButton,
    QWidget,
)

from lantide.query.qem import PURPOSE_MAX_CHARS
from lantide.ui.icons import icon
from lantide.ui.shortcuts import shortcut
from lantide.ui.sql.connection_picker import ConnectionPicker
from lantide.ui.theme import colors

if TYPE_CHECKING:
    from lantide.ui.sql.sql_tab import SqlTabWidget

PURPOSE_PLACEHOLDER = "why this step, for the ledger"


def build_toolbar(tab: SqlTabWidget) -> QToolBar:
    """The toolbar, its actions bound on ``tab`` (``run_action``, ``source_run_action``,
    ``stop_action``, ``connection_picker``, ``purpose_edit``, ``busy``, ``status_label``)."""
    bar = QToolBar(tab)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    tab.run_action = QAction(icon("run", "accent"), "Run", tab)
    tab.run_action.setShortcuts([shortcut("sql_run"), QKeySequence("Ctrl+Enter")])
    tab.run_action.setToolTip("Run the tab, or the selected SQL (Ctrl+Enter)")
    tab.run_action.triggered.connect(tab.run)
    tab.source_run_action = QAction(icon("source-run"), "Source Run", tab)
    tab.source_run_action.setShortcuts(
        [shortcut("sql_source_run"), QKeySequence("Ctrl+Shift+Enter")]
    )
    tab.source_run_action.setToolTip(
        "Recompute the tabs this one reads, then this tab (Ctrl+Shift+Enter)"
    )
    tab.source_run_action.triggered.connect(lambda: tab.source_run())
    tab.stop_action = QAction(icon("stop"), "Stop", tab)
    tab.stop_action.setToolTip("Stop: cancel the running query")
    tab.stop_action.triggered.connect(tab.cancel)
    for action in (tab.run_action, tab.source_run_action, tab.stop_action):
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        tab.addAction(action)
        bar.addAction(action)
    # Stop is an icon (its tooltip names it): the toolbar is full at 1024 px
    stop_button = bar.widgetForAction(tab.stop_action)
    if isinstance(stop_button, QToolButton):
        stop_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        stop_button.setAccessibleName("Stop")
    # Find (Ctrl+F) and Replace (Ctrl+H) are the window's actions, which call
    # show_find / show_replace: a second binding here made Qt call both keys
    # ambiguous and run neither. F3 / Shift+F3 have no window-wide owner.
    for key, slot in (
        ("find_next", lambda: tab.find_bar.find_next(False)),
        ("find_previous", lambda: tab.find_bar.find_next(True)),
    ):
        action = QAction(tab)
        action.setShortcut(shortcut(key))
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        tab.addAction(action)
    bar.addSeparator()
    tab.connection_picker = ConnectionPicker(bar)
    bar.addWidget(tab.connection_picker)
    purpose_label = QLabel("Purpose", bar)
    purpose_label.setContentsMargins(4, 0, 2, 0)
    bar.addWidget(purpose_label)
    tab.purpose_edit = QLineEdit(bar)
    # longer than the QEM's 40 may be typed (nothing pasted is cut); the count says so
    tab.purpose_edit.setMaxLength(200)
    tab.purpose_edit.setPlaceholderText(PURPOSE_PLACEHOLDER)
    tab.purpose_edit.setToolTip(
        f"Why this step is run, in at most {PURPOSE_MAX_CHARS} characters; written to the "
        "ledger. While the project is executing, a run with a purpose counts as formal "
        "evidence; without one it runs as an exploratory step."
    )
    tab.purpose_edit.setMinimumWidth(  # the whole placeholder shows
        tab.purpose_edit.fontMetrics().horizontalAdvance(PURPOSE_PLACEHOLDER) + 18
    )
    tab.purpose_edit.setMaximumWidth(340)
    tab.purpose_edit.returnPressed.connect(tab.run)
    # the limit is told while typing, before a run is refused for it: "35/40" beside
    purpose_box = QWidget(bar)
    box = QHBoxLayout(purpose_box)
    box.setContentsMargins(0, 0, 0, 0)
    box.setSpacing(4)
    box.addWidget(tab.purpose_edit)
    tab.purpose_count = QLabel(purpose_box)
    box.addWidget(tab.purpose_count)
    tab.purpose_edit.textChanged.connect(lambda text: purpose_typed(tab, text))
    bar.addWidget(purpose_box)
    purpose_typed(tab, "")
    tab.busy = QProgressBar(bar)
    tab.busy.setRange(0, 0)
    tab.busy.setMaximumWidth(90)
    tab.busy.setMaximumHeight(10)
    tab.busy.setTextVisible(False)
    tab.status_label = QLabel("", bar)
    tab.status_label.setContentsMargins(8, 0, 8, 0)
    spacer = QWidget(bar)
    spacer.setSizePolicy(
        spacer.sizePolicy().horizontalPolicy().Expanding,
        spacer.sizePolicy().verticalPolicy().Preferred,
    )
    bar.addWidget(spacer)
    tab._busy_action = bar.addWidget(tab.busy)
    bar.addWidget(tab.status_label)
    return bar


def purpose_typed(tab: SqlTabWidget, text: str) -> None:
    """``n/40`` once the purpose nears the QEM's limit, in the danger colour past it."""
    n = len(text.strip())
    near = n >= PURPOSE_MAX_CHARS - 10
    tab.purpose_count.setVisible(near)
    tab.purpose_count.setText(f"{n}/{PURPOSE_MAX_CHARS}")
    over = n > PURPOSE_MAX_CHARS
    tab.purpose_count.setStyleSheet(f"color: {colors().danger.name()};" if over else "")
    tab.purpose_count.setToolTip(
        f"{n - PURPOSE_MAX_CHARS} characters too long: a run would be refused"
        if over
        else f"A purpose has at most {PURPOSE_MAX_CHARS} characters"
    )
