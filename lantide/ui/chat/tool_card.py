"""A tool call in the chat as a compact card: the tool, a one-line gist of its arguments,
its outcome; expanded, the full arguments (SQL coloured) and the result (a small table
for query previews, the message and hint for an error). A query step links to its entry
in the ledger.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from lantide.query.sql_format import readable_sql
from lantide.ui.analyst_words import AGENT_ONLY_KEYS, plain_hint, readable_fields
from lantide.ui.chat.chat_answer import AutoHeightBrowser
from lantide.ui.chat.check_badges import CheckBadges, checks_of
from lantide.ui.elided_label import ElidedLabel
from lantide.ui.icons import icon
from lantide.ui.sql.result_model import display_value
from lantide.ui.sql.sql_highlighter import sql_to_html
from lantide.ui.theme import colors
from lantide.ui.themed import ThemedFrame

PREVIEW_ROWS_SHOWN = 8
MAX_FIELD_CHARS = 1000
_TOOL_ICONS = {
    "run_query": "run",
    "validate_query": "approve",
    "run_sql_tab": "sql-tab",
    "source_run_sql_tab": "source-run",
    "create_sql_tab": "sql-tab",
    "show_tables": "table",
    "read_schema": "table",
    "read_plan": "plan",
    "read_report": "report",
    "update_plan": "plan",
    "update_report": "report",
    "resolve_annotations": "resolve",
    "ask_user": "chat",
    "focus_project": "focus",
    "set_project_status": "project",
    "get_app_context": "info",
    "expand_knowledge_catalog": "knowledge",
    "patch_step": "ledger",
    "activate_analysis": "chart",
    "sync_tab_content": "refresh",
}


def argument_gist(tool: str, arguments: dict[str, Any]) -> str:
    """One line saying what the call is about."""
    if isinstance(arguments.get("sql"), str):
        first = next(
            (
                line.strip()
                for line in arguments["sql"].splitlines()
                if line.strip() and not line.strip().startswith("--")
            ),
            "",
        )
        return first[:90] + ("…" if len(first) > 90 else "")
    for key in (
        "tab",
        "table",
        "name",
        "project",
        "document",
        "heading",
        "question",
        "status",
        "step_id",
        "path",
        "reason",
    ):
        if arguments.get(key):
            return f"{arguments[key]}"[:90]
    return ""


def result_gist(ok: bool, result: dict[str, Any], duration_ms: int | None) -> str:
    if not ok or "error" in result:
        return f"{result.get('error', 'failed')}: {result.get('message', '')}"[:140]
    parts = []
    if result.get("pending_review"):  # the agent's edit waits in the document's tab
        hunks = result.get("hunks") if isinstance(result.get("hunks"), list) else []
        parts.append(
            f"pending review · {len(hunks)} hunk{'s' if len(hunks) != 1 else ''}"
            if hunks
            else "pending review"
        )
    if isinstance(result.get("row_count"), int):
        parts.append(f"{result['row_count']:,} rows")
    if result.get("cached_table_name"):
        parts.append(f"cached as {result['cached_table_name']}")
    if isinstance(result.get("tables"), list):
        parts.append(f"{len(result['tables'])} tables")
    if result.get("ok") is True and not parts:
        parts.append("valid")
    if duration_ms is not None:
        parts.append(f"{duration_ms:,} ms")
    return " · ".join(parts) or "done"


def step_id_of(result: dict[str, Any]) -> str | None:
    step = result.get("step")
    if isinstance(step, dict) and step.get("step_id"):
        return str(step["step_id"])
    return str(result["step_id"]) if result.get("step_id") else None


def _preview_table(result: dict[str, Any]) -> str:
    columns = result.get("columns") or []
    names = [c.get("name") if isinstance(c, dict) else str(c) for c in columns]
    rows = result.get("preview") or result.get("rows") or []
    if not names or not isinstance(rows, list):
        return ""
    theme = colors()
    head = "".join(f"<th align='left'>{html.escape(str(n))}</th>" for n in names)
    body = []
    for row in rows[:PREVIEW_ROWS_SHOWN]:
        values = [row.get(n) for n in names] if isinstance(row, dict) else list(row)
        body.append(
            "<tr>" + "".join(f"<td>{html.escape(display_value(v))}</td>" for v in values) + "</tr>"
        )
    more = ""
    total = result.get("row_count")
    if isinstance(total, int) and total > min(len(rows), PREVIEW_ROWS_SHOWN):
        more = (
            f"<p style='color:{theme.muted.name()}'>first "
            f"{min(len(rows), PREVIEW_ROWS_SHOWN)} of {total:,} rows</p>"
        )
    return (
        f"<table border='1' cellspacing='0' cellpadding='3' "
        f"style='border-color:{theme.border.name()}'><tr>{head}</tr>{''.join(body)}</table>" + more
    )


def _fields_block(values: dict[str, Any], *, skip=AGENT_ONLY_KEYS) -> str:
    """Labelled fields (Purpose: …, Rows: …), not JSON; what is the agent's alone is left
    out."""
    rows = []
    for label, text in readable_fields(values, skip=skip):
        if len(text) > MAX_FIELD_CHARS:
            text = text[:MAX_FIELD_CHARS] + "…"
        rows.append(
            f"<tr><td style='color:{colors().muted.name()}; padding-right:8px'>"
            f"{html.escape(label)}</td><td>{html.escape(text)}</td></tr>"
        )
    return f"<table cellspacing='0' cellpadding='1'>{''.join(rows)}</table>" if rows else ""


class ToolCardWidget(ThemedFrame):
    sig_step_clicked = Signal(str)

    def __init__(
        self, call_id: str, tool: str, arguments: dict[str, Any], parent: QWidget | None = None
    ):
        super().__init__(parent)
        self.setObjectName("ToolCard")
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments if isinstance(arguments, dict) else {"arguments": arguments}
        self.ok: bool | None = None
        self.result: dict[str, Any] | None = None
        self.step_id: str | None = None
        self.step_summary: str | None = None
        self.review_state: str | None = None  # of an edit left pending (set_review_state)
        self._expanded = False
        self.toggle = QToolButton(self)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolTip("Show arguments and result")
        self.toggle.clicked.connect(lambda: self.set_expanded(not self.expanded))
        tool_icon = QLabel(self)
        self._tool_icon = tool_icon
        self.name_label = QLabel(f"<b>{html.escape(tool)}</b>", self)
        self.gist_label = ElidedLabel(argument_gist(tool, self.arguments), self)
        self.gist_label.setStyleSheet("font-family: monospace;")
        self.status_label = QLabel("running…", self)
        self.status_label.setWordWrap(True)
        self.step_link = QLabel(self)
        self.step_link.setTextFormat(Qt.TextFormat.RichText)
        self.step_link.linkActivated.connect(lambda _href: self.sig_step_clicked.emit(self.step_id))
        self.step_link.hide()
        head = QHBoxLayout()
        head.setContentsMargins(4, 2, 8, 2)
        head.setSpacing(6)
        head.addWidget(self.toggle)
        head.addWidget(tool_icon)
        head.addWidget(self.name_label)
        head.addWidget(self.gist_label, 1)
        status_row = QHBoxLayout()
        status_row.setContentsMargins(34, 0, 8, 4)
        status_row.addWidget(self.status_label, 1)
        status_row.addWidget(self.step_link)
        self.badges = CheckBadges(self)  # the result's checks; hidden when there are none
        self.body = AutoHeightBrowser(self)
        self.body.hide()
        self.preview = AutoHeightBrowser(self, wide=True)  # the rows: a box that scrolls sideways
        self.preview.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(0)
        layout.addLayout(head)
        layout.addLayout(status_row)
        layout.addWidget(self.badges)
        layout.addWidget(self.body)
        layout.addWidget(self.preview)
        self.apply_theme()

    def apply_theme(self) -> None:
        theme = colors()
        self.setStyleSheet(
            f"QFrame#ToolCard {{ border: 1px solid {theme.border.name()}; "
            f"border-radius: 6px; background: {theme.panel.name()}; }}"
        )
        self._tool_icon.setPixmap(icon(_TOOL_ICONS.get(self.tool, "settings")).pixmap(16, 16))
        failed = self.ok is False
        self.status_label.setStyleSheet(
            f"color: {(theme.danger if failed else theme.muted).name()};"
        )
        self.badges.apply_theme()
        if self.expanded:
            self._fill_body()

    @property
    def expanded(self) -> bool:
        return self._expanded

    def set_expanded(self, expanded: bool) -> None:
        self._expanded = expanded
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        if expanded:
            self._fill_body()
        self.body.setVisible(expanded)
        self.preview.setVisible(expanded and bool(self.preview.toPlainText().strip()))

    def _fill_body(self) -> None:
        self.body.setHtml(self.body_html())
        table = _preview_table(self.result) if self.result is not None and self.ok else ""
        self.preview.setHtml(table)
        self.preview.setVisible(self.expanded and bool(table))

    def set_result(self, ok: bool, result: dict[str, Any], duration_ms: int | None = None) -> None:
        self.ok = ok and "error" not in result
        self.result = result
        self.status_label.setText(result_gist(ok, result, duration_ms))
        self.badges.set_checks(checks_of(result) if self.ok else [])
        step_id = step_id_of(result)
        if step_id:
            self.set_step(step_id)
        self.apply_theme()

    def set_review_state(self, state: str) -> None:
        """The analyst's decision on the edit this call proposed: accepted, rejected,
        partly accepted, or still pending (some hunks decided)."""
        self.review_state = state
        words = {"pending": "pending review · some hunks decided"}
        self.status_label.setText(f"edit {words.get(state, state)}")

    def set_cancelled(self) -> None:
        if self.result is None:
            self.status_label.setText("stopped")

    def set_step(self, step_id: str, summary: str | None = None) -> None:
        self.step_id = step_id
        if summary is not None:
            self.step_summary = summary
        self.step_link.setText(f"<a href='step:{html.escape(step_id)}'>ledger ›</a>")
        self.step_link.setToolTip(self.step_summary or "Show this step in the ledger")
        self.step_link.show()

    def body_html(self) -> str:
        theme = colors()
        parts = [f"<p style='color:{theme.muted.name()}; margin:4px 0 2px 0'>Arguments</p>"]
        args = dict(self.arguments)
        sql = args.pop("sql", None)
        if isinstance(sql, str):  # formatted for reading (as written when it cannot be)
            parts.append(sql_to_html(readable_sql(sql), dark=theme.dark))
        if args:
            parts.append(_fields_block(args, skip=frozenset()))
        if self.result is not None:
            parts.append(f"<p style='color:{theme.muted.name()}; margin:6px 0 2px 0'>Result</p>")
            if not self.ok:
                message = html.escape(str(self.result.get("message", "")))
                hint = html.escape(plain_hint(str(self.result.get("hint") or "")))
                parts.append(
                    f"<p style='color:{theme.danger.name()}'><b>"
                    f"{html.escape(str(self.result.get('error', 'error')))}</b> "
                    f"{message}</p>" + (f"<p>{hint}</p>" if hint else "")
                )
            else:
                parts.append(_fields_block(self.result))  # the rows go to self.preview
        if self.step_summary:
            parts.append(f"<p>In the ledger: {html.escape(self.step_summary)}</p>")
        return "".join(parts)
