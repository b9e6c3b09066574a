"""Source Run as it happens: the chain in dependency order, each tab's status as it
finishes (ran, up to date, failed, not run), with row counts, times and errors.

It shows the ``progress`` events of ``QueryService.source_run_sql_tab`` (``start``, one
``tab`` event per status change, ``done``) and its final report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from lantide.query.sourcerun import CANCELLED, CANCELLED_CODE, chain_summary, tab_outcome
from lantide.ui.icons import icon
from lantide.ui.theme import colors

if TYPE_CHECKING:
    from lantide.query.sourcerun import SourceRunEvent, SourceRunReport, SourceRunSummary

STATUS_TEXT = {
    "running": "running…",
    "ran": "ran",
    "skipped": "up to date",
    "failed": "failed",
    "not_run": "not run",
    "waiting": "waiting",
    CANCELLED: "cancelled by you",
}
_STATUS_ICON = {
    "ran": "approve",
    "skipped": "approve",
    "failed": "error",
    "not_run": "warning",
    "running": "run",
    "waiting": "history",
    CANCELLED: "stop",
}


class SourceRunView(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.headline = QLabel(
            "Source Run recomputes this tab's upstream chain, then the tab "
            "(Ctrl+Shift+Enter). Tabs that are up to date are skipped.",
            self,
        )
        self.headline.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Tab", "Status", "Rows", "Time", "Detail"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(6)
        layout.addWidget(self.headline)
        layout.addWidget(self.tree, 1)
        self._items: dict[str, QTreeWidgetItem] = {}
        self.statuses: dict[str, str] = {}

    def start(self, tab: str) -> None:
        self.tree.clear()
        self._items.clear()
        self.statuses.clear()
        self.headline.setText(f"Source Run of {tab}: reading the lineage…")

    def on_progress(self, event: SourceRunEvent) -> None:
        """One progress event of the Source Run (delivered on the UI thread)."""
        if not isinstance(event, dict):
            return
        if event["event"] == "start":
            order = event.get("order") or []
            self.headline.setText(
                f"Source Run of {event.get('tab')}: {len(order)} tab"
                f"{'s' if len(order) != 1 else ''} in dependency order."
            )
            for name in order:
                self._set(name, "waiting")
        elif event["event"] == "tab":
            self._set(event["tab"], tab_outcome(event), event)
        elif event["event"] == "done":
            self._headline_from(event)

    def finish(self, report: SourceRunReport) -> None:
        for entry in report.get("tabs", []):
            self._set(entry["tab"], tab_outcome(entry), entry)
        self._headline_from(report)

    def fail(self, exc: BaseException) -> None:
        if getattr(exc, "code", None) == CANCELLED_CODE:
            self.headline.setText("Source Run cancelled by you before any tab finished.")
        else:
            message = getattr(exc, "message", None) or str(exc)
            self.headline.setText(f"Source Run stopped: {message}")
        for name, status in self.statuses.items():
            if status in ("waiting", "running"):
                self._set(name, "not_run", {"reason": "stopped"})

    def _headline_from(self, report: SourceRunSummary) -> None:
        if report.get("cancelled"):
            self.headline.setText(
                f"Source Run of {report.get('tab')} cancelled by you. "
                f"Before the cancel: {chain_summary(report)}."
            )
            return
        parts = [f"{report.get('ran', 0)} ran", f"{report.get('skipped', 0)} up to date"]
        if report.get("failed"):
            parts.append(f"{report['failed']} failed")
        if report.get("not_run"):
            parts.append(f"{report['not_run']} not run")
        ms = report.get("duration_ms")
        timing = f" in {ms:,} ms" if isinstance(ms, int) else ""
        self.headline.setText(f"Source Run of {report.get('tab')}: {', '.join(parts)}{timing}.")

    def _set(self, tab: str, status: str, entry: Mapping | None = None) -> None:
        entry = entry or {}
        item = self._items.get(tab)
        if item is None:
            item = QTreeWidgetItem(self.tree, [tab, "", "", "", ""])
            self._items[tab] = item
        self.statuses[tab] = status
        item.setText(1, STATUS_TEXT.get(status, status))
        item.setIcon(1, icon(_STATUS_ICON.get(status, "info")))
        if entry.get("row_count") is not None:
            item.setText(2, f"{entry['row_count']:,}")
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if entry.get("duration_ms") is not None:
            item.setText(3, f"{entry['duration_ms']:,} ms")
        detail = entry.get("reason") or ""
        after_cancel = status == "not_run" and detail in ("cancelled", "stopped")
        if after_cancel:
            detail = "not started: the Source Run was cancelled"
        error = entry.get("error")
        if status == CANCELLED:
            detail = "stopped before it finished; its cached table is as it was"
        elif isinstance(error, dict):
            detail = error.get("message", "")
            if error.get("hint"):
                item.setToolTip(4, error["hint"])
        if detail:
            item.setText(4, detail)
        theme = colors()
        tint = {
            "failed": theme.danger,
            "not_run": theme.muted if after_cancel else theme.warning,
            "skipped": theme.muted,
            CANCELLED: theme.muted,
            "ran": theme.success,
        }.get(status)
        item.setForeground(1, QBrush(tint) if tint is not None else QBrush())
        for col in range(4):
            self.tree.resizeColumnToContents(col)
