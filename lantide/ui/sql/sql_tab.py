"""A SQL tab: the editor of ``projects/P/sql/TAB.sql``, Run and Source Run, the paged
result, its quick chart and the tab's lineage.

- **Run** (Ctrl+Enter) saves the tab and runs it with ``run_sql_tab``: the result is
  cached under the tab's name and the grid pages through it. With text selected, Run
  runs just the selection with ``run_query`` (an exploratory look; the grid pages it when
  the QEM cached it, else shows the preview).
- **Source Run** (Ctrl+Shift+Enter) recomputes the tab's upstream chain first; each
  tab's progress is listed as it happens.
- **Stop** (and the status bar's cancel) interrupts this tab's statement only.
- Errors and refusals show the QEM's message and advice above the result; when the parser
  knows the position, the editor marks it. A ``purpose`` (required while the project is
  executing) is typed in the toolbar.
- A file changed by another program reloads a clean tab; a dirty tab asks.
- **Format** (Ctrl+Shift+F), **Explain** (Ctrl+E) / **Explain Analyze** (Ctrl+Alt+E) into
  the result's Plan view, and **Go to definition** (F12, Ctrl+click): built in
  :mod:`lantide.ui.sql.reading_actions`, in the editor's context menu and the Query menu.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from lantide.query.history import run_entry as history_entry
from lantide.ui.find_replace import FindReplaceBarWidget
from lantide.ui.icons import icon
from lantide.ui.notice_banner import INFO, WARNING, NoticeBanner
from lantide.ui.sql import run_outcome, sql_runs
from lantide.ui.sql.connection_picker import ConnectionPicker, bind_connection, header_connection_of
from lantide.ui.sql.lineage_view import LineageView, tab_lineage_summary
from lantide.ui.sql.plan_view import PlanView
from lantide.ui.sql.query_jobs import record_history, submit_query
from lantide.ui.sql.reading_actions import add_reading_actions, format_tab, go_to_definition
from lantide.ui.sql.result_panel import ResultPanel
from lantide.ui.sql.source_run_view import SourceRunView
from lantide.ui.sql.sql_completion import schema_catalog
from lantide.ui.sql.sql_editor import SqlEditor
from lantide.ui.sql.sql_tab_file import SqlTabFile, tab_file_path
from lantide.ui.sql.sql_toolbar import FitToWidth, StatusLabel, build_toolbar
from lantide.workspace.watcher import DATA, SQL_TAB

if TYPE_CHECKING:
    from lantide.query.result_types import QueryResult

PURPOSE_CODES = ("PURPOSE_REQUIRED", "PURPOSE_TOO_LONG")
EXPLAIN = "explain"  # the run kind of Explain / Explain Analyze (beside sql_runs' kinds)


class SqlTabWidget(QWidget):
    sig_title_changed = Signal(str)
    sig_dirty_changed = Signal(bool)
    sig_loaded = Signal()
    sig_run_finished = Signal(object)  # the result dict, or the exception
    sig_plan_finished = Signal(object)  # Explain's QueryPlan, or the exception
    sig_definition_found = Signal(object)  # go to definition's Definition, or None
    sig_format_finished = Signal(object)  # Formatted, the refusal, or None (text changed)
    # made by sql_toolbar.build_toolbar
    run_action: QAction
    source_run_action: QAction
    stop_action: QAction
    connection_picker: ConnectionPicker
    purpose_edit: QLineEdit
    purpose_count: QLabel
    busy: QProgressBar
    status_label: StatusLabel
    _busy_action: QAction
    toolbar_fit: FitToWidth
    # made by reading_actions.add_reading_actions
    format_action: QAction
    explain_action: QAction
    explain_analyze_action: QAction
    definition_action: QAction

    def __init__(self, services, project: str, tab_name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.project = project
        self.tab_name = tab_name
        self.file = SqlTabFile(services, project, tab_name, self)
        self.file.sig_read.connect(self._loaded)
        self.file.sig_read_failed.connect(self._load_failed)
        self._worker = None
        self._lineage_worker = None
        self._run_started = 0.0
        self._run_kind = ""
        self.last_result: Mapping | None = None

        self.editor = SqlEditor(schema_catalog(services), self)
        self.editor.setReadOnly(True)
        self.editor.setAccessibleName(f"SQL of {tab_name}")
        self.editor.setPlaceholderText(
            "SELECT … (Ctrl+Enter runs, Ctrl+Shift+Enter runs the "
            "upstream chain first, Ctrl+Space completes)"
        )
        self.editor.document().modificationChanged.connect(self._modification_changed)
        self.find_bar = FindReplaceBarWidget(self.editor, self)
        editor_box = QWidget(self)
        editor_layout = QVBoxLayout(editor_box)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        editor_layout.setSpacing(0)
        editor_layout.addWidget(self.editor, 1)
        editor_layout.addWidget(self.find_bar)
        self.banner = NoticeBanner(self)
        self.result = ResultPanel(services, self)
        self.result.set_grid_state_key(project, tab_name)
        self.result.sig_problem_reported.connect(
            lambda text: self.banner.show_notice(text, level=WARNING)
        )
        if self.result.chart is not None:
            self.result.chart.sig_save_requested.connect(self._ask_chart_name)
        self.plan_view = PlanView(self)
        self.result.views.addTab(self.plan_view, icon("plan-tree"), "Plan")
        self.lineage = LineageView(self)
        self.lineage.sig_open_requested.connect(self._open_from_lineage)
        self.lineage.sig_source_run_requested.connect(self._source_run_from_lineage)
        self.source_run_view = SourceRunView(self)
        self.bottom = QTabWidget(self)
        self.bottom.setDocumentMode(True)
        self.bottom.addTab(self.result, icon("table"), "Result")
        self.bottom.addTab(self.lineage, icon("split"), "Lineage")
        self.bottom.addTab(self.source_run_view, icon("source-run"), "Source Run")
        lower = QWidget(self)
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(6, 4, 6, 0)
        lower_layout.setSpacing(4)
        lower_layout.addWidget(self.banner)
        lower_layout.addWidget(self.bottom, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(editor_box)
        self.splitter.addWidget(lower)
        # The result gets two thirds: its grid (below the tab bar and the summary) then
        # still has at least the editor's height.
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([260, 520])
        self.splitter.setChildrenCollapsible(False)

        self.toolbar = build_toolbar(self)
        self._header_line: str | None = None
        self.connection_picker.sig_chosen.connect(self.choose_connection)
        self.editor.document().contentsChanged.connect(self._header_edited)
        if hasattr(services, "sig_connections_changed"):
            services.sig_connections_changed.connect(self._connections_changed)
        self._connections_changed()
        add_reading_actions(self)  # Format, Explain, Explain Analyze, Go to definition
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.splitter, 1)

        self._elapsed_timer = QTimer(self)
        self._elapsed_timer.setInterval(200)
        self._elapsed_timer.timeout.connect(self._tick)
        self._lineage_timer = QTimer(self)
        self._lineage_timer.setSingleShot(True)
        self._lineage_timer.setInterval(300)
        self._lineage_timer.timeout.connect(self.refresh_lineage)
        services.sig_files_changed.connect(self._files_changed)
        services.sig_tables_changed.connect(self._lineage_timer.start)
        self._set_running(False)
        self.file.read()
        services.when_query_ready(lambda _q: self._lineage_timer.start())

    # -- where the tab runs: the picker and the header line say the same -----------------------
    def choose_connection(self, name: str | None) -> bool:
        """Bind the tab to connection ``name`` (None: DuckDB) by rewriting its header line,
        one undoable edit; a name a header cannot hold is told above the result."""
        from lantide.errors import LantideError

        if self.editor.isReadOnly():  # the file is not read yet: its text would replace this
            self._header_line = None
            self._header_edited()
            return False
        try:
            changed = bind_connection(self.editor, name)
        except LantideError as exc:
            self.banner.show_error(exc, what="Not changed")
            self._header_line = None
            self._header_edited()  # the picker shows the header again
            return False
        return changed

    def _header_edited(self) -> None:
        first = self.editor.document().firstBlock().text()
        if first == self._header_line:
            return
        self._header_line = first
        self.connection_picker.show_connection(header_connection_of(self.editor))

    def _connections_changed(self) -> None:
        workspace = self.services.workspace
        names = [str(c["name"]) for c in workspace.connections if c.get("name")]
        self.connection_picker.set_connections(names)

    def format_sql(self) -> bool:
        """Format the tab's SQL as one undoable edit, in a worker (:func:`format_tab`)."""
        return format_tab(self)

    def go_to_definition(self, position: int | None = None) -> None:
        """F12 / Ctrl+click: open the tab or table browser of the table at ``position``
        (else at the cursor); :func:`go_to_definition`."""
        go_to_definition(self, position)

    def show_find(self) -> None:  # the window's Edit › Find
        self.find_bar.open_find(replace=False)

    def show_replace(self) -> None:  # the window's Edit › Replace
        self.find_bar.open_find(replace=True)

    # -- the tab protocol (title, dirty, save) ------------------------------------------------
    def title(self) -> str:
        return self.tab_name

    def is_dirty(self) -> bool:
        return self.editor.document().isModified()

    def unsaved_text(self) -> str | None:
        """The editor's SQL while it is not saved."""
        return self.editor.toPlainText() if self.is_dirty() else None

    def _modification_changed(self, dirty: bool) -> None:
        self.sig_dirty_changed.emit(dirty)
        self.sig_title_changed.emit(self.title())

    @property
    def path(self):
        return self.file.path

    def follow_rename(self, new_name: str) -> None:
        """The tab's file was renamed (lantide.ui.sql.tab_rename): show and save under the
        new name; unsaved edits stay in the editor."""
        old_name, self.tab_name = self.tab_name, new_name
        self.file.path = tab_file_path(self.services.workspace, self.project, new_name)
        self.result.follow_tab_rename(self.project, old_name, new_name)
        self.sig_title_changed.emit(self.title())

    def save(self) -> bool:
        """Write the editor's text to the tab file (atomically). Asks before replacing a
        version another program wrote since the tab read the file."""
        text = self.editor.toPlainText()
        if self.file.changed_by_another_program(text):
            answer = QMessageBox.question(
                self,
                "File changed on disk",
                f"{self.path.name} was changed by another program since you opened it.\n"
                "Replace it with your version?",
                QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel,
            )
            if answer != QMessageBox.StandardButton.Save:
                return False
        new = not self.path.exists()
        try:
            self.file.write(text)
        except OSError as exc:
            self.banner.show_notice(
                f"{self.path} could not be saved: {exc.strerror or exc}",
                "Check that the folder exists and is writable.",
            )
            return False
        self.editor.document().setModified(False)
        self._lineage_timer.start()
        if new:  # the watcher skips our own writes: the explorer lists the file now
            self.services.notify_paths_changed([self.path], "created")
        return True

    def shutdown(self) -> None:
        """The tab closes: stop its work."""
        self.cancel()
        self.result.grid.set_result_model(None)

    # -- loading and external changes ----------------------------------------------------------
    def _loaded(self, text: str | None, reload: bool) -> None:
        if (
            reload
            and text is not None
            and not self.is_dirty()
            and text == self.editor.toPlainText()
        ):
            return  # a change event for what we already show (e.g. our own save)
        new_tab = text is None
        if text is None:
            self._show_disk_notice(
                f"{self.tab_name} is a new tab.",
                f"Write the query: saving (Ctrl+S) or running it writes sql/{self.path.name}.",
                INFO,
            )
            text = ""
        elif reload:
            if self.banner.tag == "disk":
                self.banner.clear()
            self.services.post_message(f"{self.tab_name} reloaded: it changed on disk.", "info")
        cursor_pos = self.editor.textCursor().position()
        self.editor.setPlainText(text)
        cursor = self.editor.textCursor()
        cursor.setPosition(min(cursor_pos, len(text)))
        self.editor.setTextCursor(cursor)
        self.editor.document().setModified(False)
        self._modification_changed(False)  # an empty text may not say so by itself
        self.editor.setReadOnly(False)
        if new_tab and self.isVisible():
            self.editor.setFocus()  # a new tab is ready to type in
        self.sig_loaded.emit()

    def _show_disk_notice(self, title: str, detail: str, level: str, actions=()) -> None:
        """A notice about the file on disk; a later reload clears it (and only it)."""
        self.banner.show_notice(title, detail, level, actions=list(actions), tag="disk")

    def _load_failed(self, exc: BaseException) -> None:
        self.banner.show_notice(
            f"{self.path} could not be read: {exc}",
            "The file was left as it is. Fix its encoding or permissions, then reopen the tab.",
        )

    def _files_changed(self, changes) -> None:
        if any(c.kind in (SQL_TAB, DATA) for c in changes):
            self._lineage_timer.start()
        change = self.file.change_of_mine(changes)
        if change is None:
            return
        if change.event == "deleted":
            self._show_disk_notice(
                f"{self.path.name} was deleted or moved by another program.",
                "Your text is still here; save to write it again.",
                WARNING,
            )
            self.file.forget_disk_text()
            self.editor.document().setModified(True)
            return
        if not self.is_dirty():
            self.file.read(reload=True)
            return
        self._show_disk_notice(
            f"{self.path.name} changed on disk while you were editing it.",
            "Take theirs replaces your unsaved text; Keep mine keeps it (saving will ask).",
            WARNING,
            actions=[
                ("Take theirs", lambda: self.file.read(reload=True)),
                ("Keep mine", self.banner.clear),
            ],
        )

    # -- running ---------------------------------------------------------------------------------
    def run(self) -> None:
        """Run the selection with run_query, or else save and run the whole tab."""
        if self._worker is not None:
            return
        cursor = self.editor.textCursor()
        selected = cursor.selectedText().replace("\u2029", "\n").strip()
        purpose = self.purpose_edit.text().strip() or None
        project, tab = self.project, self.tab_name
        if selected:
            block = self.editor.document().findBlock(cursor.selectionStart())
            offset = (block.blockNumber(), cursor.selectionStart() - block.position())
            self._start(
                sql_runs.RUN_SELECTION,
                lambda ctx, q: sql_runs.run_selection(q, selected, purpose, project),
                sql=selected,
                offset=offset,
            )
            return
        if not self.editor.toPlainText().strip():
            self.banner.show_notice("The tab is empty.", "Write a SELECT first.", INFO)
            return
        if self.is_dirty() and not self.save():
            return
        self._start(
            sql_runs.RUN_TAB,
            lambda ctx, q: sql_runs.run_tab(q, project, tab, purpose),
            sql=self.editor.toPlainText(),
        )

    def explain(self, *, analyze: bool) -> None:
        """The plan of the selection, or else of the tab's text, in the Plan view (in a
        worker; Stop cancels it). Explain Analyze runs the statement, under the rules of a
        run; nothing is cached and no step is written."""
        if self._worker is not None:
            return
        cursor = self.editor.textCursor()
        selected = cursor.selectedText().replace("\u2029", "\n").strip()
        sql = selected or self.editor.toPlainText()
        if not sql.strip():
            self.banner.show_notice("The tab is empty.", "Write a SELECT first.", INFO)
            return
        offset = (0, 0)
        if selected:
            block = self.editor.document().findBlock(cursor.selectionStart())
            offset = (block.blockNumber(), cursor.selectionStart() - block.position())
        tab = None if selected else self.tab_name
        what = "Explain Analyze" if analyze else "Explain"
        self.banner.clear()
        self.editor.clear_error()
        self._run_kind, self._run_sql, self._error_offset = EXPLAIN, sql, offset
        self._run_started = time.monotonic()
        self._set_running(True)
        self.plan_view.show_message(
            f"{what} is running the query…" if analyze else "Explain is reading the plan…"
        )
        self.bottom.setCurrentWidget(self.result)
        self.result.views.setCurrentWidget(self.plan_view)
        self._worker = submit_query(
            self.services,
            lambda _ctx, q: q.explain_query(sql, analyze=analyze, tab=tab),
            label=f"{what} {self.tab_name}",
            on_result=self._explained,
            on_error=self._explain_failed,
            on_finished=self._done,
        )

    def _explained(self, plan) -> None:
        self._done()
        self.plan_view.show_plan(plan)
        self.result.views.setCurrentWidget(self.plan_view)
        took = f" in {int((time.monotonic() - self._run_started) * 1000):,} ms"
        self.status_label.setText(("plan with timings" if plan.analyzed else "plan") + took)
        self.sig_plan_finished.emit(plan)

    def _explain_failed(self, exc: BaseException) -> None:
        self._done()
        position = getattr(exc, "position", None)
        if position:
            line, column = sql_runs.position_in_tab(position, self._error_offset)
            self.editor.set_error_position(line, column)
        self.banner.show_error(exc, what="No plan")
        code = getattr(exc, "code", "")
        self.plan_view.show_message(
            "Explain was cancelled." if code == "QUERY_CANCELLED" else "No plan (see above)."
        )
        self.status_label.setText("cancelled" if code == "QUERY_CANCELLED" else "failed")
        self.sig_plan_finished.emit(exc)

    def run_anyway(self, warning_id: str) -> None:
        """Run a large remote result after the analyst confirmed it."""
        purpose = self.purpose_edit.text().strip() or None
        project, tab = self.project, self.tab_name
        self._start(
            sql_runs.RUN_TAB,
            lambda ctx, q: sql_runs.run_tab(q, project, tab, purpose, warning_id),
            sql=self.editor.toPlainText(),
        )

    def source_run(self, confirmed: list[str] | None = None) -> None:
        """``confirmed``: large remote results the analyst agreed to stage (their ids)."""
        if self._worker is not None:
            return
        if self.is_dirty() and not self.save():
            return
        purpose = self.purpose_edit.text().strip() or None
        project, tab = self.project, self.tab_name
        ids = list(confirmed or [])
        self.source_run_view.start(tab)
        self.bottom.setCurrentWidget(self.source_run_view)
        self._start(
            sql_runs.SOURCE_RUN,
            lambda ctx, q: sql_runs.source_run(ctx, q, project, tab, purpose, ids),
            sql=self.editor.toPlainText(),
        )

    def _start(self, kind: str, fn, *, sql: str, offset: tuple[int, int] = (0, 0)) -> None:
        self.banner.clear()
        self.editor.clear_error()
        if self.result.views.currentWidget() is self.plan_view:  # a run's rows, not a plan
            self.result.views.setCurrentWidget(self.result.grid)
        self._run_kind = kind
        self._run_sql = sql
        self._error_offset = offset
        self._run_started = time.monotonic()
        label = {
            sql_runs.SOURCE_RUN: f"Source Run {self.tab_name}",
            sql_runs.RUN_SELECTION: f"{self.tab_name} (selection)",
        }.get(kind, f"Run {self.tab_name}")
        self._set_running(True)
        self._worker = submit_query(
            self.services,
            fn,
            label=label,
            on_result=self._finished,
            on_error=self._failed,
            on_event=self.source_run_view.on_progress,
            on_finished=self._done,
        )

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    @property
    def running(self) -> bool:
        return self._worker is not None

    def _set_running(self, running: bool) -> None:
        self.run_action.setEnabled(not running)
        self.source_run_action.setEnabled(not running)
        self.explain_action.setEnabled(not running)
        self.explain_analyze_action.setEnabled(not running)
        self.stop_action.setEnabled(running)
        self._busy_action.setVisible(running)
        if running:
            self._elapsed_timer.start()
            self._tick()
        else:
            self._elapsed_timer.stop()

    def _tick(self) -> None:
        elapsed = time.monotonic() - self._run_started
        self.status_label.setText(f"running {elapsed:.1f} s")
        what = {sql_runs.SOURCE_RUN: "Source Run", EXPLAIN: "Explain"}.get(
            self._run_kind, "The query"
        )
        self.result.show_running(what, elapsed)

    def _done(self) -> None:
        self._worker = None
        self._set_running(False)
        self.result.end_running()

    def _finished(self, outcome) -> None:
        self._done()  # before anything reacts to the outcome: the tab can run again
        duration = int((time.monotonic() - self._run_started) * 1000)
        if self._run_kind == sql_runs.SOURCE_RUN:
            run_outcome.show_source_run_outcome(self, *outcome, duration=duration)
        else:
            result, rows = outcome
            if result.get("status") == "warning_required":
                run_outcome.show_large_remote(self, result)
                self.sig_run_finished.emit(result)
                return
            self._run_finished(result, rows, duration=duration)
        self.services.notify_tables_changed()
        self.sig_run_finished.emit(self.last_result)

    def _run_finished(self, result: QueryResult, rows, *, duration: int) -> None:
        self.result.show_query_result(dict(result), rows)
        self.bottom.setCurrentWidget(self.result)
        notice = sql_runs.hints_notice(result, paged=self.result.relation is not None)
        if notice:
            title, detail, code = notice
            self.banner.show_notice(title, detail, WARNING, code=code)
        self.status_label.setText(
            f"{result.get('row_count', 0):,} rows in {result.get('duration_ms', duration):,} ms"
        )
        record_history(
            self.services,
            history_entry(
                source=sql_runs.HISTORY_SOURCE[self._run_kind],
                sql=self._run_sql,
                project=self.project,
                tab=self.tab_name,
                result=result,
            ),
        )
        self.last_result = result

    def _failed(self, exc: BaseException) -> None:
        self._done()
        duration = int((time.monotonic() - self._run_started) * 1000)
        code = getattr(exc, "code", "")
        actions = []
        position = getattr(exc, "position", None)
        if position:
            line, column = sql_runs.position_in_tab(position, self._error_offset)
            self.editor.set_error_position(line, column)

            # No parameters: a button's clicked(bool) would fill the first with False.
            def go_to_error() -> None:
                self.editor.set_error_position(line, column)
                self.editor.setFocus()

            actions.append((f"Go to line {line}", go_to_error))
        if code in PURPOSE_CODES:
            self.purpose_edit.setFocus()
            self.purpose_edit.selectAll()
        self.banner.show_error(exc, actions=actions)
        if self.result.model is None:
            ended = "cancelled" if code == "QUERY_CANCELLED" else "refused or failed"
            self.result.summary.setText(f"No result: the run was {ended} (see above).")
        self.bottom.setCurrentWidget(self.result)
        self.status_label.setText("cancelled" if code == "QUERY_CANCELLED" else "failed")
        if self._run_kind == sql_runs.SOURCE_RUN:
            self.source_run_view.fail(exc)
        record_history(
            self.services,
            history_entry(
                source=sql_runs.HISTORY_SOURCE[self._run_kind],
                sql=self._run_sql,
                project=self.project,
                tab=self.tab_name,
                error=exc,
                duration_ms=duration,
            ),
        )
        self.sig_run_finished.emit(exc)

    # -- lineage ---------------------------------------------------------------------------------
    def refresh_lineage(self) -> None:
        if self._lineage_worker is not None or self.services.query is None:
            return
        project, tab = self.project, self.tab_name

        def work(_ctx, q):
            from lantide.query.lineage_graph import lineage_graph

            lineage, tabs = q.lineage(project), q.list_sql_tabs(project)
            return {
                "summary": tab_lineage_summary(lineage, tabs, tab),
                "graph": lineage_graph(lineage, tabs),
            }

        self._lineage_worker = submit_query(
            self.services,
            work,
            label=f"lineage of {tab}",
            track=False,
            on_result=self.lineage.show_lineage,
            on_error=lambda exc: self.lineage.show_error(getattr(exc, "message", str(exc))),
            on_finished=self._lineage_done,
        )

    def _lineage_done(self) -> None:
        self._lineage_worker = None

    def _ask_chart_name(self, spec: dict) -> None:
        from lantide.ui.sql.chart_file_save import ask_and_save_chart

        ask_and_save_chart(self, self.services, self.project, spec)

    def _open_from_lineage(self, kind: str, name: str) -> None:
        self.services.request_open(kind, self.project if kind == "sql" else None, name)

    def _source_run_from_lineage(self, tab: str) -> None:
        """Source Run of a tab of the graph: this tab's own, or the other tab's (opened)."""
        if tab == self.tab_name:
            self.source_run()
        else:
            self.services.request_open("sql", self.project, tab, then="source_run")

    def source_run_when_loaded(self) -> None:
        """Source Run once the tab's file is read (a tab opened just for it)."""
        if not self.editor.isReadOnly():
            self.source_run()
            return

        def loaded() -> None:
            self.sig_loaded.disconnect(loaded)
            self.source_run()

        self.sig_loaded.connect(loaded)
