"""The review before reporting, in the chat: a collapsible "Reflection" card.

Collapsed, one line: what was reviewed (the Report update or the final answer) and the
verdict (passed, or how many problems). Expanded, each checklist item with its verdict
and note, then the problems the agent must fix or ask about. It shows the ledger line of
:mod:`lantide.agent.reflection` as it is; the rules of the review live there.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from lantide.ui.chat.chat_answer import AutoHeightBrowser
from lantide.ui.chat.check_badges import check_words
from lantide.ui.icons import icon
from lantide.ui.theme import colors
from lantide.ui.themed import ThemedFrame

SUBJECTS = {
    "update_report": "before updating the Report",
    "final_answer": "before the final answer",
    "report_review": "before the Report goes to review",
}
ITEM_LABELS = {
    "denominator": "Denominator as the Plan defines it",
    "grain": "Grain",
    "filters": "Filters (test accounts, period, …)",
    "checks": "Result checks resolved",
    "traced": "Numbers traced to steps",
    "evidence": "Every number cited to a matching formal step (report check)",
}


def verdict_text(reflection: dict[str, Any]) -> str:
    problems = [p for p in reflection.get("problems") or [] if p]
    if reflection.get("ok") is True:
        return "passed"
    return (
        f"found {len(problems)} problem{'s' if len(problems) != 1 else ''}"
        if problems
        else "did not pass"
    )


class ReflectionCardWidget(ThemedFrame):
    def __init__(self, reflection: dict[str, Any], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ReflectionCard")
        self.reflection = reflection if isinstance(reflection, dict) else {}
        self.ok = self.reflection.get("ok") is True
        self._expanded = False
        self.toggle = QToolButton(self)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolTip("Show the checklist")
        self.toggle.clicked.connect(lambda: self.set_expanded(not self.expanded))
        self._icon = QLabel(self)
        subject = SUBJECTS.get(str(self.reflection.get("subject")), "before reporting")
        self.title_label = QLabel(f"<b>Reflection</b> {html.escape(subject)}", self)
        self.verdict_label = QLabel(verdict_text(self.reflection), self)
        for label in (self.title_label, self.verdict_label):  # the chat may be 240 px wide
            label.setWordWrap(True)
        head = QHBoxLayout()
        head.setContentsMargins(4, 2, 8, 2)
        head.setSpacing(6)
        head.addWidget(self.toggle)
        head.addWidget(self._icon)
        head.addWidget(self.title_label)
        head.addStretch(1)
        head.addWidget(self.verdict_label)
        self.body = AutoHeightBrowser(self)
        self.body.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(0)
        layout.addLayout(head)
        layout.addWidget(self.body)
        self.setAccessibleName(f"Reflection {subject}: {verdict_text(self.reflection)}")
        self.apply_theme()

    @property
    def expanded(self) -> bool:
        return self._expanded

    def set_expanded(self, expanded: bool) -> None:
        self._expanded = expanded
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        if expanded:
            self.body.setHtml(self.body_html())
        self.body.setVisible(expanded)

    def apply_theme(self) -> None:
        theme = colors()
        self.setStyleSheet(
            f"QFrame#ReflectionCard {{ border: 1px solid {theme.border.name()}; "
            f"border-radius: 6px; background: {theme.panel.name()}; }}"
        )
        tone = theme.success if self.ok else theme.danger
        self._icon.setPixmap(icon("approve" if self.ok else "warning", tone).pixmap(16, 16))
        self.verdict_label.setStyleSheet(f"color: {tone.name()};")
        if self.expanded:
            self.body.setHtml(self.body_html())

    def items(self) -> list[tuple[str, bool, str]]:
        """(label, passed, note) per checklist item, in order."""
        out = []
        for entry in self.reflection.get("checklist") or []:
            if isinstance(entry, dict):
                name = str(entry.get("item", "?"))
                out.append(
                    (
                        ITEM_LABELS.get(name, name),
                        entry.get("ok") is True,
                        str(entry.get("note") or ""),
                    )
                )
        return out

    def body_html(self) -> str:
        theme = colors()
        rows = []
        for label, passed, note in self.items():
            mark, tone = ("✓", theme.success) if passed else ("✗", theme.danger)
            rows.append(
                f"<tr><td style='color:{tone.name()}'>{mark}</td>"
                f"<td><b>{html.escape(label)}</b></td><td>{html.escape(note)}</td></tr>"
            )
        parts = [f"<table cellpadding='2'>{''.join(rows)}</table>"] if rows else []
        problems = [p for p in self.reflection.get("problems") or [] if p]
        if problems:
            parts.append(
                f"<p style='color:{theme.danger.name()}; margin:6px 0 2px 0'>"
                "The agent must fix these or ask you:</p><ul>"
                + "".join(f"<li>{html.escape(str(p))}</li>" for p in problems)
                + "</ul>"
            )
        unresolved = self.reflection.get("unresolved_checks") or []
        if unresolved:
            parts.append(
                f"<p style='color:{theme.muted.name()}'>Unresolved result checks: "
                + html.escape(
                    ", ".join(
                        # words first, the code after (issue 30 item 11)
                        f"step {c.get('step_id')}: {check_words(c.get('code'))} ({c.get('code')})"
                        for c in unresolved
                        if isinstance(c, dict)
                    )
                )
                + "</p>"
            )
        steps = self.reflection.get("steps") or []
        if steps:
            parts.append(
                f"<p style='color:{theme.muted.name()}'>Steps reviewed: "
                f"{html.escape(', '.join(map(str, steps)))}</p>"
            )
        return "".join(parts)
