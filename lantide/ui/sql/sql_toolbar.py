"""The SQL tab's toolbar: Run, Source Run and Stop, where the tab runs (the connection
picker, :mod:`lantide.ui.sql.connection_picker`), the run's purpose with its length count,
and the running state (busy bar, elapsed time or the last run's outcome).

At 1024x700 with the explorer and the chat shown the tab gets about 560 px, less than the
toolbar's items with their words: QToolBar then moves what does not fit, from the end,
into its overflow menu, and the purpose went there. :class:`FitToWidth` makes Run and
Source Run icons (their tooltips and accessible names keep the words) whenever the
toolbar is narrower than its items with those words, and the busy bar and the status
(elided, the whole in its tooltip) give up width before anything is moved out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, Qt
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
from lantide.ui.elided_label import ElidedLabel
from lantide.ui.icons import icon
from lantide.ui.shortcuts import shortcut
from lantide.ui.sql.connection_picker import ConnectionPicker
from lantide.ui.theme import colors

if TYPE_CHECKING:
    from lantide.ui.sql.sql_tab import SqlTabWidget

PURPOSE_PLACEHOLDER = "why this step, for the ledger"
BUSY_MIN_WIDTH = 24  # the busy bar's width when the toolbar is tight (90 with room)
STATUS_MIN_CHARS = "running…"  # what the status keeps when the toolbar is tight


class StatusLabel(ElidedLabel):
    """The running state and the last outcome: as wide as its text when there is room,
    down to :data:`STATUS_MIN_CHARS` (elided, the whole in the tooltip) when there is not,
    so QToolBar squeezes it instead of moving it (and what is before it) out of view."""

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        margins = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(self.text()) + 4
        return QSize(width + margins.left() + margins.right(), QLabel.sizeHint(self).height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        hint = self.sizeHint()
        return QSize(min(hint.width(), self.least_width()), hint.height())

    def least_width(self) -> int:
        """The width it keeps however long its text (room for :data:`STATUS_MIN_CHARS`)."""
        margins = self.contentsMargins()
        least = self.fontMetrics().horizontalAdvance(STATUS_MIN_CHARS) + 4
        return least + margins.left() + margins.right()


class FitToWidth(QObject):
    """Shows Run and Source Run as icons only while the toolbar is narrower than its items
    need with the buttons' words (see the module's doc). The need counts the busy bar and
    the status at their least as if shown, and the purpose field with its count needs the
    same room as without (:func:`purpose_typed`), so typing a purpose, starting a run or
    its outcome never flips the buttons: only the toolbar's width does."""

    def __init__(self, tab: SqlTabWidget, bar: QToolBar):
        super().__init__(bar)
        self.bar = bar
        self.buttons = [
            button
            for action in (tab.run_action, tab.source_run_action)
            if isinstance(button := bar.widgetForAction(action), QToolButton)
        ]
        self._at_least: dict[QWidget, Callable[[], int]] = {
            tab.busy: lambda: BUSY_MIN_WIDTH,
            tab.status_label: tab.status_label.least_width,
        }
        self._with_words: dict[QWidget, int] = {}
        bar.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched is self.bar and event.type() in (
            QEvent.Type.Resize,
            QEvent.Type.Show,
            QEvent.Type.LayoutRequest,
        ):
            self.fit()
        return False

    def compact(self) -> bool:
        """True while the buttons show icons only."""
        return any(
            b.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly for b in self.buttons
        )

    def needed(self) -> int:
        """The toolbar's width for its items at their least, the buttons with words."""
        layout = self.bar.layout()
        if layout is None:  # QToolBar always has its layout
            return 0
        margins = layout.contentsMargins()
        total = margins.left() + margins.right()
        for action in self.bar.actions():
            widget = self.bar.widgetForAction(action)
            if widget is None:
                continue
            if widget in self._with_words:
                width = self._with_words[widget]
            elif widget in self._at_least:
                width = self._at_least[widget]()
            elif action.isVisible():
                width = least_width(widget)
            else:
                continue
            total += width + layout.spacing()
        return total

    def fit(self) -> None:
        for button in self.buttons:  # their width with words, while they show them
            if button.toolButtonStyle() != Qt.ToolButtonStyle.ToolButtonIconOnly:
                self._with_words[button] = button.sizeHint().width()
        style = (
            Qt.ToolButtonStyle.ToolButtonIconOnly
            if self.bar.width() < self.needed()
            else Qt.ToolButtonStyle.ToolButtonTextBesideIcon
        )
        for button in self.buttons:
            if button.toolButtonStyle() != style:
                button.setToolButtonStyle(style)


