"""``QueryService``: the one facade the agent, the desktop app and the command line call.

Every operation returns a JSON-serializable dict (or raises a :class:`QueryError` whose
``to_dict()`` is the tool result). The rules each statement meets are in
:mod:`lantide.query.qem`. Services opened on the same workspace in one process share its
engine (:mod:`lantide.query.backend`); one caller's work is cancelled alone under a
:meth:`QueryService.cancel_scope`.

The service is composed of parts, each given what it needs when the service opens:

- :class:`~lantide.query.resolver.InputResolver`: the guard, and what each table name is;
- :class:`~lantide.query.runner.StatementRunner`: guard → execute → result, ``run_query``,
  ``validate_query``, ``preview_sql``;
- :class:`~lantide.query.tab_service.SqlTabs`: SQL tabs, their lineage and Source Run;
- :class:`~lantide.query.browse.TableBrowser`: ``read_schema``, the grid (``show_tables`` is
  :mod:`lantide.query.listing`, without the browser's modules).

The methods below pass each call on to its part, unchanged.

Shapes (keys always present unless marked ``?``); the types are
:class:`~lantide.query.result_types.QueryResult` (with its ``QueryStep``),
:class:`~lantide.query.remote_consent.LargeRemoteWarning`, ``Validated`` / ``NotValid``,
and beside the other answers' producers (``SourceRunReport`` in
:mod:`lantide.query.sourcerun`, ``TableListing`` in :mod:`lantide.query.listing`, ...):

``run_query`` / ``run_sql_tab``::

    {"status": "ok", "step_id", "sql", "columns": [{"name", "type"}],
     "preview": [[...], ...] (<= 200 rows), "row_count", "truncated",
     "materialized", "reason_code", "materialize_reason", "cached_table_name" (or None),
     "warnings": [str], "warning_codes": [str] (the code of each warning, in order:
     lantide.query.result_warnings), "hints": [{"code", "message", "hint", ...}],
     "checks": [{"code", "severity", "message", "evidence"}] (lantide.query.checks),
     "duration_ms",
     "step": {step_id, at, tool, project, purpose, result_label, sql, row_count, columns,
              cached_table_name, materialized, materialize_reason, warnings, checks,
              duration_ms},
     "tab"?: name, "project"?: dirname, "source"?: connection name}

    A large remote result instead answers
    {"status": "warning_required", "warning": "large_remote_result",
     "large_remote_warning_id", "estimated_rows", "connection", "message", "hint"}.

``validate_query``: ``{"ok": True, "columns", "tables", "source", "hints", "warnings"}`` or
``{"ok": False, "error", "message", "hint", "position"?: {"line", "column"}}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from lantide.query import backend
from lantide.query.cancel import CancelScope
from lantide.query.catalog import Catalog
from lantide.query.connection_names import ConnectionNames
from lantide.query.engine import Engine, Row
from lantide.query.row_counts import RowCounts
from lantide.query.sources import DataSources

if TYPE_CHECKING:
    from lantide.query import lineage as lin
    from lantide.query.browse import (
        ColumnBrief,
        RelationInfo,
        TableBrowser,
        TableColumns,
        TableSchema,
    )
    from lantide.query.definition import Definition
    from lantide.query.explain import QueryPlan
    from lantide.query.export import Exported
    from lantide.query.external import ExternalSources
    from lantide.query.grid_filters import ColumnFilter
    from lantide.query.grid_queries import ColumnSummary, FilteredPage
    from lantide.query.listing import TableListing
    from lantide.query.pending_connection import PendingConnection
    from lantide.query.profile import TableProfile
    from lantide.query.projects import ProjectArg
    from lantide.query.remote_consent import RemoteConsents
    from lantide.query.resolver import InputResolver
    from lantide.query.result_types import PreviewAnswer, RunAnswer, Validation
    from lantide.query.runner import StatementRunner
    from lantide.query.sourcerun import Progress, SourceRunReport, StatementGate
    from lantide.query.tab_service import SqlTabs, TabCreated, TabDeleted, TabRenamed, TabRow
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings
    from lantide.workspace.watcher import FileChange, WorkspaceWatcher


def import_ahead(*, listing: bool = True, statements: bool = False, tabs: bool = False) -> None:
    """Import what the work ahead imports on the way, for a caller with time to fill first
    (while DuckDB connects on another thread: the desktop app's
    :func:`lantide.ui.services._open_query_service`, the command line's session).

    ``listing``: what opening a workspace and listing its tables import: the listing, the
    workbook reader (python-calamine, and the XML parser of the limit checks), and
    ``uuid``, which DuckDB imports at the first ``datetime`` or list of strings bound to a
    statement (the time a file was registered, a sheet's text column): 5-7 ms with the
    ``platform`` module it imports. ``statements``: what a statement imports (the runner,
    the result checks). ``tabs``: SQL
    tabs and Source Run besides."""
    if listing:
        import uuid  # noqa: F401
        from xml.etree import ElementTree  # noqa: F401

        import python_calamine  # noqa: F401

        # the listing, and what registering text files and workbooks imports (deferred
        # for the command line, lantide.query.sources): here while the desktop app's
        # DuckDB connects, where the time is free
        from lantide.query import (  # noqa: F401
            csv_dialect,
            excel,
            lost_records,
            reading_notes,
            sheets,
            text_encodings,
            typed_columns,
            workbook_limits,
        )
        from lantide.query import listing as _listing  # noqa: F401
    if statements or tabs:
        # (sqlglot, the guard's full reading, loads only for a statement that needs it:
        # a plain one is read by DuckDB's parser, lantide.query.guard_plain)
        from lantide.query import checks, runner  # noqa: F401
    if tabs:
        import sqlglot.dialects.duckdb  # noqa: F401  (a chain of tabs nearly always joins)

        from lantide.query import sourcerun, tab_service  # noqa: F401


def _migrate_connection_secrets(workspace: Workspace) -> list[str]:
    """:func:`lantide.query.connections.migrate_connection_secrets` for a workspace.json
    that holds a connection string; without one (most workspaces) the file is still read
    afresh under its lock, as the migration reads it, and nothing else: the connections'
    modules and the keyring's stay unimported."""
    found = False

    def look(settings: dict[str, Any]) -> bool:
        nonlocal found
        entries = settings.get("connections")
        found = isinstance(entries, list) and any(
            isinstance(e, dict) and isinstance(e.get("connection_string"), str) for e in entries
        )
        return False  # never written here

    workspace.update_settings(look)
    if not found:
        return []
    from lantide.query.connections import migrate_connection_secrets

    return migrate_connection_secrets(workspace)


class QueryService:
    """The query layer of one open workspace (see the module docstring for shapes).

    ``connection_names``: the workspace's connections as statements name them;
    ``external`` and ``consents``: what reaches them, made on first use."""

    def __init__(
        self,
        workspace: Workspace,
        settings: QuerySettings | None = None,
        *,
        watch: bool = False,
        pending: PendingConnection | None = None,
        short_lived: bool = False,
    ):
        """``pending``: the cache database's connection, already started (the desktop
        app's start-up, see :mod:`lantide.query.pending_connection`); its starter discards
        it afterwards. ``short_lived``: this process ends with its command (the command
        line's query commands), so Parquet footers are read once per process
        (``Engine._keep_parquet_footers``)."""
        if settings is None:
            from lantide.workspace.settings import user_query_settings

            settings = user_query_settings()
        self.workspace = workspace
        self.settings = settings
        self._watcher: WorkspaceWatcher | None = None
        workspace.data_dir.mkdir(parents=True, exist_ok=True)
        # Secrets an old workspace.json holds move to the keyring, by the process that
        # owns the workspace (a lock-free command beside the app only reads them).
        self.connection_warnings: list[str] = []
        if getattr(getattr(workspace, "_lock", None), "held", False):
            self.connection_warnings = _migrate_connection_secrets(workspace)
        # the connections' names (matched in every statement); what reaches them, the
        # remote parts (self.external, self.consents), is made when first used
        self.connection_names = ConnectionNames(workspace)
        # Services on the same workspace in one process share one engine (lantide.query.backend).
        self._backend = backend.acquire(
            workspace,
            settings,
            reserved_names=self.connection_names.names,
            pending=pending,
            short_lived=short_lived,
        )
        self.engine: Engine = self._backend.engine
        self.catalog: Catalog = self._backend.catalog
        self.sources: DataSources = self._backend.sources
        self.row_counts: RowCounts = self._backend.row_counts
        self._closed = False
        try:
            self.sources.refresh()
        except BaseException:
            self.close()
            raise
        if watch:
            self.start_watching()

    # -- the parts, made on first use: opening the database and registering the data
    # files needs none of them, so the app is usable before their modules (the guard,
    # the result checks, lineage, Source Run) are imported --------------------------
    @cached_property
    def external(self) -> ExternalSources:
        """The workspace's connections reached (ODBC, the keyring): made when a statement,
        the listing or the browser first needs one, never for a workspace's local data."""
        from lantide.query.external import ExternalSources

        return ExternalSources(self.workspace, timeout_seconds=self.settings.timeout_seconds)

    @cached_property
    def consents(self) -> RemoteConsents:
        """The analyst's confirmations of large remote results (lantide.query.remote_consent)."""
        from lantide.query.remote_consent import RemoteConsents

        return RemoteConsents(self.engine)

    @cached_property
    def inputs(self) -> InputResolver:
        from lantide.query.resolver import InputResolver

        return InputResolver(self.workspace, self.sources, self.catalog, self.connection_names)

    @cached_property
    def runner(self) -> StatementRunner:
        from lantide.query.runner import StatementRunner

        backend = self._backend
        return StatementRunner(
            self.workspace,
            self.settings,
            engine=self.engine,
            catalog=self.catalog,
            sources=self.sources,
            external=lambda: self.external,
            consents=lambda: self.consents,
            inputs=self.inputs,
            check_facts=lambda: backend.check_facts,
        )

    @cached_property
    def tabs(self) -> SqlTabs:
        from lantide.query.tab_service import SqlTabs

        return SqlTabs(
            self.workspace,
            self.settings,
            engine=self.engine,
            catalog=self.catalog,
            sources=self.sources,
            inputs=self.inputs,
            runner=self.runner,
        )

    @cached_property
    def browser(self) -> TableBrowser:
        from lantide.query.browse import TableBrowser

        return TableBrowser(
            self.workspace,
            engine=self.engine,
            catalog=self.catalog,
            sources=self.sources,
            external=self.external,
            inputs=self.inputs,
        )

    @property
    def preview_rows(self) -> int:
        from lantide.query.runner import preview_rows_of

        return preview_rows_of(self.settings)

    def load_parts(self) -> None:
        """Make every part now (from a worker a moment after start-up, so the first query
        does not import them); ``duckdb`` itself too, as the database opened with its core."""
        from lantide.query.duckdb_import import import_duckdb

        import_duckdb()
        _ = self.tabs, self.browser

    # -- lifecycle -----------------------------------------------------------------
    def close(self) -> None:
        """Stop watching; the engine closes with the last service of the workspace."""
        if self._closed:
            return
        self._closed = True
        self.stop_watching()
        backend.release(self._backend)

    def __enter__(self) -> QueryService:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def interrupt(self) -> int:
        """Cancel whatever runs now in the whole workspace (DuckDB statements and remote
        fetches of every caller), from any thread: for shutting down. To stop one caller's
        work only, run it under a :meth:`cancel_scope`."""
        return self.engine.interrupt()

    def cancel_scope(self, name: str = "") -> CancelScope:
        """A new :class:`~lantide.query.cancel.CancelScope`: ``with scope:`` around calls on
        one thread; ``scope.cancel()`` from any thread stops those calls and no others."""
        return CancelScope(name)

    def refresh_sources(self, changes: Iterable[FileChange] | None = None) -> dict[str, list[str]]:
        """Re-register data files; ``changes`` is a watcher batch (only data changes count)."""
        if changes is not None and not any(getattr(c, "kind", None) == "data" for c in changes):
            return {"added": [], "changed": [], "removed": [], "failed": []}
        return self.sources.refresh()

    def start_watching(self, debounce: float = 0.3) -> None:
        """Follow data/ with the workspace watcher (for long-lived services)."""
        from lantide.workspace.watcher import WorkspaceWatcher

        if self._watcher is None:
            self._watcher = WorkspaceWatcher(
                self.workspace.root, self._on_changes, debounce=debounce
            )
            self._watcher.start()

    def _on_changes(self, changes: list[FileChange]) -> None:
        self.refresh_sources(changes)

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    # -- statements (lantide.query.runner) ------------------------------------------
    def validate_query(self, sql: str) -> Validation:
        """Parse and bind without running: ``{"ok": True, ...}`` or the error. Never rows."""
        return self.runner.validate_query(sql)

    def preview_sql(self, sql: str, rows: int) -> PreviewAnswer:
        """The first ``rows`` rows of a read-only statement run again under the QEM's guard:
        nothing materialized, no step (the agent's ``read_step`` with ``rows``)."""
        return self.runner.preview_sql(sql, rows)

    def run_query(
        self,
        sql: str,
        result_label: str | None = None,
        purpose: str | None = None,
        *,
        project: ProjectArg = None,
        large_remote_warning_id: str | None = None,
        allow_complex: bool = False,
        max_cell_chars: int | None = None,
        purpose_required: bool = True,
    ) -> RunAnswer:
        """``max_cell_chars``: the cap of one preview cell (default
        :data:`results.CELL_CHARS`; 0 shows whole values). ``purpose_required=False``: the
        analyst's own run, not asked for a purpose (the agent's runs are)."""
        return self.runner.run_query(
            sql,
            result_label,
            purpose,
            project=project,
            large_remote_warning_id=large_remote_warning_id,
            allow_complex=allow_complex,
            max_cell_chars=max_cell_chars,
            purpose_required=purpose_required,
        )

    def explain_query(
        self, sql: str, *, analyze: bool = False, tab: str | None = None
    ) -> QueryPlan:
        """The plan of ``sql`` as a tree (:mod:`lantide.query.explain`); ``analyze`` runs the
        statement for rows and timings, under the same rules as running it. ``tab``: the SQL
        tab the statement is from (it may not read its own cached table)."""
        from lantide.query.explain import explain_statement

        return explain_statement(
            sql, inputs=self.inputs, engine=self.engine, analyze=analyze, tab=tab
        )

    def definition_at(self, project: ProjectArg, sql: str, offset: int) -> Definition | None:
        """What defines the table named at ``offset`` of ``sql`` (a tab of ``project``):
        :mod:`lantide.query.definition`; None when no table is named there."""
        from lantide.query import tabs as tab_files
        from lantide.query.definition import definition_of, table_at
        from lantide.query.projects import required_project

        found = table_at(sql, offset)
        if found is None:
            return None
        project_obj = required_project(self.workspace, project)
        self.inputs.refresh_if_stale()
        return definition_of(
            found,
            project=project_obj.dirname,
            project_tabs=tab_files.tab_names(project_obj),
            inputs=self.inputs,
            catalog=self.catalog,
        )

    # -- SQL tabs (lantide.query.tab_service) ---------------------------------------
    def run_sql_tab(
        self,
        project: ProjectArg,
        tab: str,
        purpose: str | None = None,
        *,
        large_remote_warning_id: str | None = None,
        max_cell_chars: int | None = None,
        purpose_required: bool = True,
    ) -> RunAnswer:
        return self.tabs.run_sql_tab(
            project,
            tab,
            purpose,
            large_remote_warning_id=large_remote_warning_id,
            max_cell_chars=max_cell_chars,
            purpose_required=purpose_required,
        )

    def source_run_sql_tab(
        self,
        project: ProjectArg,
        tab: str,
        purpose: str | None = None,
        progress: Progress | None = None,
        *,
        large_remote_warning_id: str | list[str] | None = None,
        statement_gate: StatementGate | None = None,
    ) -> SourceRunReport:
        """``large_remote_warning_id``: one id or a list, confirming the staging of large
        remote results the chain's tabs answered with before (``LARGE_REMOTE_RESULT``);
        ``statement_gate``: called with each tab's SQL before the tab runs (see sourcerun)."""
        return self.tabs.source_run_sql_tab(
            project,
            tab,
            purpose,
            progress,
            large_remote_warning_id=large_remote_warning_id,
            statement_gate=statement_gate,
        )

    def tab_fingerprint(self, lineage: lin.TabLineage) -> str | None:
        """SQL and inputs of a tab in one hash; None when it cannot be known (remote data)."""
        return self.tabs.tab_fingerprint(lineage)

    def check_new_sql_tab(self, project: ProjectArg, name: str) -> str:
        """The clean name a new tab may take, or the error create_sql_tab would give."""
        return self.tabs.check_new_sql_tab(project, name)

    def create_sql_tab(self, project: ProjectArg, name: str, sql: str) -> TabCreated:
        return self.tabs.create_sql_tab(project, name, sql)

    def rename_sql_tab(self, project: ProjectArg, old: str, new: str) -> TabRenamed:
        return self.tabs.rename_sql_tab(project, old, new)

    def delete_sql_tab(self, project: ProjectArg, name: str) -> TabDeleted:
        return self.tabs.delete_sql_tab(project, name)

    def list_sql_tabs(self, project: ProjectArg) -> list[TabRow]:
        return self.tabs.list_sql_tabs(project)

    def lineage(self, project: ProjectArg) -> lin.ProjectLineage:
        return self.tabs.lineage(project)

    # -- browsing (lantide.query.browse) --------------------------------------------
    def show_tables(self) -> TableListing:
        # the listing alone: the browser's modules (guard, lineage, results) are not needed
        # for it, and the desktop app is usable once it is done (lantide.query.listing)
        from lantide.query.listing import list_tables

        return list_tables(
            self.workspace,
            engine=self.engine,
            catalog=self.catalog,
            sources=self.sources,
            row_counts=self.row_counts,
            external=self.external,
        )

    def wait_for_row_counts(self, timeout: float | None = None) -> bool:
        """Wait until the data files ``show_tables`` left uncounted are counted; False when
        ``timeout`` (seconds) ran out first. Call it from a worker, never the UI thread."""
        return self.row_counts.wait(timeout)

    def read_schema(self, table: str) -> TableSchema:
        return self.browser.read_schema(table)

    def fetch_rows(
        self,
        relation_name: str,
        offset: int = 0,
        limit: int = 200,
        order_by: Sequence[tuple[str, str]] | None = None,
        filters: Sequence[ColumnFilter] | None = None,
    ) -> list[Row]:
        """Rows ``offset``..``offset+limit`` of a table (see :meth:`TableBrowser.fetch_rows`)."""
        return self.browser.fetch_rows(relation_name, offset, limit, order_by, filters)

    def filtered_page(
        self,
        relation_name: str,
        offset: int = 0,
        limit: int = 256,
        *,
        order_by: Sequence[tuple[str, str]] | None = None,
        filters: Sequence[ColumnFilter] | None = None,
        count: bool = True,
    ) -> FilteredPage:
        """The grid's filter: how many rows pass ``filters`` (-1 unless ``count``) and a
        page of them, in ``order_by`` (:mod:`lantide.query.grid_queries`)."""
        return self.browser.filtered_page(
            relation_name, offset, limit, order_by=order_by, filters=filters, count=count
        )

    def count_filtered(
        self, relation_name: str, filters: Sequence[ColumnFilter] | None = None
    ) -> int:
        """How many rows of a table pass ``filters``."""
        return self.browser.count_filtered(relation_name, filters)

    def summarize_column(
        self, relation_name: str, column: str, filters: Sequence[ColumnFilter] | None = None
    ) -> ColumnSummary:
        """Count, NULLs, sum, avg, min, max of a whole column over the filtered rows."""
        return self.browser.summarize_column(relation_name, column, filters)

    def rows_as_csv(
        self,
        relation_name: str,
        *,
        filters: Sequence[ColumnFilter] | None = None,
        order_by: Sequence[tuple[str, str]] | None = None,
        max_rows: int,
        max_bytes: int,
    ) -> tuple[str, int]:
        """The filtered rows as CSV for the clipboard, refused past ``max_rows`` or
        ``max_bytes`` (``GRID_COPY_TOO_LARGE``)."""
        return self.browser.rows_as_csv(
            relation_name,
            filters=filters,
            order_by=order_by,
            max_rows=max_rows,
            max_bytes=max_bytes,
        )

    def relation_info(self, relation_name: str) -> RelationInfo:
        """Columns and row count of a table, for the grid's header and scroll bar."""
        return self.browser.relation_info(relation_name)

    def profile_table(
        self, relation_name: str, *, bins: int = 10, top: int = 10, columns: list[str] | None = None
    ) -> TableProfile:
        return self.browser.profile_table(relation_name, bins=bins, top=top, columns=columns)

    def table_columns(self, table: str) -> TableColumns:
        """The columns of a table (or connection table, from its catalog) for the explorer."""
        return self.browser.table_columns(table)

    def column_profile(self, table: str, column: str) -> ColumnBrief:
        """Nulls, distinct, min/max of one column; kept per table fingerprint."""
        return self.browser.column_profile(table, column)

    def export_table(
        self,
        relation_name: str,
        path: str | Path,
        fmt: str | None = None,
        *,
        order_by: Sequence[tuple[str, str]] | None = None,
    ) -> Exported:
        """Write a table to a file; ``order_by`` as for :meth:`fetch_rows` (the grid's sort)."""
        return self.browser.export_table(relation_name, path, fmt, order_by=order_by)
