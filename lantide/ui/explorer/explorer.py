"""The workspace explorer: projects (Plan, Report, SQL tabs, knowledge), data files,
cached tables with their row counts, and external connections.

Tables open to their columns, a column's profile shows on hover, and tables and columns
drag into the SQL editor (:mod:`lantide.ui.explorer.explorer_columns`).

The tree is rebuilt from a plain snapshot that a worker reads from disk (and from the
query service for tables), so neither a large ``data/`` folder nor a busy DuckDB stalls
the UI. Double-click opens; the context menu focuses a project, sets its status, creates,
renames and deletes SQL tabs, and copies names. Expanded branches and the selection
survive a refresh.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import QHeaderView, QMenu, QTreeWidgetItem, QVBoxLayout, QWidget

from lantide.ui.explorer.explorer_columns import ExplorerColumns, ExplorerTree, make_draggable
from lantide.ui.explorer.explorer_snapshot import (
    TableRow,
    TableRows,
    WorkspaceSnapshot,
    read_workspace_snapshot,
    table_rows,
)
from lantide.ui.icons import icon
from lantide.ui.services import TAB_PLAN, TAB_REPORT, TAB_SQL, TAB_TABLE, AppServices
from lantide.ui.tree_items import child_items, top_level_items
from lantide.workspace.layout import chart_file_name, sql_tab_file_name
from lantide.workspace.lifecycle import PROJECT_STATUSES

log = logging.getLogger(__name__)

ROLE_NODE = Qt.ItemDataRole.UserRole + 1  # a dict describing what the item stands for
_REFRESH_KINDS = {"project", "sql_tab", "data", "knowledge", "document", "chart"}


def _fmt_count(n: Any) -> str:
    if n is None:
        return ""
    try:
        n = int(n)
    except (TypeError, ValueError):
        return ""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M rows"
    if n >= 10_000:
        return f"{n / 1000:.0f}k rows"
    return f"{n:,} rows"


class ExplorerPanel(QWidget):
    # The tree was rebuilt (tests and the main window wait for it).
    sig_tree_refreshed = Signal()
    # The analyst wants to add or edit external connections (the settings dialog opens).
    sig_connections_requested = Signal()

    def __init__(self, services: AppServices, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.setObjectName("ExplorerPanel")
        self.tree = ExplorerTree(self)
        self.tree.setHeaderHidden(True)
        self.tree.setColumnCount(2)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setUniformRowHeights(True)
        self.tree.setIndentation(14)
        self.tree.setAnimated(False)
        self.tree.setExpandsOnDoubleClick(True)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.itemActivated.connect(self._activated)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        self.columns = ExplorerColumns(self.tree, services, self)
        self._snapshot: WorkspaceSnapshot | None = None
        self._tables: TableRows | None = None
        self._tables_tried = False  # the database's tables were listed, or that failed
        self._pending_refresh = False
        self._scan_running = False
        self._debounce = QTimer(self, singleShot=True, interval=150)
        self._debounce.timeout.connect(self.refresh)
        services.sig_files_changed.connect(self._files_changed)
        services.sig_project_focused.connect(lambda _n: self._rebuild())
        services.sig_query_ready.connect(lambda _s: self.refresh_tables())
        services.sig_query_failed.connect(lambda _e: self._rebuild())
        if hasattr(services, "sig_tables_changed"):
            services.sig_tables_changed.connect(self.refresh_tables)
        if hasattr(services, "sig_connections_changed"):
            services.sig_connections_changed.connect(self.refresh)
        # files this process wrote (the watcher skips them) and new tabs not saved yet
        if hasattr(services, "sig_listing_changed"):
            services.sig_listing_changed.connect(self._debounce.start)
        self._unsaved_tabs: set[tuple[str, str]] = set()
        if hasattr(services, "sig_tabs_changed"):
            services.sig_tabs_changed.connect(lambda _tabs, _active: self._tabs_changed())
        self.refresh()
        if services.query is not None:
            self.refresh_tables()

    # -- reading (off the UI thread) ----------------------------------------------------
    def refresh(self) -> None:
        """Re-read projects and data files, then rebuild the tree."""
        if self._scan_running:
            self._pending_refresh = True
            return
        self._scan_running = True
        self.services.workers.submit(
            read_workspace_snapshot,
            self.services.workspace,
            on_result=self._snapshot_read,
            on_error=self._scan_failed,
            on_finished=self._scan_finished,
            name="read workspace",
            urgent=True,  # a quick listing the window needs to be usable
        )

    def _scan_finished(self) -> None:
        self._scan_running = False
        if self._pending_refresh:
            self._pending_refresh = False
            self.refresh()

    def _snapshot_read(self, snapshot: WorkspaceSnapshot) -> None:
        self._snapshot = snapshot
        self._rebuild()

    def _scan_failed(self, exc: BaseException) -> None:
        self.services.report_error(exc, "Reading the workspace")

    def snapshot(self) -> WorkspaceSnapshot | None:
        """The last workspace snapshot (projects, data files, connections)."""
        return self._snapshot

    def tables(self) -> list[TableRow] | None:
        """The tables the query service listed (None until the database is open)."""
        return None if self._tables is None else list(self._tables["tables"])

    def refresh_tables(self) -> None:
        service = self.services.query
        if service is None:
            return
        self.services.workers.submit(
            table_rows,
            service,
            on_result=self._tables_read,
            on_error=self._tables_failed,
            name="list tables",
            urgent=True,  # part of start-up: the window is usable once they are listed
        )

    def tables_listed(self) -> bool:
        """The database's tables were listed once (or listing them failed)."""
        return self._tables_tried

    def _tables_read(self, rows: TableRows) -> None:
        self._tables = rows
        self.columns.tables_listed_again()
        self._tables_tried = True
        self._rebuild()

    def _tables_failed(self, exc: BaseException) -> None:
        log.warning("show_tables: %s", exc)
        self._tables_tried = True
        self._rebuild()

    def _tabs_changed(self) -> None:
        """A new SQL tab is listed from the moment it opens, before its file exists."""
        on_disk = {
            (p["dir"], t)
            for p in (self._snapshot["projects"] if self._snapshot else [])
            for t in p["sql_tabs"]
        }
        unsaved = {
            (t.project, t.name)
            for t in self.services.open_tabs()
            if t.kind == TAB_SQL and t.project and (t.project, t.name) not in on_disk
        }
        if unsaved != self._unsaved_tabs:
            self._unsaved_tabs = unsaved
            self._rebuild()

    def _files_changed(self, changes: list) -> None:
        if any(getattr(c, "kind", None) in _REFRESH_KINDS for c in changes):
            self._debounce.start()

    # -- building the tree ---------------------------------------------------------------
    def _rebuild(self) -> None:
        if self._snapshot is None:
            return
        expanded, selected = self._view_state()
        self.tree.setUpdatesEnabled(False)
        self.tree.clear()
        snap = self._snapshot
        focused = self.services.focused_project_name()

        projects = self._group("Projects", "projects", len(snap["projects"]))
        for p in snap["projects"]:
            label = p["name"]
            item = self._item(
                projects,
                label,
                "project",
                {"kind": "project", "project": p["dir"]},
                detail=p["status"],
            )
            if p["dir"] == focused:
                font = QFont(item.font(0))
                font.setBold(True)
                item.setFont(0, font)
                item.setToolTip(0, f"{label} (focused project)")
            error = p["error"]
            if error:
                item.setIcon(0, icon("warning"))
                item.setToolTip(0, error)
                continue
            self._item(
                item,
                "Plan",
                "plan",
                {"kind": TAB_PLAN, "project": p["dir"], "name": p["plan"]},
                detail=p["plan"],
            )
            self._item(
                item,
                "Report",
                "report",
                {"kind": TAB_REPORT, "project": p["dir"], "name": p["report"]},
                detail=p["report"],
            )
            for tab in p["sql_tabs"]:
                self._item(
                    item,
                    sql_tab_file_name(tab),
                    "sql-tab",
                    {"kind": TAB_SQL, "project": p["dir"], "name": tab},
                )
            for project, tab in sorted(self._unsaved_tabs):
                if project == p["dir"] and tab not in p["sql_tabs"]:
                    self._item(
                        item,
                        sql_tab_file_name(tab),
                        "sql-tab",
                        {"kind": TAB_SQL, "project": p["dir"], "name": tab},
                        detail="not saved",
                        tooltip=f"{tab}: a new tab; saving or running it writes its file",
                    )
            for chart in p.get("charts", []):
                self._item(
                    item,
                    chart_file_name(chart),
                    "chart",
                    {"kind": "chart", "project": p["dir"], "name": chart},
                    tooltip=f"charts/{chart_file_name(chart)}: show it in the Report with "
                    "![title](charts/…)",
                )
            self._item(
                item,
                "Knowledge",
                "knowledge",
                {"kind": "knowledge", "project": p["dir"], "name": "knowledge.md"},
                detail="" if p["has_knowledge"] else "none yet",
            )

        tables = self._tables["tables"] if self._tables else []
        problem_rows = self._tables["problems"] if self._tables else []
        problems = {
            p.get("source"): p.get("error")
            for p in (self._tables["problems"] if self._tables else [])
            if p.get("source")
        }
        data = self._group("Data files", "data", len(snap["data_files"]))
        for f in snap["data_files"]:
            source = f"data/{f['name']}"
            sheets = [t for t in tables if t["kind"] == "sheet" and t.get("source") == source]
            node: dict[str, Any] = {
                "kind": TAB_TABLE,
                "name": f["table"] if not sheets else "",
                "file": f["name"],
            }
            listed = next(
                (t for t in tables if t["kind"] == "data" and t.get("source") == source), None
            )
            if listed is not None and listed.get("qualified_name") and f["table"]:
                node.update(sql_name=listed["qualified_name"], columns_of=listed["qualified_name"])
            label = f"{f['name']}/" if f.get("folder") else f["name"]  # a folder: one table
            item = self._item(
                data,
                label,
                "data-file",
                node,
                detail=_fmt_count(
                    next((t["row_count"] for t in tables if t.get("source") == source), None)
                ),
                tooltip=f"{source} — table {f['table']}" if f["table"] else source,
            )
            for sheet in sheets:
                self._item(
                    item,
                    sheet["name"],
                    "table",
                    self._table_node(sheet),
                    detail=_fmt_count(sheet.get("row_count")),
                )
            if source in problems:
                item.setIcon(0, icon("warning"))
                item.setToolTip(0, f"{source} could not be read: {problems[source]}")

        cached = [t for t in tables if t["kind"] == "cached"]
        group = self._group(
            "Cached tables", "cached-table", len(cached) if self._tables is not None else None
        )
        if self._tables is None:
            failed = self.services.query_error is not None
            waiting = QTreeWidgetItem(
                group, ["Database unavailable" if failed else "Opening the database…"]
            )
            waiting.setDisabled(True)
        for t in cached:
            self._item(
                group,
                t["name"],
                "cached-table",
                self._table_node(t),
                detail=_fmt_count(t.get("row_count")),
                tooltip=t.get("description"),
            )

        conns = self._group("Connections", "connection", len(snap["connections"]))
        for c in snap["connections"]:
            name = c.get("name", "?")
            item = self._item(
                conns,
                name,
                "connection",
                {"kind": "connection", "name": name},
                detail=c.get("dialect") or "",
                tooltip=c.get("connection_string"),
            )
            for t in tables:
                if t["kind"] == "external" and t.get("connection") == name:
                    self._item(item, t["name"], "table", self._table_node(t))
            down = next((p for p in problem_rows if p.get("connection") == name), None)
            if down is not None:  # unreachable: say so where its tables would be
                row = QTreeWidgetItem(item, [f"Cannot list tables: {down.get('error', '')}", ""])
                row.setIcon(0, icon("warning"))
                row.setData(0, ROLE_NODE, {"kind": "note", "name": name})
                row.setToolTip(
                    0, "\n".join(str(t) for t in (down.get("error"), down.get("hint")) if t)
                )
                make_draggable(row, False)

        self._restore_view_state(expanded, selected)
        self.tree.setUpdatesEnabled(True)
        self.sig_tree_refreshed.emit()

    @staticmethod
    def _table_node(t: Mapping[str, Any]) -> dict[str, Any]:
        """A listed table: opens in the table browser, drags and opens to its columns by
        the name the query layer quoted."""
        node: dict[str, Any] = {"kind": TAB_TABLE, "name": t["name"]}
        if t.get("qualified_name"):
            node.update(sql_name=t["qualified_name"], columns_of=t["qualified_name"])
        if t.get("kind") == "external":
            node["remote"] = True
        return node

    def _group(self, label: str, icon_name: str, count: int | None) -> QTreeWidgetItem:
        item = QTreeWidgetItem(self.tree, [label, "" if count is None else str(count)])
        item.setIcon(0, icon(icon_name))
        item.setData(0, ROLE_NODE, {"kind": "group", "name": label})
        make_draggable(item, False)
        font = QFont(item.font(0))
        font.setWeight(QFont.Weight.DemiBold)
        item.setFont(0, font)
        item.setForeground(1, self.palette().placeholderText())
        return item

    def _item(
        self,
        parent: QTreeWidgetItem,
        label: str,
        icon_name: str,
        node: dict,
        *,
        detail: str = "",
        tooltip: str | None = None,
    ) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [label, detail])
        item.setIcon(0, icon(icon_name))
        item.setData(0, ROLE_NODE, node)
        item.setForeground(1, self.palette().placeholderText())
        if tooltip:
            item.setToolTip(0, tooltip)
        make_draggable(item, bool(node.get("sql_name")))
        if node.get("columns_of"):
            self.columns.attach(item, node["columns_of"], remote=bool(node.get("remote")))
        return item

    @staticmethod
    def _key(item: QTreeWidgetItem) -> tuple:
        node = item.data(0, ROLE_NODE) or {}
        return (node.get("kind"), node.get("project"), node.get("name"))

    def _all_items(self):
        stack = top_level_items(self.tree)
        while stack:
            item = stack.pop()
            yield item
            stack.extend(child_items(item))

    def _view_state(self) -> tuple[set, tuple | None]:
        if self.tree.topLevelItemCount() == 0:  # first build: open groups and the focused project
            return {
                ("group", None, "Projects"),
                ("group", None, "Data files"),
                ("group", None, "Cached tables"),
                ("project", self.services.focused_project_name(), None),
            }, None
        expanded = {self._key(i) for i in self._all_items() if i.isExpanded()}
        current = self.tree.currentItem()
        return expanded, self._key(current) if current else None

    def _restore_view_state(self, expanded: set, selected: tuple | None) -> None:
        for item in self._all_items():
            key = self._key(item)
            if key in expanded:
                item.setExpanded(True)
            if selected is not None and key == selected:
                self.tree.setCurrentItem(item)

    # -- actions -------------------------------------------------------------------------
    def find_item(self, kind: str, project: str | None = None, name: str | None = None):
        for item in self._all_items():
            node = item.data(0, ROLE_NODE) or {}
            if (
                node.get("kind") == kind
                and (project is None or node.get("project") == project)
                and (name is None or node.get("name") == name)
            ):
                return item
        return None

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        node = item.data(0, ROLE_NODE) or {}
        kind = node.get("kind")
        if kind in (TAB_PLAN, TAB_REPORT, TAB_SQL, TAB_TABLE, "knowledge"):
            if kind == TAB_TABLE and not node.get("name"):
                return
            self.services.request_open(kind, node.get("project"), node.get("name") or "")
        elif kind == "project":
            self._focus(node["project"])

    def _focus(self, project: str) -> None:
        try:
            self.services.focus_project(project)
        except Exception as exc:
            self.services.report_error(exc, "Focusing the project")

    def _context_menu(self, pos: QPoint) -> None:
        self.context_menu(self.tree.itemAt(pos)).exec(self.tree.viewport().mapToGlobal(pos))

    def context_menu(self, item: QTreeWidgetItem | None) -> QMenu:
        """The menu of a row (or of the empty tree), not yet shown."""
        node = (item.data(0, ROLE_NODE) if item else None) or {"kind": "none"}
        menu = QMenu(self)
        kind = node.get("kind")
        if item is not None and kind in (TAB_PLAN, TAB_REPORT, TAB_SQL, TAB_TABLE, "knowledge"):
            menu.addAction(icon("open"), "Open", lambda: self._activated(item))
        if item is not None and kind == "project":
            project = node["project"]
            menu.addAction(icon("focus"), "Focus this project", lambda: self._focus(project))
            status_menu = menu.addMenu("Set status")
            for status in PROJECT_STATUSES:
                act = status_menu.addAction(status)
                act.triggered.connect(lambda _c=False, s=status: self._set_status(project, s))
                act.setCheckable(True)
                act.setChecked(item.text(1) == status)
            menu.addAction(icon("sql-tab"), "New SQL tab…", lambda: self.new_sql_tab(project))
        if kind == TAB_SQL:
            menu.addAction(
                icon("edit"),
                "Rename SQL tab…",
                lambda: self._rename_sql_tab(node["project"], node["name"]),
            )
            menu.addAction(
                icon("delete"),
                "Delete SQL tab…",
                lambda: self._delete_sql_tab(node["project"], node["name"]),
            )
        if kind == "connection" or (kind == "group" and node.get("name") == "Connections"):
            menu.addAction(
                icon("connection"), "Add or edit connections…", self.sig_connections_requested.emit
            )
        if kind in (TAB_TABLE, TAB_SQL) and node.get("name"):
            menu.addAction("Copy name", lambda: QGuiApplication.clipboard().setText(node["name"]))
        if node.get("sql_name"):  # a table or column, as SQL names it (quoted)
            menu.addAction(
                "Copy name for SQL",
                lambda: QGuiApplication.clipboard().setText(node["sql_name"]),
            )
        if menu.actions():
            menu.addSeparator()
        menu.addAction(icon("add"), "New project…", self.new_project)
        menu.addAction(icon("refresh"), "Refresh", self._refresh_all)
        return menu

    def _refresh_all(self) -> None:
        self.columns.tables_listed_again(remote_too=True)
        self.refresh()
        self.refresh_tables()

    def _run(self, fn, *args, what: str, then=None) -> None:
        def done(result):
            self.refresh()
            if then:
                then(result)

        self.services.workers.submit(
            lambda _ctx: fn(*args),
            on_result=done,
            on_error=lambda e: self.services.report_error(e, what),
            name=what,
        )

    def _set_status(self, project: str, status: str) -> None:
        ws = self.services.workspace
        self._run(lambda: ws.project(project).set_status(status), what="Setting the status")

    def new_project(self) -> None:
        from PySide6.QtWidgets import QInputDialog  # (not before the first paint: see main_window)

        name, ok = QInputDialog.getText(self, "New project", "Project name:")
        if not ok or not name.strip():
            return
        ws = self.services.workspace
        self._run(
            lambda: ws.create_project(name.strip()),
            what="Creating the project",
            then=lambda p: self.services.focus_project(p.dirname),
        )

    def new_sql_tab(self, project: str, name: str = "", problem: str = "") -> None:
        """Ask a name, check it (the tab's file and cached table), then open an empty tab;
        its file is written when it is first saved or run. A refused name asks again,
        saying why."""
        from PySide6.QtWidgets import QInputDialog

        label = "Tab name (also the name of its cached table):"
        name, ok = QInputDialog.getText(
            self, "New SQL tab", f"{problem}\n\n{label}" if problem else label, text=name
        )
        name = name.strip()
        if not ok or not name:
            return
        service = self.services.query
        if service is None:
            self.services.post_message(
                "The database is still opening; try again in a moment.", "warning"
            )
            return

        def checked(clean: str) -> None:
            open_tab = next(
                (
                    t
                    for t in self.services.open_tabs()
                    if t.kind == TAB_SQL
                    and t.project == project
                    and t.name.casefold() == clean.casefold()
                ),
                None,
            )
            if open_tab is not None:  # an unsaved new tab: no file yet, but the name is taken
                self.new_sql_tab(
                    project,
                    name,
                    f"A SQL tab named {open_tab.name!r} is already "
                    "open in this project. Choose another name.",
                )
                return
            self.services.request_open(TAB_SQL, project, clean)

        def refused(exc: BaseException) -> None:
            message = getattr(exc, "message", None) or str(exc)
            hint = getattr(exc, "hint", None)
            self.new_sql_tab(
                project, name, f"{message[:1].upper()}{message[1:]}." + (f" {hint}" if hint else "")
            )

        self.services.workers.submit(
            lambda _ctx: service.check_new_sql_tab(project, name),
            on_result=checked,
            on_error=refused,
            name="check the new SQL tab's name",
        )

    def _rename_sql_tab(self, project: str, tab: str) -> None:
        from lantide.ui.sql.tab_rename import rename_sql_tab

        rename_sql_tab(self, self.services, project, tab, then=lambda _result: self.refresh())

    def _delete_sql_tab(self, project: str, tab: str) -> None:
        from PySide6.QtWidgets import QMessageBox

        answer = QMessageBox.question(
            self,
            "Delete SQL tab",
            f"Delete the SQL tab {tab!r} of {project}? Its file goes to the workspace trash.",
        )
        if answer != QMessageBox.StandardButton.Yes or self.services.query is None:
            return
        service = self.services.query
        self._run(lambda: service.delete_sql_tab(project, tab), what="Deleting the SQL tab")
