"""The bottom panel: the agent's step ledger and the analyst's query history.

**Step ledger**: every query step of a conversation (``.lantide/ledger/ID.jsonl``), newest
last, with its purpose, the one-line summary the agent wrote (or that it is missing),
rows, cached table and time. It follows the chat's conversation, updates live as steps are
recorded, and selects a step when a link in the chat is clicked. The details show the
SQL (coloured), warnings, result checks (badges that open their evidence) and corrections;
a step's cached table opens in a table browser.

**Query history** (:mod:`lantide.ui.sql.query_history_view`): what the analyst ran from SQL tabs.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from lantide.agent.evidence import step_kind
from lantide.ui.chat.check_badges import check_words, checks_html
from lantide.ui.chat.conversation_list import conversation_label
from lantide.ui.icons import icon
from lantide.ui.sql.query_history_view import QueryHistoryView, local_time
from lantide.ui.sql.sql_highlighter import sql_to_html
from lantide.ui.theme import colors
from lantide.ui.tree_items import top_level_items

STEP_COLUMNS = (
    "Step",
    "Time",
    "Tool",
    "Purpose",
    "Summary",
    "Rows",
    "Cached table",
    "ms",
    "Evidence",
)  # formal or exploratory (lantide.agent.evidence)
ROLE_KEY = Qt.ItemDataRole.UserRole + 1
EVIDENCE_TIPS = {
    "formal": "run while executing, with a purpose: a Report may cite it",
    "exploratory": "run outside executing or without a purpose: not citable",
}


def summary_text(step: dict) -> str:
    status = step.get("summary_status") or ""
    if step.get("summary"):
        if status == "mismatch":  # lantide.agent.summary_check: stated, not in its result
            unmatched = ", ".join(str(n) for n in step.get("summary_unmatched") or [])
            return f"{step['summary']} (not in its result: {unmatched or 'a number'})"
        return step["summary"]
    return {
        "pending": "(waiting for the agent's summary)",
        "missing": "(no summary written)",
        "malformed": "(summary line unreadable)",
        "external": "(run by an outside agent: no summary line)",
    }.get(status, "")


class LedgerPanel(QWidget):
    def __init__(self, services, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("LedgerPanel")
        self.services = services
        self.conversation_id: str | None = None
        self.steps: list[dict] = []
        self._want_step: str | None = None

        # -- ledger page
        self.conversation_box = QComboBox(self)
        self.conversation_box.setMinimumContentsLength(24)
        self.conversation_box.setPlaceholderText("No conversation yet")
        self.conversation_box.activated.connect(self._conversation_picked)
        self.ledger_status = QLabel(self)
        self.ledger_status.setStyleSheet("color: gray;")
        self.open_table_button = QPushButton(icon("cached-table"), "Open cached table", self)
        self.open_table_button.clicked.connect(self._open_step_table)
        self.copy_sql_button = QPushButton("Copy SQL", self)
        self.copy_sql_button.clicked.connect(self._copy_step_sql)
        for button in (self.open_table_button, self.copy_sql_button):
            button.setEnabled(False)
        ledger_bar = QHBoxLayout()
        ledger_bar.setContentsMargins(6, 4, 6, 2)
        ledger_bar.addWidget(QLabel("Conversation", self))
        ledger_bar.addWidget(self.conversation_box)
        ledger_bar.addWidget(self.ledger_status, 1)
        ledger_bar.addWidget(self.open_table_button)
        ledger_bar.addWidget(self.copy_sql_button)
        self.step_tree = QTreeWidget(self)
        self.step_tree.setHeaderLabels(list(STEP_COLUMNS))
        self.step_tree.setAccessibleName("Step ledger")
        self.step_tree.setRootIsDecorated(False)
        self.step_tree.setUniformRowHeights(True)
        self.step_tree.setAlternatingRowColors(True)
        self.step_tree.currentItemChanged.connect(self._step_selected)
        self.step_tree.header().setStretchLastSection(False)
        self.step_tree.header().setSectionResizeMode(
            STEP_COLUMNS.index("Summary"), QHeaderView.ResizeMode.Stretch
        )
        self.step_tree.itemDoubleClicked.connect(lambda *_: self._open_step_table())
        self.step_details = QTextBrowser(self)
        self.step_details.setOpenLinks(False)
        self.step_details.anchorClicked.connect(self._detail_link)
        self._opened_checks: set[int] = set()
        ledger_split = QSplitter(Qt.Orientation.Horizontal, self)
        ledger_split.addWidget(self.step_tree)
        ledger_split.addWidget(self.step_details)
        ledger_split.setSizes([640, 360])
        ledger_page = QWidget(self)
        ledger_layout = QVBoxLayout(ledger_page)
        ledger_layout.setContentsMargins(0, 0, 0, 0)
        ledger_layout.setSpacing(2)
        ledger_layout.addLayout(ledger_bar)
        ledger_layout.addWidget(ledger_split, 1)

        # -- history page
        self.history_view = QueryHistoryView(services, self)

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(ledger_page, icon("ledger"), "Step ledger")
        self.tabs.addTab(self.history_view, icon("history"), "Query history")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        services.sig_conversation_changed.connect(self._chat_conversation_changed)
        services.sig_step_recorded.connect(self._step_recorded)
        services.sig_step_selected.connect(self.show_step)
        services.sig_conversation_titled.connect(self._conversation_titled)
        self._load_conversations()
        self._show_ledger_status()

    # -- public API ----------------------------------------------------------------------
    def select_step(self, step_id: str) -> None:
        """Select ``step_id`` in the ledger shown now."""
        self.show_step(self.conversation_id or "", step_id)

    def show_step(self, conversation_id: str, step_id: str) -> None:
        """Show the ledger of ``conversation_id`` and select ``step_id`` (from a chat link)."""
        self.tabs.setCurrentIndex(0)
        self._raise_dock()
        if conversation_id and conversation_id != self.conversation_id:
            self._want_step = step_id
            self.load_ledger(conversation_id)
            return
        self._select(step_id)

    # -- ledger --------------------------------------------------------------------------
    def _load_conversations(self) -> None:
        directory = self.services.workspace.conversations_dir

        def read(_ctx):  # the import too, off the UI thread (it is built at start-up)
            from lantide.agent.conversation import list_conversations

            return list_conversations(directory)

        def fill(infos) -> None:
            current = self.conversation_id
            self.conversation_box.blockSignals(True)
            self.conversation_box.clear()
            for info in reversed(infos):
                self.conversation_box.addItem(conversation_label(info), info.id)
            if current and self.conversation_box.findData(current) < 0:
                self.conversation_box.insertItem(0, "Untitled", current)  # not on disk yet
            self.conversation_box.setCurrentIndex(max(0, self.conversation_box.findData(current)))
            self.conversation_box.blockSignals(False)

        self.services.workers.submit(
            read,
            on_result=fill,
            on_error=lambda exc: None,
            name="list conversations",
        )

    def _conversation_titled(self, conversation_id: str, title: str) -> None:
        index = self.conversation_box.findData(conversation_id)
        if index >= 0:
            self.conversation_box.setItemText(index, title)
        else:
            self._load_conversations()

    def _chat_conversation_changed(self, conversation_id) -> None:
        if conversation_id:
            self.load_ledger(conversation_id)
            self._load_conversations()
        else:
            self.conversation_id = None
            self.steps = []
            self._fill_steps()

    def _conversation_picked(self, index: int) -> None:
        conversation_id = self.conversation_box.itemData(index)
        if conversation_id:
            self.load_ledger(conversation_id)

    def load_ledger(self, conversation_id: str) -> None:
        """Read a conversation's ledger (in a worker) and show it."""
        from lantide.agent.ledger import Ledger

        self.conversation_id = conversation_id
        ledger = Ledger(self.services.workspace.ledger_dir, conversation_id)

        def shown(steps) -> None:
            if conversation_id != self.conversation_id:
                return  # another conversation was picked meanwhile
            self.steps = steps
            self._fill_steps()
            if self._want_step:
                self._select(self._want_step)
                self._want_step = None

        self.services.workers.submit(
            lambda _ctx: ledger.steps(),
            on_result=shown,
            on_error=lambda exc: self.services.report_error(exc, "Reading the ledger"),
            name="read ledger",
        )
        index = self.conversation_box.findData(conversation_id)
        if index >= 0:
            self.conversation_box.setCurrentIndex(index)

    def _step_recorded(self, step: dict) -> None:
        conversation = step.get("conversation_id")
        if conversation and conversation != self.conversation_id:
            return
        for existing in self.steps:
            if existing.get("step_id") == step.get("step_id"):
                existing.update({k: v for k, v in step.items() if k != "partial"})
                break
        else:
            if step.get("partial"):
                return
            self.steps.append(dict(step))
        current = self.step_tree.currentItem()
        selected = current.data(0, ROLE_KEY) if current else None
        self._fill_steps()
        if selected:
            self._select(selected)

    def _fill_steps(self) -> None:
        theme = colors()
        self.step_tree.clear()
        for step in self.steps:
            rows = step.get("row_count")
            values = [
                # the id citations [^s:ID], read_step and the chat's step lines use
                step.get("step_id", ""),
                local_time(step.get("at")),
                step.get("tool", ""),
                step.get("purpose") or "",
                summary_text(step),
                f"{rows:,}" if isinstance(rows, int) else "",
                step.get("cached_table_name") or "",
                f"{step['duration_ms']:,}" if isinstance(step.get("duration_ms"), int) else "",
                step_kind(step),
            ]
            item = QTreeWidgetItem(self.step_tree, [str(v) for v in values])
            item.setData(0, ROLE_KEY, step.get("step_id"))
            item.setToolTip(0, f"Step id {step.get('step_id', '')}: cite it as [^s:ID]")
            item.setToolTip(4, step.get("summary") or summary_text(step))
            errors = [
                c.get("code")
                for c in step.get("checks") or []
                if isinstance(c, dict) and c.get("severity") == "error"
            ]
            if errors:  # a number that is not a finding yet: the step says so at a glance
                item.setForeground(0, QBrush(theme.danger))
                item.setToolTip(
                    0,
                    f"Step id {step.get('step_id', '')}. Unresolved checks: "
                    + ", ".join(f"{check_words(code)} ({code})" for code in errors),
                )
            if not step.get("summary"):
                item.setForeground(4, QBrush(theme.muted))
            evidence = STEP_COLUMNS.index("Evidence")
            item.setForeground(
                evidence, QBrush(theme.success if step_kind(step) == "formal" else theme.muted)
            )
            item.setToolTip(evidence, EVIDENCE_TIPS[step_kind(step)])
            for col in (5, 7):
                item.setTextAlignment(
                    col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
        for col in range(len(STEP_COLUMNS)):
            if col != 4:
                self.step_tree.resizeColumnToContents(col)
        self._show_ledger_status()

    def _show_ledger_status(self) -> None:
        if not self.conversation_id:
            self.ledger_status.setText("Query steps of the chat's conversation appear here.")
        else:
            n = len(self.steps)
            self.ledger_status.setText(f"{n} step{'s' if n != 1 else ''}")

    def _select(self, step_id: str) -> None:
        for item in top_level_items(self.step_tree):
            if item.data(0, ROLE_KEY) == step_id:
                self.step_tree.setCurrentItem(item)
                self.step_tree.scrollToItem(item)
                return

    def current_step(self) -> dict | None:
        item = self.step_tree.currentItem()
        if item is None:
            return None
        key = item.data(0, ROLE_KEY)
        return next((s for s in self.steps if s.get("step_id") == key), None)

    def _step_selected(self, *_):
        step = self.current_step()
        self.open_table_button.setEnabled(bool(step and step.get("cached_table_name")))
        self.copy_sql_button.setEnabled(bool(step and step.get("sql")))
        self._opened_checks = set()
        self.step_details.setHtml(self._step_html(step) if step else "")

    def _detail_link(self, url) -> None:
        """A check badge in the details: open or close its message and evidence."""
        text = url.toString()
        step = self.current_step()
        if not text.startswith("check:") or step is None:
            return
        index = int(text.split(":", 1)[1])
        self._opened_checks ^= {index}
        self.step_details.setHtml(self._step_html(step))

    def _step_html(self, step: dict) -> str:
        theme = colors()
        muted = theme.muted.name()
        parts = [
            f"<p><b>Step {_esc(str(step.get('step_id', '')))} of this conversation</b> "
            f"<span style='color:{muted}'>{step.get('tool', '')} · "
            f"{local_time(step.get('at'))}"
            + (f" · project {step['project']}" if step.get("project") else "")
            + "</span></p>"
        ]
        if step.get("purpose"):
            parts.append(f"<p><b>Purpose:</b> {_esc(step['purpose'])}</p>")
        parts.append(
            f"<p><b>Evidence:</b> {step_kind(step)} "
            f"<span style='color:{muted}'>({_esc(EVIDENCE_TIPS[step_kind(step)])})"
            f"</span></p>"
        )
        parts.append(f"<p><b>Summary:</b> {_esc(summary_text(step))}</p>")
        if step.get("sql"):
            parts.append(sql_to_html(step["sql"], dark=theme.dark))
        facts = []
        if isinstance(step.get("row_count"), int):
            facts.append(f"{step['row_count']:,} rows")
        if step.get("materialized"):
            facts.append(
                f"cached as {step.get('cached_table_name')} "
                f"({step.get('materialize_reason') or ''})"
            )
        if facts:
            parts.append(f"<p style='color:{muted}'>{_esc(' · '.join(facts))}</p>")
        for warning in step.get("warnings") or []:
            parts.append(f"<p style='color:{theme.warning.name()}'>⚠ {_esc(str(warning))}</p>")
        checks = [c for c in step.get("checks") or [] if isinstance(c, dict)]
        parts.append(checks_html(checks, self._opened_checks))
        for patch in step.get("patches") or []:
            parts.append(
                f"<p style='color:{muted}'>corrected {local_time(patch.get('at'))} by "
                f"{_esc(str(patch.get('by')))}: was {_esc(str(patch.get('old')))}</p>"
            )
        return "".join(parts)

    def _open_step_table(self) -> None:
        step = self.current_step()
        if step and step.get("cached_table_name"):
            self.services.request_open("table", None, step["cached_table_name"])

    def _copy_step_sql(self) -> None:
        step = self.current_step()
        if step and step.get("sql"):
            QApplication.clipboard().setText(step["sql"])

    def _raise_dock(self) -> None:
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        if parent is not None:
            parent.show()
            parent.raise_()


def _esc(text: str) -> str:
    import html

    return html.escape(text)