def least_width(widget: QWidget) -> int:
    """The width a layout can squeeze ``widget`` to (as Qt's own rule does, roughly: an
    explicit minimum, else the minimum hint, else the hint for a fixed one)."""
    policy = widget.sizePolicy().horizontalPolicy()
    hint = widget.sizeHint().width()
    least = widget.minimumWidth() or widget.minimumSizeHint().width()
    if policy == policy.Fixed or least < 0:
        least = hint
    return max(0, min(least, widget.maximumWidth()))


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
        "Source Run: recompute the tabs this one reads, then this tab (Ctrl+Shift+Enter)"
    )
    tab.source_run_action.triggered.connect(lambda: tab.source_run())
    tab.stop_action = QAction(icon("stop"), "Stop", tab)
    tab.stop_action.setToolTip("Stop: cancel the running query")
    tab.stop_action.triggered.connect(tab.cancel)
    for action in (tab.run_action, tab.source_run_action, tab.stop_action):
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        tab.addAction(action)
        bar.addAction(action)
    # Stop is an icon (its tooltip names it): the toolbar is full at 1024 px; Run and
    # Source Run become icons too when the toolbar is narrower still (FitToWidth)
    for action in (tab.run_action, tab.source_run_action, tab.stop_action):
        button = bar.widgetForAction(action)
        if isinstance(button, QToolButton):  # the words stay for a screen reader
            button.setAccessibleName(action.text())
            if action is tab.stop_action:
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
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
    tab.busy.setMinimumWidth(BUSY_MIN_WIDTH)
    tab.busy.setMaximumWidth(90)
    tab.busy.setMaximumHeight(10)
    tab.busy.setTextVisible(False)
    tab.status_label = StatusLabel("", bar)
    tab.status_label.setContentsMargins(6, 0, 6, 0)
    spacer = QWidget(bar)
    spacer.setSizePolicy(
        spacer.sizePolicy().horizontalPolicy().Expanding,
        spacer.sizePolicy().verticalPolicy().Preferred,
    )
    bar.addWidget(spacer)
    tab._busy_action = bar.addWidget(tab.busy)
    bar.addWidget(tab.status_label)
    tab.toolbar_fit = FitToWidth(tab, bar)
    return bar


def purpose_typed(tab: SqlTabWidget, text: str) -> None:
    """``n/40`` once the purpose nears the QEM's limit, in the danger colour past it."""
    n = len(text.strip())
    near = n >= PURPOSE_MAX_CHARS - 10
    tab.purpose_count.setVisible(near)
    tab.purpose_count.setText(f"{n}/{PURPOSE_MAX_CHARS}")
    # Empty, the field is wide enough for its whole hint; with 30 characters typed the
    # hint is gone and the count takes the field's right end, so the two together need
    # no more room than the hint did (at 1024 px the toolbar has none to spare).
    edit = tab.purpose_edit
    least = edit.fontMetrics().horizontalAdvance(PURPOSE_PLACEHOLDER) + 18
    if near:
        count = tab.purpose_count
        least -= count.fontMetrics().horizontalAdvance(count.text()) + 4
    edit.setMinimumWidth(least)
    over = n > PURPOSE_MAX_CHARS
    tab.purpose_count.setStyleSheet(f"color: {colors().danger.name()};" if over else "")
    tab.purpose_count.setToolTip(
        f"{n - PURPOSE_MAX_CHARS} characters too long: a run would be refused"
        if over
        else f"A purpose has at most {PURPOSE_MAX_CHARS} characters"
    )
