"""A table browser tab: any table of the workspace (a data file, a workbook sheet, a cached
table) with its first rows (paged like a query result), its schema and DDL, and a column
profile (nulls, distinct count, min/max, a small histogram).

Everything is read in workers through the query service: ``read_schema`` and
``relation_info`` when the tab opens, pages through ``fetch_rows``, the profile through
``profile_table`` the first time the Profile view is shown (it scans the whole table, so
it can be stopped). The tab refreshes itself when its data file or cached table changes.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.explorer.column_profile_view import ColumnProfileView
from lantide.ui.icons import icon
from lantide.ui.notice_banner import NoticeBanner
from lantide.ui.sql.lineage_view import _unquoted
from lantide.ui.sql.query_jobs import submit_query
from lantide.ui.sql.result_panel import ResultPanel, describe_result, first_block
from lantide.ui.sql.sql_highlighter import SqlHighlighter, is_dark
from lantide.ui.themed import mark_theme, theme_switched
from lantide.workspace.watcher import DATA

KIND_TEXT = {
    "data_file": "data file",
    "cached_table": "cached table",
    "external": "external table",
    "table": "table",
}


class TableBrowserWidget(QWidget):
    sig_title_changed = Signal(str)
    sig_loaded = Signal(object)  # the schema dict, or the exception
    sig_profile_finished = Signal(object)  # the profile dict, or the exception

    def __init__(self, services, table_name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.table_name = table_name
        mark_theme(self)
        self.schema: dict | None = None
        self.info: dict | None = None
        self.profile: dict | None = None
        self._load_worker = None
        self._profile_worker = None

        self.heading = QLabel(self)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.refresh_button = QPushButton(icon("refresh"), "Refresh", self)
        self.refresh_button.clicked.connect(self.load)
        top = QHBoxLayout()
        top.setContentsMargins(10, 8, 8, 4)
        top.addWidget(self.heading, 1)
        top.addWidget(self.refresh_button)
        self.banner = NoticeBanner(self)

        self.rows = ResultPanel(services, self)
        self.rows.sig_problem_reported.connect(
            lambda t: self.banner.show_notice(t, level="warning")
        )
        self.columns_table = QTableWidget(0, 3, self)
        self.columns_table.setHorizontalHeaderLabels(["Column", "Type", "Nullable"])
        self.columns_table.verticalHeader().setVisible(False)
        self.columns_table.horizontalHeader().setStretchLastSection(True)
        self.columns_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.ddl = QPlainTextEdit(self)
        self.ddl.setReadOnly(True)
        self.ddl.setFont(self._mono())
        self._ddl_highlighter = SqlHighlighter(self.ddl.document(), dark=is_dark(self.palette()))
        schema_split = QSplitter(Qt.Orientation.Vertical, self)
        schema_split.addWidget(self.columns_table)
        schema_split.addWidget(self.ddl)
        schema_split.setSizes([300, 120])

        self.profile_view = ColumnProfileView(self)
        self.profile_status = QLabel(
            "The profile scans the whole table; it starts when you open this view.", self
        )
        self.profile_stop = QPushButton(icon("stop"), "Stop", self)
        self.profile_stop.clicked.connect(self.stop_profile)
        self.profile_stop.setEnabled(False)
        self.profile_again = QPushButton(icon("refresh"), "Profile again", self)
        self.profile_again.clicked.connect(self.compute_profile)
        profile_bar = QHBoxLayout()
        profile_bar.setContentsMargins(8, 4, 8, 4)
        profile_bar.addWidget(self.profile_status, 1)
        profile_bar.addWidget(self.profile_stop)
        profile_bar.addWidget(self.profile_again)
        profile_page = QWidget(self)
        profile_layout = QVBoxLayout(profile_page)
        profile_layout.setContentsMargins(0, 0, 0, 0)
        profile_layout.addLayout(profile_bar)
        profile_layout.addWidget(self.profile_view, 1)

        self.views = QTabWidget(self)
        self.views.setDocumentMode(True)
        self.views.addTab(self.rows, icon("table"), "Rows")
        self.views.addTab(schema_split, icon("sql"), "Schema")
        self.views.addTab(profile_page, icon("chart"), "Profile")
        self.views.currentChanged.connect(self._view_changed)
        self._profile_page = profile_page

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        banner_box = QHBoxLayout()
        banner_box.setContentsMargins(8, 0, 8, 0)
        banner_box.addWidget(self.banner)
        layout.addLayout(banner_box)
        layout.addWidget(self.views, 1)

        self._show_heading()
        services.sig_files_changed.connect(self._files_changed)
        services.sig_tables_changed.connect(self._tables_changed)
        services.when_query_ready(lambda _q: self.load())

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if theme_switched(self, event):
            self._ddl_highlighter.set_dark(is_dark(self.palette()))
            self._show_heading()

    def _mono(self):
        from PySide6.QtGui import QFontDatabase

        return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    # -- the tab protocol --------------------------------------------------------------------
    def title(self) -> str:
        return _unquoted(self.table_name)

    def is_dirty(self) -> bool:
        return False

    def shutdown(self) -> None:
        for worker in (self._load_worker, self._profile_worker):
            if worker is not None:
                worker.cancel()
        self.rows.grid.set_result_model(None)

    # -- loading -------------------------------------------------------------------------------
    def load(self) -> None:
        """(Re)read the schema, the row count and the first rows."""
        if self._load_worker is not None:
            return
        table = self.table_name
        self.banner.clear()
        self.refresh_button.setEnabled(False)

        def work(_ctx, query):
            schema = query.read_schema(table)
            info = query.relation_info(table)
            return schema, info, first_block(query, table)

        self._load_worker = submit_query(
            self.services,
            work,
            label=f"Open {self.title()}",
            on_result=self._loaded,
            on_error=self._load_failed,
            on_finished=self._load_done,
        )

    def _load_done(self) -> None:
        self._load_worker = None
        self.refresh_button.setEnabled(True)

    def _loaded(self, outcome) -> None:
        self._load_done()
        self.schema, self.info, rows = outcome
        self._show_heading()
        self.rows.show_rows(
            self.info["columns"],
            self.info["row_count"],
            rows,
            relation=self.table_name,
            summary=describe_result(self.info["row_count"], len(rows)),
        )
        self.columns_table.setRowCount(len(self.schema.get("columns", [])))
        for i, col in enumerate(self.schema.get("columns", [])):
            self.columns_table.setItem(i, 0, QTableWidgetItem(col.get("name", "")))
            self.columns_table.setItem(i, 1, QTableWidgetItem(str(col.get("type", ""))))
            nullable = col.get("nullable")
            self.columns_table.setItem(
                i, 2, QTableWidgetItem("" if nullable is None else ("yes" if nullable else "no"))
            )
        self.columns_table.resizeColumnsToContents()
        self.ddl.setPlainText(_pretty_ddl(self.schema.get("ddl", "")))
        self.profile = None
        if self.views.currentWidget() is self._profile_page:
            self.compute_profile()
        self.sig_loaded.emit(self.schema)

    def _load_failed(self, exc: BaseException) -> None:
        self._load_done()
        self.banner.show_error(
            exc, what=f"Opening {self.title()}", actions=[("Try again", self.load)]
        )
        self.sig_loaded.emit(exc)

    def _show_heading(self) -> None:
        name = self.title()
        if self.schema is None:
            self.heading.setText(f"<b style='font-size:large'>{name}</b>")
            return
        raw_kind = str(self.schema.get("kind") or "")
        kind = KIND_TEXT.get(raw_kind, raw_kind)
        parts = [kind]
        if self.info is not None:
            parts.append(f"{self.info['row_count']:,} rows")
            parts.append(f"{len(self.info['columns'])} columns")
        if self.schema.get("source"):
            parts.append(str(self.schema["source"]))
        self.heading.setText(
            f"<b style='font-size:large'>{name}</b>&nbsp;&nbsp;"
            f"<span style='color:gray'>{' · '.join(parts)}</span>"
        )

    # -- profile -----------------------------------------------------------------------------
    def _view_changed(self, _index: int) -> None:
        if self.views.currentWidget() is self._profile_page and self.profile is None:
            self.compute_profile()

    def compute_profile(self) -> None:
        if self._profile_worker is not None or self.services.query is None:
            return
        table = self.table_name
        self.profile_status.setText("Profiling every column…")
        self.profile_stop.setEnabled(True)
        self.profile_again.setEnabled(False)
        self._profile_worker = submit_query(
            self.services,
            lambda _ctx, q: q.profile_table(table),
            label=f"Profile {self.title()}",
            on_result=self._profile_done,
            on_error=self._profile_failed,
            on_finished=self._profile_ended,
        )

    def stop_profile(self) -> None:
        if self._profile_worker is not None:
            self._profile_worker.cancel()

    def _profile_ended(self) -> None:
        self._profile_worker = None
        self.profile_stop.setEnabled(False)
        self.profile_again.setEnabled(True)

    def _profile_done(self, profile: dict) -> None:
        self._profile_ended()
        self.profile = profile
        self.profile_view.set_profile(profile)
        self.profile_status.setText(
            f"{profile.get('row_count', 0):,} rows, "
            f"{len(profile.get('columns', []))} columns profiled."
        )
        self.sig_profile_finished.emit(profile)

    def _profile_failed(self, exc: BaseException) -> None:
        self._profile_ended()
        message = getattr(exc, "message", None) or str(exc)
        self.profile_status.setText(f"Profile not computed: {message}")
        self.sig_profile_finished.emit(exc)

    # -- changes -------------------------------------------------------------------------------
    def _files_changed(self, changes) -> None:
        source = (self.schema or {}).get("source")
        if not source:
            return
        for change in changes:
            if change.kind == DATA and str(change.path).endswith(str(source).lstrip("./")):
                self.load()
                return

    def _tables_changed(self) -> None:
        """A run replaced some cached table: reload when it was this one."""
        if (self.schema or {}).get("kind") != "cached_table" or self._load_worker is not None:
            return
        table, known = self.table_name, self.info

        def check(_ctx, query):
            return query.relation_info(table)

        def compare(info: dict) -> None:
            if (
                known is None
                or info.get("row_count") != known.get("row_count")
                or info.get("columns") != known.get("columns")
            ):
                self.load()

        submit_query(
            self.services,
            check,
            label=f"Check {self.title()}",
            track=False,
            on_result=compare,
            on_error=lambda exc: None,
        )


def _pretty_ddl(ddl: str) -> str:
    """``CREATE TABLE t (a INT, b DECIMAL(18, 3))`` with one column per line."""
    head, sep, rest = ddl.partition(" (")
    if not sep or not rest.endswith(")"):
        return ddl
    columns: list[str] = []
    current: list[str] = []
    depth, quoted = 0, False
    for ch in rest[:-1]:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "([":
            depth += 1
        elif not quoted and ch in ")]":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            columns.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    columns.append("".join(current).strip())
    return head + " (\n    " + ",\n    ".join(columns) + "\n);"
