"""A SQL tab's lineage: what it reads, what reads it, and whether each tab is up to date.

Built from ``QueryService.lineage(project)`` (inputs parsed from each tab's SQL) and
``list_sql_tabs(project)`` (``never_run`` / ``up_to_date`` / ``stale`` per tab), fetched
in a worker. Double-clicking a tab opens it; a data file or cached table opens in a table
browser. *Graph* shows the whole project as a picture
(:mod:`lantide.ui.sql.lineage_graph_view`), with this tab's upstream chain highlighted and
Source Run for any tab.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.icons import icon
from lantide.ui.sql.lineage_graph_view import LineageGraphView
from lantide.ui.theme import colors
from lantide.ui.themed import mark_theme, theme_switched

STATE_TEXT = {"up_to_date": "up to date", "stale": "stale", "never_run": "never run"}
_ROLE_TARGET = Qt.ItemDataRole.UserRole + 1  # ("sql", tab) or ("table", name)


def upstream_closure(reads: dict[str, list[str]], tab: str) -> list[str]:
    """Every tab ``tab`` reads, directly or through other tabs (nearest first)."""
    seen: list[str] = []
    todo = list(reads.get(tab, []))
    while todo:
        name = todo.pop(0)
        if name in seen or name == tab:
            continue
        seen.append(name)
        todo.extend(reads.get(name, []))
    return seen


def tab_lineage_summary(lineage: dict, tabs: list[dict], tab: str) -> dict:
    """What the view shows for ``tab``: its state, inputs, readers and stale upstream tabs."""
    entries = {t["tab"]: t for t in lineage.get("tabs", [])}
    states = {t["tab"]: t for t in tabs}
    reads = {name: list(e.get("reads_tabs", [])) for name, e in entries.items()}
    me = entries.get(tab, {})
    upstream = upstream_closure(reads, tab)
    return {
        "tab": tab,
        "state": states.get(tab, {}).get("state"),
        "row_count": states.get(tab, {}).get("row_count"),
        "last_run_at": states.get(tab, {}).get("last_run_at"),
        "error": me.get("error"),
        "reads_tabs": [(t, states.get(t, {}).get("state")) for t in me.get("reads_tabs", [])],
        "reads_sources": [s.get("table") for s in me.get("reads_sources", [])],
        "reads_cached": list(me.get("reads_cached", [])),
        "reads_external": list(me.get("reads_external", [])),
        "unknown_tables": list(me.get("unknown_tables", [])),
        "reads_files": list(me.get("reads_files", [])),
        "read_by": sorted((name for name, ups in reads.items() if tab in ups), key=str.casefold),
        "stale_upstream": [
            t for t in upstream if states.get(t, {}).get("state") in ("stale", "never_run")
        ],
        "cycle": lineage.get("cycle"),
    }


def _unquoted(name: str) -> str:
    """``"customers"`` as customers, ``"book"."Sheet1"`` as book.Sheet1 (for display)."""
    parts = (
        [
            p[1:-1].replace('""', '"') if len(p) > 1 and p[0] == p[-1] == '"' else p
            for p in name.split('"."')
        ]
        if '"."' in name
        else [name]
    )
    if len(parts) > 1:
        parts = [parts[0].lstrip('"')] + parts[1:-1] + [parts[-1].rstrip('"')]
        return ".".join(parts)
    text = parts[0]
    return text[1:-1].replace('""', '"') if len(text) > 1 and text[0] == text[-1] == '"' else text


class LineageView(QWidget):
    sig_open_requested = Signal(str, str)  # kind ("sql" or "table"), name
    sig_source_run_requested = Signal(str)  # a tab, from the graph

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        mark_theme(self)
        self.headline = QLabel("Lineage appears after the tab's SQL is read.", self)
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Table", "State"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.itemActivated.connect(self._activated)
        self.tree.itemDoubleClicked.connect(self._activated)
        self.graph_view = LineageGraphView(self)
        self.graph_view.sig_open_requested.connect(self.sig_open_requested)
        self.graph_view.sig_source_run_requested.connect(self.sig_source_run_requested)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.tree)
        self.stack.addWidget(self.graph_view)
        self.modes = QButtonGroup(self)
        self.modes.setExclusive(True)
        switch = QHBoxLayout()
        switch.setContentsMargins(0, 0, 0, 0)
        switch.setSpacing(2)
        for index, (text, tip) in enumerate(
            (
                ("Tree", "What this tab reads and what reads it"),
                ("Graph", "The project's tabs and sources as a picture"),
            )
        ):
            button = QToolButton(self)
            button.setText(text)
            button.setToolTip(tip)
            button.setCheckable(True)
            button.setChecked(index == 0)
            self.modes.addButton(button, index)
            switch.addWidget(button)
        self.modes.idClicked.connect(self.stack.setCurrentIndex)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.headline, 1)
        top.addLayout(switch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        self.summary: dict | None = None
        self.graph: dict | None = None

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if theme_switched(self, event) and self.summary is not None:
            self.show_summary(self.summary)  # colours of the new theme
            if self.graph is not None:
                self.graph_view.show_graph(self.graph, self.summary.get("tab"))

    def show_graph_mode(self, graph: bool = True) -> None:
        self.modes.button(1 if graph else 0).setChecked(True)
        self.stack.setCurrentIndex(1 if graph else 0)

    def show_lineage(self, lineage: dict) -> None:
        """The tab's summary (the tree) and the project's graph, as one worker made them."""
        self.show_summary(lineage["summary"])
        self.graph = lineage["graph"]
        self.graph_view.show_graph(lineage["graph"], lineage["summary"].get("tab"))

    def show_error(self, message: str) -> None:
        self.summary = None
        self.tree.clear()
        self.headline.setText(message)

    def show_summary(self, summary: dict) -> None:
        self.summary = summary
        theme = colors()
        state = summary.get("state") or ""
        color = {"up_to_date": theme.success, "stale": theme.warning}.get(state, theme.muted)
        parts = [
            f"<b>{summary['tab']}</b> is <span style='color:{color.name()}'>"
            f"{STATE_TEXT.get(state, 'unknown')}</span>"
        ]
        if summary.get("row_count") is not None:
            parts.append(f"{summary['row_count']:,} rows cached")
        if summary.get("stale_upstream"):
            names = ", ".join(summary["stale_upstream"])
            parts.append(f"upstream not up to date: {names} (Source Run recomputes them)")
        if summary.get("cycle"):
            parts.append(
                f"<span style='color:{theme.danger.name()}'>tabs read each other in a cycle: "
                f"{' → '.join(summary['cycle'])}</span>"
            )
        if summary.get("error"):
            parts.append(
                f"<span style='color:{theme.danger.name()}'>"
                f"{summary['error'].get('message', '')}</span>"
            )
        self.headline.setText(" · ".join(parts))
        self.tree.clear()
        reads = QTreeWidgetItem(self.tree, ["Reads", ""])
        for name, tab_state in summary["reads_tabs"]:
            self._item(
                reads, name, "sql-tab", STATE_TEXT.get(tab_state, ""), ("sql", name), tab_state
            )
        for name in summary["reads_sources"]:
            self._item(
                reads, name, "data-file", "data file", ("table", name), label=_unquoted(name)
            )
        for name in summary["reads_cached"]:
            self._item(reads, name, "cached-table", "cached table", ("table", name))
        for name in summary["reads_external"]:
            self._item(reads, name, "connection", "external", None)
        for name in summary["reads_files"]:
            self._item(reads, name, "data-file", "file", None)
        for name in summary["unknown_tables"]:
            self._item(reads, name, "warning", "not found", None, "error")
        if reads.childCount() == 0:
            QTreeWidgetItem(reads, ["nothing yet", ""])
        read_by = QTreeWidgetItem(self.tree, ["Read by", ""])
        for name in summary["read_by"]:
            self._item(read_by, name, "sql-tab", "", ("sql", name))
        if read_by.childCount() == 0:
            QTreeWidgetItem(read_by, ["no other tab", ""])
        self.tree.expandAll()
        self.tree.resizeColumnToContents(0)

    def _item(
        self,
        parent,
        name: str,
        icon_name: str,
        state_text: str,
        target,
        state=None,
        label: str | None = None,
    ):
        item = QTreeWidgetItem(parent, [label or name, state_text])
        item.setIcon(0, icon(icon_name))
        item.setData(0, _ROLE_TARGET, target)
        theme = colors()
        tint = {
            "stale": theme.warning,
            "never_run": theme.muted,
            "up_to_date": theme.success,
            "error": theme.danger,
        }.get(state)
        if tint is not None:
            item.setForeground(1, QBrush(tint))
        if target is not None:
            item.setToolTip(0, "Double-click to open")
        return item

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        target = item.data(0, _ROLE_TARGET)
        if target:
            self.sig_open_requested.emit(target[0], target[1])
