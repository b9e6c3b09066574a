"""The chat's conversation picker: every conversation of the workspace, newest first, by
its title (named by the secondary model after the first exchange, or renamed by hand),
with New and Rename. The list is read in a worker.
"""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QInputDialog, QToolButton, QWidget

from lantide.ui.icons import icon

NEW_CHAT = "New conversation"


def conversation_label(info) -> str:
    title = (info.title or "").strip()
    when = ""
    if info.created_at:
        try:
            moment = (
                datetime.strptime(info.created_at, "%Y-%m-%dT%H:%M:%SZ")
                .replace(tzinfo=UTC)
                .astimezone()
            )
            when = moment.strftime("%d %b %H:%M")
        except ValueError:
            when = info.created_at
    if title:
        return f"{title}  ·  {when}" if when else title
    return f"Untitled  ·  {when}" if when else info.id


def _last_activity(info) -> tuple:
    try:
        return (info.path.stat().st_mtime_ns, info.id)
    except OSError:
        return (0, info.id)


class ConversationPicker(QWidget):
    sig_conversation_chosen = Signal(str)  # a conversation id
    sig_new_requested = Signal()
    sig_rename_requested = Signal(str)  # the new title

    def __init__(self, services, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.infos: list = []
        self.current: str | None = None
        self._titles: dict[str, str] = {}  # titles that arrived as events, newer than files
        self._generation = 0
        self.combo = QComboBox(self)
        self.combo.setMinimumContentsLength(10)  # the chat narrows to 240 px; titles elide
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.activated.connect(self._activated)
        self.new_button = QToolButton(self)
        self.new_button.setIcon(icon("add"))
        self.new_button.setToolTip("New conversation")
        self.new_button.clicked.connect(self.sig_new_requested)
        self.rename_button = QToolButton(self)
        self.rename_button.setIcon(icon("edit"))
        self.rename_button.setToolTip("Rename this conversation")
        self.rename_button.clicked.connect(self._rename)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addWidget(self.combo, 1)
        layout.addWidget(self.new_button)
        layout.addWidget(self.rename_button)
        self._fill()

    def reload(self, then=None) -> None:
        """Read the conversation list again (in a worker); ``then(infos)`` afterwards."""
        directory = self.services.workspace.conversations_dir

        self._generation += 1
        generation = self._generation

        def read(_ctx):  # the import too, off the UI thread (the list is built at start-up)
            from lantide.agent.conversation import list_conversations

            return sorted(list_conversations(directory), key=_last_activity, reverse=True)

        def done(infos) -> None:
            if generation != self._generation:
                return  # a newer reload was asked for; its answer wins
            self.infos = infos  # the most recently used first
            self._fill()
            if then:
                then(self.infos)

        self.services.workers.submit(
            read, on_result=done, on_error=lambda exc: None, name="list conversations"
        )

    def set_current(self, conversation_id: str | None) -> None:
        self.current = conversation_id
        if conversation_id and not any(i.id == conversation_id for i in self.infos):
            self.reload()
            return
        self._fill()

    def set_title(self, conversation_id: str, title: str) -> None:
        self._titles[conversation_id] = title
        self._fill()

    def _fill(self) -> None:
        self.combo.blockSignals(True)
        self.combo.clear()
        if self.current is None:
            self.combo.addItem(icon("chat"), NEW_CHAT, None)
        elif not any(info.id == self.current for info in self.infos):
            # not listed yet (the list is read in a worker): show it all the same
            self.combo.addItem(self._titles.get(self.current) or "Untitled", self.current)
        for info in self.infos:
            if info.id in self._titles:
                info.title = self._titles[info.id]
            self.combo.addItem(conversation_label(info), info.id)
        index = self.combo.findData(self.current) if self.current else 0
        self.combo.setCurrentIndex(max(index, 0))
        self.combo.blockSignals(False)
        self.rename_button.setEnabled(self.current is not None)

    def _activated(self, index: int) -> None:
        conversation_id = self.combo.itemData(index)
        if conversation_id and conversation_id != self.current:
            self.sig_conversation_chosen.emit(conversation_id)

    def _rename(self) -> None:
        info = next((i for i in self.infos if i.id == self.current), None)
        title, ok = QInputDialog.getText(
            self, "Rename conversation", "Title:", text=(info.title if info and info.title else "")
        )
        if ok and title.strip():
            self.sig_rename_requested.emit(title.strip())
