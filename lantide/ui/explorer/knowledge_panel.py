"""The knowledge panel: the user's and the project's entries with their status; approve,
edit and reject queued proposals, add and remove entries.

All rules live in :class:`lantide.knowledge.KnowledgeBase`: the panel lists what
``to_dict()`` returns and sends ``approve``/``reject``/``edit``/``add``/``remove`` with the
entry's text as ``expect_text``, so a file edited meanwhile is refused, not clobbered.
Reading and writing run in workers; the panel reloads when a knowledge file changes on
disk or the focused project changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QHeaderView,
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QSizePolicy,
    QStyledItemDelegate,
    QToolBar,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.icons import icon
from lantide.ui.services import AppServices
from lantide.ui.theme import colors
from lantide.ui.tree_items import child_items, top_level_items

if TYPE_CHECKING:
    from lantide.knowledge.base import KnowledgeOverview

ROLE_ENTRY = Qt.ItemDataRole.UserRole + 1
FILTERS = ("All entries", "Queued only", "Enabled only")


def _load_knowledge(context, workspace, project_dir: str | None) -> KnowledgeOverview:
    from lantide.knowledge import KnowledgeBase

    project = workspace.project(project_dir) if project_dir else None
    kb = KnowledgeBase.for_project(project)
    return kb.to_dict()


def _apply(
    context,
    workspace,
    project_dir: str | None,
    action: str,
    entry: dict | None,
    text: str | None,
    section: str | None,
    scope: str | None,
):
    from lantide.knowledge import KnowledgeBase

    project = workspace.project(project_dir) if project_dir else None
    kb = KnowledgeBase.for_project(project)
    if action == "add":
        return kb.add(text or "", section=section or "Rules", scope=scope)
    if entry is None:  # the panel passes the selected entry to every action but add
        raise ValueError(f"knowledge {action} needs an entry")
    ref, expect, scope = entry["number"], entry["text"], entry["scope"]
    if action == "approve":
        return kb.approve(ref, scope=scope, expect_text=expect)
    if action == "reject":
        return kb.reject(ref, scope=scope, expect_text=expect)
    if action == "remove":
        return kb.remove(ref, scope=scope, expect_text=expect)
    if action == "edit":
        return kb.edit(ref, text or "", scope=scope, expect_text=expect)
    raise ValueError(action)


class _WrappingDelegate(QStyledItemDelegate):
    """Entries are sentences: rows grow to show them whole at the panel's width."""

    def __init__(self, tree: QTreeWidget):
        super().__init__(tree)
        self.tree = tree

    def sizeHint(self, option, index):  # noqa: N802 - Qt's name
        hint = super().sizeHint(option, index)
        depth, parent = 0, index.parent()
        while parent.isValid():
            depth, parent = depth + 1, parent.parent()
        width = self.tree.viewport().width() - self.tree.indentation() * (depth + 1) - 36
        if width <= 40:
            return hint
        text = index.data(Qt.ItemDataRole.DisplayRole) or ""
        rect = option.fontMetrics.boundingRect(
            QRect(0, 0, width, 100000), int(Qt.TextFlag.TextWordWrap), text
        )
        return QSize(hint.width(), max(hint.height(), rect.height() + 6))


