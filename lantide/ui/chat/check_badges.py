"""Result checks as badges: the check's name in words in its severity's colour (its code in
small print or the tooltip); a click opens its
message, advice and evidence. Used by the chat's tool card (:class:`CheckBadges`) and the
ledger panel's step details (:func:`checks_html`, links ``check:N``)."""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from lantide.ui.theme import colors

MAX_EVIDENCE_CHARS = 3000
# a check's name in words (lantide.query.checks codes); the code follows in small print
CHECK_WORDS = {
    "JOIN_FAN_OUT": "Join repeats rows",
    "TOTAL_EXCEEDS_SOURCE": "Total exceeds its source",
    "EMPTY_RESULT": "Empty result",
    "ALL_NULL_COLUMN": "A column is all empty",
    "NAN_OR_INF": "Not-a-number values",
    "DIVISION_BY_ZERO_RISK": "Possible division by zero",
    "IMPLAUSIBLE_RATIO": "Implausible ratio",
    "ROW_COUNT_DRIFT": "Row count changed",
}


def check_words(code: Any) -> str:
    """A check's name in words; an unknown code read as words ("NEW_CHECK" -> "New check")."""
    text = str(code or "check")
    return CHECK_WORDS.get(text) or text.replace("_", " ").capitalize()


def severity_color(severity: str) -> str:
    theme = colors()
    return {"error": theme.danger, "warning": theme.warning}.get(severity, theme.muted).name()


def checks_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A result's checks; a Source Run's are those of its tabs, each naming its tab."""
    checks = result.get("checks")
    if isinstance(checks, list):
        return [c for c in checks if isinstance(c, dict)]
    out: list[dict[str, Any]] = []
    for entry in result.get("tabs") or []:
        if isinstance(entry, dict):
            out.extend(
                {**c, "tab": entry.get("tab")}
                for c in entry.get("checks") or []
                if isinstance(c, dict)
            )
    return out


def check_detail_html(check: dict[str, Any]) -> str:
    parts = [
        f"<p style='margin:2px 0'><b style='color:{severity_color(str(check.get('severity')))}'>"
        f"{html.escape(check_words(check.get('code')))}</b> "
        f"<small>{html.escape(str(check.get('code')))}</small>"
        + (f" ({html.escape(str(check['tab']))})" if check.get("tab") else "")
        + f" {html.escape(str(check.get('message', '')))}</p>"
    ]
    if check.get("advice"):
        parts.append(f"<p style='margin:2px 0'><i>{html.escape(str(check['advice']))}</i></p>")
    if check.get("evidence") not in (None, {}, []):
        text = json.dumps(check["evidence"], indent=2, ensure_ascii=False, default=str)
        if len(text) > MAX_EVIDENCE_CHARS:
            text = text[:MAX_EVIDENCE_CHARS] + "\n…"
        parts.append(f"<pre style='margin:0; white-space:pre-wrap'>{html.escape(text)}</pre>")
    return "".join(parts)


def checks_html(checks: list[dict[str, Any]], opened: set[int]) -> str:
    """Badges as links ``check:N`` for a QTextBrowser, with the opened ones' details."""
    if not checks:
        return ""
    badges = " ".join(
        f"<a href='check:{i}' style='color:{severity_color(str(c.get('severity')))}; "
        f"text-decoration:none'><b>[{html.escape(check_words(c.get('code')))}</b> "
        f"<small>{html.escape(str(c.get('code')))}</small><b>]</b></a>"
        for i, c in enumerate(checks)
    )
    details = "".join(check_detail_html(checks[i]) for i in sorted(opened) if i < len(checks))
    return f"<p style='margin:4px 0'>Checks: {badges}</p>{details}"


class CheckBadges(QWidget):
    """A row of badges; clicking one shows (or hides) its details underneath."""

    sig_opened = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.checks: list[dict[str, Any]] = []
        self.opened: int | None = None
        self.buttons: list[QToolButton] = []
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(4)
        self._row.addStretch(1)
        self.detail = QLabel(self)
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.RichText)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(34, 0, 8, 4)
        layout.setSpacing(2)
        layout.addLayout(self._row)
        layout.addWidget(self.detail)
        self.hide()

    def set_checks(self, checks: list[dict[str, Any]]) -> None:
        for button in self.buttons:
            self._row.removeWidget(button)
            button.deleteLater()
        self.buttons = []
        self.checks = list(checks)
        self.opened = None
        self.detail.hide()
        for i, check in enumerate(self.checks):
            button = QToolButton(self)
            button.setText(check_words(check.get("code")))
            button.setCheckable(True)
            button.setAutoRaise(True)
            button.setToolTip(f"{check.get('message', '')} ({check.get('code')})")
            button.setAccessibleName(f"{check.get('severity')} check {check.get('code')}")
            button.clicked.connect(lambda _checked=False, i=i: self.toggle(i))
            self._row.insertWidget(i, button)
            self.buttons.append(button)
        self.apply_theme()
        self.setVisible(bool(self.checks))

    def toggle(self, index: int) -> None:
        self.opened = None if self.opened == index else index
        for i, button in enumerate(self.buttons):
            button.setChecked(i == self.opened)
        if self.opened is None:
            self.detail.hide()
        else:
            self.detail.setText(check_detail_html(self.checks[index]))
            self.detail.show()
            self.sig_opened.emit(index)

    def apply_theme(self) -> None:
        for button, check in zip(self.buttons, self.checks, strict=True):  # a button per check
            color = severity_color(str(check.get("severity")))
            button.setStyleSheet(
                f"QToolButton {{ color: {color}; border: 1px solid {color}; "
                f"border-radius: 8px; padding: 0 6px; font-weight: bold; }}"
            )
        if self.opened is not None:
            self.detail.setText(check_detail_html(self.checks[self.opened]))
