"""The page the central area shows when no tab is open: where am I, what can I do next.

It scrolls rather than asking for its full width, so it never squeezes the docks beside it
(the chat stays wide enough to read).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.icons import app_icon, icon
from lantide.ui.services import TAB_PLAN, TAB_REPORT, AppServices
from lantide.ui.shortcuts import SHORTCUTS

STACK_BELOW_PX = 660


class WelcomeWidget(QWidget):
    sig_action_requested = Signal(str)  # "new_sql_tab", "new_project", "settings", "open_workspace"
    sig_workspace_requested = Signal(str)  # a recent workspace's path

    def __init__(self, services: AppServices, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.setObjectName("WelcomePage")
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        # A viewport of our own: asking the scroll area for the one it made has PySide6
        # resolve every QtWidgets class (36 Python enums, about 10 ms before the first paint).
        viewport = QWidget(scroll)
        viewport.setAutoFillBackground(False)
        scroll.setViewport(viewport)
        self._viewport = viewport
        page = QWidget(scroll)
        page.setObjectName("WelcomeContent")
        scroll.setWidget(page)
        page.setAutoFillBackground(False)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(scroll)
        self._scroll = scroll
        outer = QVBoxLayout(page)
        outer.setContentsMargins(32, 32, 32, 32)
        card = QFrame(page)
        card.setMaximumWidth(760)
        outer.addWidget(card, 0, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        outer.addStretch(1)
        grid = QGridLayout(card)
        grid.setHorizontalSpacing(32)
        grid.setVerticalSpacing(10)

        logo = QLabel(card)
        logo.setPixmap(app_icon().pixmap(56, 56))
        grid.addWidget(logo, 0, 0, 2, 1, Qt.AlignmentFlag.AlignTop)
        self.title = QLabel(card)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        _bold(self.title, scale=2.0)
        grid.addWidget(self.title, 0, 1, 1, 2)
        self.subtitle = QLabel(card)
        self.subtitle.setWordWrap(True)
        self.subtitle.setForegroundRole(self.subtitle.foregroundRole())
        grid.addWidget(self.subtitle, 1, 1, 1, 2)

        start = QVBoxLayout()
        start.setSpacing(6)
        start.addWidget(self._heading("Start"))
        self.plan_button = self._button(
            "plan", "Open the Plan", lambda: self._open_document(TAB_PLAN)
        )
        self.report_button = self._button(
            "report", "Open the Report", lambda: self._open_document(TAB_REPORT)
        )
        for button in (
            self.plan_button,
            self.report_button,
            self._button(
                "sql-tab", "New SQL tab", lambda: self.sig_action_requested.emit("new_sql_tab")
            ),
            self._button(
                "add", "New project", lambda: self.sig_action_requested.emit("new_project")
            ),
            self._button(
                "open",
                "Open another workspace…",
                lambda: self.sig_action_requested.emit("open_workspace"),
            ),
            self._button(
                "settings",
                "Model profiles and settings",
                lambda: self.sig_action_requested.emit("settings"),
            ),
        ):
            start.addWidget(button)
        start.addStretch(1)
        grid.addLayout(start, 2, 1, Qt.AlignmentFlag.AlignTop)

        recent = QVBoxLayout()
        recent.addWidget(self._heading("Recent workspaces"))
        self.recent_list = QListWidget(card)
        self.recent_list.setMinimumWidth(220)
        self.recent_list.setFrameShape(QFrame.Shape.NoFrame)
        self.recent_list.itemActivated.connect(
            lambda item: self.sig_workspace_requested.emit(item.data(Qt.ItemDataRole.UserRole))
        )
        recent.addWidget(self.recent_list)
        recent.addWidget(self._heading("Keys worth knowing"))
        keys = QGridLayout()  # labels, not one HTML table: they wrap in a narrow window
        keys.setHorizontalSpacing(14)
        keys.setVerticalSpacing(3)
        wanted = ("sql_run", "sql_source_run", "annotate", "save", "focus_chat", "shortcuts")
        for row, s in enumerate(s for s in SHORTCUTS if s.key in wanted):
            key = QLabel(s.native_text(), card)
            key.setTextFormat(Qt.TextFormat.PlainText)
            _bold(key)
            text = QLabel(s.description, card)
            text.setWordWrap(True)
            keys.addWidget(key, row, 0, Qt.AlignmentFlag.AlignTop)
            keys.addWidget(text, row, 1, Qt.AlignmentFlag.AlignTop)
        keys.setColumnStretch(1, 1)
        recent.addLayout(keys)
        recent.addStretch(1)
        self._grid, self._recent, self.stacked = grid, recent, False
        grid.addLayout(recent, 2, 2, Qt.AlignmentFlag.AlignTop)

        services.sig_project_focused.connect(lambda _n: self.refresh())
        services.sig_settings_changed.connect(lambda _s: self.refresh())
        self.refresh()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        # Two columns need about 640 px; narrower (a small screen with the docks open),
        # "Recent workspaces" and "Keys worth knowing" go below "Start" instead of being
        # cut off at the right.
        self._arrange(stacked=self._viewport.width() < STACK_BELOW_PX)

    def _arrange(self, *, stacked: bool) -> None:
        if stacked == self.stacked:
            return
        self.stacked = stacked
        self._grid.removeItem(self._recent)
        row, col = (3, 1) if stacked else (2, 2)
        self._grid.addLayout(self._recent, row, col, Qt.AlignmentFlag.AlignTop)

    def _heading(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setTextFormat(Qt.TextFormat.PlainText)
        _bold(label)
        label.setContentsMargins(0, 8, 0, 2)
        return label

    def _button(self, icon_name: str, text: str, slot) -> QPushButton:
        button = QPushButton(icon(icon_name), text, self)
        button.setFlat(True)
        button.setStyleSheet("text-align: left; padding: 5px 8px;")
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.clicked.connect(slot)
        return button

    def refresh(self) -> None:
        ws = self.services.workspace
        self.title.setText(ws.name)
        project = self.services.focused_project()
        if project is not None:
            self.subtitle.setText(f"{ws.root}\nFocused project: {project.name} ({project.status})")
        else:
            self.subtitle.setText(
                f"{ws.root}\nNo project focused: double-click one in the explorer, or create one."
            )
        self.plan_button.setEnabled(project is not None)
        self.report_button.setEnabled(project is not None)
        self.recent_list.clear()
        for path in self.services.settings.recent_workspaces:
            if Path(path) == ws.root:
                continue
            item = QListWidgetItem(icon("workspace"), Path(path).name or path)
            item.setToolTip(path)
            item.setData(Qt.ItemDataRole.UserRole, path)
            self.recent_list.addItem(item)
        if self.recent_list.count() == 0:
            placeholder = QListWidgetItem("No other workspace yet")
            placeholder.setFlags(Qt.ItemFlag.NoItemFlags)
            self.recent_list.addItem(placeholder)
        # As tall as its rows (at most six), not an empty box
        rows = min(self.recent_list.count(), 6)
        self.recent_list.setFixedHeight(rows * self.recent_list.sizeHintForRow(0) + 6)

    def _open_document(self, kind: str) -> None:
        project = self.services.focused_project_name()
        if project:
            self.services.request_open(kind, project, "")


def _bold(label: QLabel, scale: float = 1.0) -> None:
    """Bold (and larger) through the font, not markup: the page is plain text, so the
    first paint needs none of Qt's rich-text layout, and a name with ``<`` shows as typed."""
    font = label.font()
    font.setBold(True)
    if scale != 1.0:
        font.setPointSizeF(font.pointSizeF() * scale)
    label.setFont(font)