class KnowledgePanel(QWidget):
    sig_knowledge_loaded = Signal(dict)  # what KnowledgeBase.to_dict() returned

    def __init__(self, services: AppServices, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.setObjectName("KnowledgePanel")
        self.project_dir: str | None = services.focused_project_name()
        self.state: KnowledgeOverview | None = None

        self.filter_combo = QComboBox(self)
        self.filter_combo.addItems(FILTERS)
        self.filter_combo.currentIndexChanged.connect(lambda _i: self._rebuild())
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderHidden(True)
        self.tree.setColumnCount(1)
        self.tree.setWordWrap(True)  # entries are sentences: wrap them, do not elide
        self.tree.setItemDelegate(_WrappingDelegate(self.tree))
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.tree.viewport().installEventFilter(self)
        self.tree.setIndentation(12)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.tree.itemDoubleClicked.connect(lambda *_: self.edit_selected())

        self.approve_button = self._tool(
            "approve", "Approve the queued entry", self.approve_selected
        )
        self.reject_button = self._tool(
            "reject", "Reject the queued entry (it is not proposed again)", self.reject_selected
        )
        self.edit_button = self._tool("edit", "Edit the entry's text", self.edit_selected)
        self.remove_button = self._tool("delete", "Remove the entry", self.remove_selected)
        self.add_button = self._tool("add", "Add an entry", self.add_entry)
        self.refresh_button = self._tool("refresh", "Reload", self.reload)

        # A toolbar, so a narrow dock moves the buttons into its » menu instead of
        # squeezing them.
        bar = QToolBar(self)
        bar.setContentsMargins(6, 4, 6, 0)
        self.filter_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.filter_combo.setMinimumContentsLength(8)
        self.filter_combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        bar.addWidget(self.filter_combo)
        for b in (
            self.approve_button,
            self.reject_button,
            self.edit_button,
            self.remove_button,
            self.add_button,
            self.refresh_button,
        ):
            bar.addWidget(b)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(bar)
        self.summary.setContentsMargins(8, 0, 8, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)

        services.sig_project_focused.connect(self.show_project)
        services.sig_files_changed.connect(self._files_changed)
        self._update_buttons()
        self.reload()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched is self.tree.viewport() and event.type() == QEvent.Type.Resize:
            self.tree.scheduleDelayedItemsLayout()  # row heights follow the new width
        return False

    def _tool(self, icon_name: str, tip: str, slot) -> QToolButton:
        button = QToolButton(self)
        button.setIcon(icon(icon_name))
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(slot)
        return button

    # -- loading -------------------------------------------------------------------------
    def show_project(self, project_dir: str | None) -> None:
        if project_dir is None and self.services.focused_project_name():
            project_dir = self.services.focused_project_name()
        self.project_dir = project_dir
        self.reload()

    def reload(self) -> None:
        self.services.workers.submit(
            _load_knowledge,
            self.services.workspace,
            self.project_dir,
            on_result=self._loaded,
            on_error=lambda e: self.services.report_error(e, "Reading knowledge"),
            name="read knowledge",
        )

    def _loaded(self, state: KnowledgeOverview) -> None:
        self.state = state
        self._rebuild()
        self.sig_knowledge_loaded.emit(state)

    def _files_changed(self, changes: list) -> None:
        if any(getattr(c, "kind", None) == "knowledge" for c in changes):
            self.reload()

    # -- the tree ------------------------------------------------------------------------
    def _rebuild(self) -> None:
        if self.state is None:
            return
        selected = self.selected_entry()
        self.tree.clear()
        wanted = self.filter_combo.currentIndex()
        theme = colors()
        queued_total = 0
        files = sorted(self.state.get("files", []), key=lambda f: f["scope"] != "project")
        for f in files:
            title = (
                f"Project knowledge — {self.project_dir}"
                if f["scope"] == "project"
                else "User knowledge"
            )
            top = QTreeWidgetItem(self.tree, [title])
            bold = QFont(top.font(0))
            bold.setWeight(QFont.Weight.DemiBold)
            top.setFont(0, bold)
            top.setIcon(0, icon("project" if f["scope"] == "project" else "knowledge"))
            top.setToolTip(
                0,
                f"{f['path']}\n{f.get('mode', 'flat')} mode, "
                f"{f.get('size_chars', 0):,} of {f.get('limit_chars', 0):,} characters",
            )
            if not f.get("exists"):
                QTreeWidgetItem(top, ["No file yet: add an entry to create it."]).setDisabled(True)
            if f.get("writable") is False:
                warn = QTreeWidgetItem(top, ["Read-only until the problems below are fixed"])
                warn.setIcon(0, icon("warning", theme.warning))
            sections: dict[str, QTreeWidgetItem] = {}
            for e in f.get("entries", []):
                queued = e["status"] == "queued"
                queued_total += queued
                if (wanted == 1 and not queued) or (wanted == 2 and queued):
                    continue
                where = e["section"] + (f" › {e['heading']}" if e.get("heading") else "")
                parent = sections.get(where)
                if parent is None:
                    parent = sections[where] = QTreeWidgetItem(top, [where])
                    parent.setForeground(0, QBrush(theme.muted))
                    parent.setExpanded(True)
                item = QTreeWidgetItem(parent, [("Queued · " if queued else "") + e["text"]])
                item.setData(0, ROLE_ENTRY, e)
                item.setIcon(
                    0,
                    icon(
                        "history" if queued else "approve",
                        theme.warning if queued else theme.success,
                    ),
                )
                tip = (
                    f"{e['text']}\n\n{'Queued proposal' if queued else 'Enabled'} — "
                    f"entry {e['ref']}, line {e['line']}"
                )
                src = e.get("source") or {}
                if src.get("conversation"):
                    tip += (
                        f"\nProposed in conversation {src['conversation']}, turn {src.get('turn')}"
                    )
                item.setToolTip(0, tip)
                if queued:
                    font = QFont(item.font(0))
                    font.setItalic(True)
                    item.setFont(0, font)
                if (
                    selected
                    and e["scope"] == selected["scope"]
                    and e["number"] == selected["number"]
                ):
                    self.tree.setCurrentItem(item)
            for p in f.get("problems", []):
                item = QTreeWidgetItem(top, [f"Line {p['line']}: {p['message']}"])
                item.setIcon(0, icon("warning", theme.warning))
            top.setExpanded(True)
        self.summary.setText(
            f"{queued_total} queued proposal{'s' if queued_total != 1 else ''} "
            "waiting for your approval."
            if queued_total
            else "Only enabled entries reach the agent."
        )
        self._update_buttons()

    def selected_entry(self) -> dict | None:
        item = self.tree.currentItem()
        return item.data(0, ROLE_ENTRY) if item is not None else None

    def select_entry(self, scope: str, text: str) -> bool:
        """Select the entry of ``scope`` whose text is ``text`` (for keyboard users and tests)."""
        stack = top_level_items(self.tree)
        while stack:
            item = stack.pop()
            e = item.data(0, ROLE_ENTRY)
            if e and e["scope"] == scope and e["text"] == text:
                self.tree.setCurrentItem(item)
                return True
            stack.extend(child_items(item))
        return False

    def _context_menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        if item is None or not item.data(0, ROLE_ENTRY):
            return
        self.tree.setCurrentItem(item)
        menu = QMenu(self)
        for button in (
            self.approve_button,
            self.reject_button,
            self.edit_button,
            self.remove_button,
        ):
            if button.isEnabled():
                menu.addAction(button.icon(), button.toolTip(), button.click)
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def _update_buttons(self) -> None:
        e = self.selected_entry()
        queued = bool(e and e["status"] == "queued")
        self.approve_button.setEnabled(queued)
        self.reject_button.setEnabled(queued)
        self.edit_button.setEnabled(e is not None)
        self.remove_button.setEnabled(e is not None and not queued)

    # -- actions -------------------------------------------------------------------------
    def _run(
        self,
        action: str,
        entry: dict | None,
        text: str | None = None,
        section: str | None = None,
        scope: str | None = None,
    ) -> None:
        done, doing = {
            "approve": ("Approved", "Approving"),
            "reject": ("Rejected", "Rejecting"),
            "remove": ("Removed", "Removing"),
            "edit": ("Edited", "Editing"),
            "add": ("Added", "Adding"),
        }[action]

        def applied(e) -> None:
            self.services.post_message(f"{done}: {e.text[:80]}")
            self.reload()

        def failed(exc: BaseException) -> None:
            self.services.report_error(exc, f"{doing} the entry")
            self.reload()

        self.services.workers.submit(
            _apply,
            self.services.workspace,
            self.project_dir,
            action,
            entry,
            text,
            section,
            scope,
            on_result=applied,
            on_error=failed,
            name=f"knowledge {action}",
        )

    def approve_selected(self) -> None:
        e = self.selected_entry()
        if e and e["status"] == "queued":
            self._run("approve", e)

    def reject_selected(self) -> None:
        e = self.selected_entry()
        if e and e["status"] == "queued":
            self._run("reject", e)

    def edit_selected(self) -> None:
        e = self.selected_entry()
        if not e:
            return
        text, ok = QInputDialog.getMultiLineText(
            self, "Edit knowledge entry", f"{e['section']} entry {e['ref']}:", e["text"]
        )
        if ok and text.strip() and text.strip() != e["text"]:
            self._run("edit", e, text.strip())

    def remove_selected(self) -> None:
        e = self.selected_entry()
        if not e:
            return
        answer = QMessageBox.question(
            self,
            "Remove knowledge entry",
            f"Remove this entry? The agent will no longer see it.\n\n{e['text']}",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self._run("remove", e)

    def add_entry(self) -> None:
        scopes = (
            ["Project Rules", "Project Info", "User Rules", "User Info"]
            if self.project_dir
            else ["User Rules", "User Info"]
        )
        where, ok = QInputDialog.getItem(self, "Add knowledge", "Add to:", scopes, 0, False)
        if not ok:
            return
        text, ok = QInputDialog.getMultiLineText(self, "Add knowledge", f"New entry ({where}):")
        if ok and text.strip():
            scope, section = where.split()
            self._run("add", None, text.strip(), section, scope.lower())
