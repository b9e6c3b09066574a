"""The command palette (Ctrl+Shift+P): every action of the menu bar with its key, found by
typing a few letters of its name or menu; Enter runs it.

:func:`palette_matches` and :func:`rank` are the search rule, without Qt: every word typed
must start a word of the entry (or appear in it), and entries whose words start with the
typed words come first.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMenuBar,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.edit_actions import shown_key

ROLE_INDEX = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True)
class Command:
    path: str  # "Query › Source Run"
    key: str  # "Ctrl+Shift+Return", or ""
    action: QAction


def _words(text: str) -> list[str]:
    return [w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if w]


def palette_matches(query: str, text: str) -> bool:
    """True when each word of ``query`` appears in ``text`` (case and punctuation aside)."""
    haystack = " ".join(_words(text))
    return all(word in haystack for word in _words(query))


def rank(query: str, texts: list[str]) -> list[int]:
    """Indexes of the texts that match, best first: the more typed words start a word of
    the entry, the better; ties keep the menu order."""
    typed = _words(query)

    def score(text: str) -> int:
        words = _words(text)
        return -sum(any(w.startswith(t) for w in words) for t in typed)

    matching = [i for i, t in enumerate(texts) if palette_matches(query, t)]
    return sorted(matching, key=lambda i: (score(texts[i]), i))


def menu_commands(menu_bar: QMenuBar) -> list[Command]:
    """Every enabled, visible action of the menu bar's menus, submenus included."""
    out: list[Command] = []

    def walk(menu: QMenu, trail: list[str]) -> None:
        for action in menu.actions():
            if action.isSeparator() or not action.isVisible():
                continue
            name = action.text().split("\t")[0].replace("&", "")
            submenu = action.menu()  # typed QObject: QAction lives in QtGui
            if isinstance(submenu, QMenu):
                walk(submenu, trail + [name])
                continue
            if action.isEnabled():
                out.append(Command(" › ".join(trail + [name]), shown_key(action), action))

    for action in menu_bar.actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and action.isVisible():
            walk(menu, [action.text().replace("&", "")])
    return out


class CommandPalette(QDialog):
    sig_command_run = Signal(str)  # the command's path

    def __init__(self, commands: list[Command], parent: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("CommandPalette")
        self.commands = commands
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Type a command: run, source run, plan, settings…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._filter)
        self.search.installEventFilter(self)
        self.list = QListWidget(self)
        self.list.itemActivated.connect(lambda _item: self.run_current())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.search)
        layout.addWidget(self.list)
        self.resize(560, 380)
        self._filter("")

    def _filter(self, query: str) -> None:
        self.list.clear()
        texts = [c.path for c in self.commands]
        for i in rank(query, texts):
            command = self.commands[i]
            item = QListWidgetItem(f"{command.path}    {command.key}".rstrip())
            item.setData(ROLE_INDEX, i)
            item.setToolTip(command.action.statusTip() or command.path)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)

    def shown(self) -> list[str]:
        """The commands listed now, as "Menu › Action" (for tests and screen readers)."""
        return [
            self.commands[self.list.item(i).data(ROLE_INDEX)].path for i in range(self.list.count())
        ]

    def run_current(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        command = self.commands[item.data(ROLE_INDEX)]
        self.accept()
        self.sig_command_run.emit(command.path)
        command.action.trigger()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        # Up/Down move in the list and Enter runs, while the typing stays in the search.
        if (
            watched is self.search
            and isinstance(event, QKeyEvent)
            and event.type() == QKeyEvent.Type.KeyPress
        ):
            if event.key() in (
                Qt.Key.Key_Down,
                Qt.Key.Key_Up,
                Qt.Key.Key_PageDown,
                Qt.Key.Key_PageUp,
            ):
                self.list.keyPressEvent(event)
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.run_current()
                return True
        return super().eventFilter(watched, event)


def open_palette(window) -> CommandPalette:
    """Show the palette over ``window`` (a main window), with the search focused."""
    palette = CommandPalette(menu_commands(window.menuBar()), window)
    geometry = window.geometry()
    palette.move(geometry.x() + (geometry.width() - palette.width()) // 2, geometry.y() + 60)
    palette.show()
    palette.search.setFocus()
    return palette
