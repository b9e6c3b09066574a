"""``QueryService``: the one facade the agent, the desktop app and the command line call.

Every operation returns a JSON-serializable dict (or raises a :class:`QueryError` whose
``to_dict()`` is the tool result). The rules each statement meets are in
:mod:`lantide.query.qem`; this module wires them to the engine. Services opened on the
same workspace in one process share its engine (:mod:`lantide.query.backend`); one
caller's work is cancelled alone under a :meth:`QueryService.cancel_scope`.

Shapes (keys always present unless marked ``?``):

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

import threading
import time
from datetime import datetime, timezone

from lantide.errors import FileProblem, LantideError
from lantide.query import hints as hint_rules
from lantide.query import lineage as lin
from lantide.query import result_warnings
from lantide.query.result_warnings import ResultWarning
from lantide.query import backend, qem, results
from lantide.query import checks as result_checks
from lantide.query.cancel import CancelScope
from lantide.query.catalog import RESULT, STAGED, TAB, CachedTable, Catalog
from lantide.query.engine import Engine
from lantide.query.errors import (DataFileUnreadable, QueryError, QueryRefused, TabError,
                                  TableNotFound)
from lantide.query.external import ExternalSources
from lantide.query.guard import ParsedQuery, TableRef, check, map_position
from lantide.query.names import same_name
from lantide.query.remote_consent import RemoteConsents, statement_key
from lantide.query.remote_consent import warning as remote_warning
from lantide.query.sources import DataSources
from lantide.query.tab_service import TabOperations
from lantide.query.browse import BrowseOperations


def _now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


_new_step_id = results.new_step_id


class QueryService(TabOperations, BrowseOperations):
    """The query layer of one open workspace (see the module docstring for shapes)."""

    def __init__(self, workspace, settings=None, *, watch: bool = False):
        if settings is None:
            settings = _user_query_settings()
        self.workspace = workspace
        self.settings = settings
        self.preview_rows = max(1, min(int(settings.preview_rows or qem.PREVIEW_ROWS), qem.PREVIEW_ROWS))
        self._lock = threading.Lock()
        self._watcher = None
        workspace.data_dir.mkdir(parents=True, exist_ok=True)
        # Secrets an old workspace.json holds move to the keyring, by the process that
        # owns the workspace (a lock-free command beside the app only reads them).
        self.connection_warnings: list[str] = []
        if getattr(getattr(workspace, "_lock", None), "held", False):
            from lantide.query.connections import migrate_connection_secrets

            self.connection_warnings = migrate_connection_secrets(workspace)
        self.external = ExternalSources(workspace, timeout_seconds=settings.timeout_seconds)
        # Services on the same workspace in one process share one engine (lantide.query.backend).
        self._backend = backend.acquire(workspace, settings, reserved_names=self.external.names)
        self.engine: Engine = self._backend.engine
        self.catalog: Catalog = self._backend.catalog
        self.sources: DataSources = self._backend.sources
        self.row_counts = self._backend.row_counts
        self.consents = RemoteConsents(self.engine)
        self._closed = False
        try:
            self.sources.refresh()
        except BaseException:
            self.close()
            raise
        if watch:
            self.start_watching()

    # -- lifecycle -----------------------------------------------------------------
    def close(self) -> None:
        """Stop watching; the engine closes with the last service of the workspace."""
        if self._closed:
            return
        self._closed = True
        self.stop_watching()
        backend.release(self._backend)

    def __enter__(self) -> "QueryService":
        return self

    def __exit__(self, *exc) -> None:
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

    def refresh_sources(self, changes=None) -> dict:
        """Re-register data files; ``changes`` is a watcher batch (only data changes count)."""
        if changes is not None and not any(getattr(c, "kind", None) == "data" for c in changes):
            return {"added": [], "changed": [], "removed": [], "failed": []}
        return self.sources.refresh()

    def start_watching(self, debounce: float = 0.3) -> None:
        """Follow data/ with the workspace watcher (for long-lived services)."""
        from lantide.workspace.watcher import WorkspaceWatcher

        if self._watcher is None:
            self._watcher = WorkspaceWatcher(self.workspace.root, self.refresh_sources,
                                             debounce=debounce)
            self._watcher.start()

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def _fresh(self) -> None:
        # A watcher event can be missed (network drives, editors); a stat of data/ is cheap.
        if self.sources.needs_refresh():
            self.sources.refresh()

    # -- projects ------------------------------------------------------------------
    def _project(self, project, *, required: bool):
        from lantide.workspace.model import Project

        if isinstance(project, Project):
            return self.workspace.project(project.dirname)
        if project:
            return self.workspace.project(str(project))
        focused = self.workspace.focused_project()
        if focused is None and required:
            raise QueryError("no project given and none is focused", code="PROJECT_REQUIRED",
                             hint="Name the project (or focus one first).")
        return focused

    def _project_or_unreadable(self, project) -> tuple:
        """(project, None), or (None, a warning) when no project was named and the focused
        one's project.json cannot be read: a query on the data does not need the project,
        so one broken file does not stop it; the query runs outside any project."""
        if project:
            return self._project(project, required=False), None
        try:
            return self._project(None, required=False), None
        except FileProblem as exc:
            return None, (f"the focused project cannot be read ({exc.message}); this query ran "
                          "outside any project")

    # -- resolving names -------------------------------------------------------------
    def _resolve(self, ref: TableRef, project_tabs=()) -> lin.Input:
        display = ref.display()
        connection = self.external.match(ref)
        if connection:
            return lin.Input(lin.EXTERNAL, display, connection, ref)
        schema = ref.schema
        if ref.catalog is not None:
            return lin.Input(lin.UNKNOWN, display, display)
        if schema is None or same_name(schema, "main"):
            for tab in project_tabs:
                if same_name(tab, ref.name):
                    return lin.Input(lin.TAB, display, tab)
            data = self.sources.resolve(None, ref.name)
            if data is not None:
                return lin.Input(lin.DATA, display, str(data.path), data)
            cached = self.catalog.cached(ref.name)
            if cached is not None:
                return lin.Input(lin.CACHED, display, cached.name, cached)
            return lin.Input(lin.UNKNOWN, display, display, ref)
        data = self.sources.resolve(schema, ref.name)
        if data is not None:
            return lin.Input(lin.DATA, display, str(data.path), data)
        return lin.Input(lin.UNKNOWN, display, display, ref)

    def _check_inputs(self, inputs: list[lin.Input]) -> None:
        """Read the workbook sheets the statement names (they are read on first use), and
        refuse one that names a data file (or sheet) that failed, saying which file and
        why, rather than DuckDB's "does not exist! Did you mean"."""
        for inp in inputs:
            if inp.kind == lin.DATA:
                self.sources.load_sheet(inp.detail)
            if inp.kind != lin.UNKNOWN or not isinstance(inp.detail, TableRef):
                continue
            ref = inp.detail
            schema = None if ref.schema is not None and same_name(ref.schema, "main") \
                else ref.schema
            if ref.catalog is not None:
                continue
            sheets = self.sources.sheets_of(ref.name) if schema is None else []
            if sheets:
                names = ", ".join(t.qualified_name for t in sheets[:5])
                raise TableNotFound(
                    f"{inp.name} is a workbook; its sheets are the tables: {names}",
                    hint=f"Name a sheet with the workbook: {sheets[0].qualified_name}.")
            failed = self.sources.failed(schema, ref.name)
            if failed is None:
                continue
            source = failed.to_dict(self.workspace.root)["source"]
            sheet = f", sheet {failed.name!r}" if failed.schema and failed.name != failed.path.name else ""
            said = failed.error.startswith(source)  # the problem names the file already
            raise DataFileUnreadable(
                f"{inp.name}: {failed.error}" if said else
                f"{inp.name} is the data file {source}{sheet}, which could not be read: "
                f"{failed.error}",
                hint=f"Fix or replace {source} (Lantide never changes it); the next query "
                     "reads it again. `lantide tables` lists every file's problem.")

    def _reading_warnings(self, inputs: list[lin.Input]) -> list[str]:
        """What the reader skipped or read differently in the data files read: a warning
        per note, naming the file (see :mod:`lantide.query.reading_notes`)."""
        out = []
        for inp in inputs:
            if inp.kind == lin.DATA and inp.detail.notes:
                source = inp.detail.to_dict(self.workspace.root)["source"]
                out.extend(f"{source}: {note}" for note in inp.detail.notes)
        return list(dict.fromkeys(out))

    def _guard(self, sql: str) -> ParsedQuery:
        return check(sql, data_dir=self.workspace.data_dir, workspace_root=self.workspace.root,
                     known_table=lambda ref: self._resolve(ref).kind != lin.UNKNOWN)

    # -- validate_query -------------------------------------------------------------
    def validate_query(self, sql: str) -> dict:
        """Parse and bind without running: ``{"ok": True, ...}`` or the error. Never rows."""
        try:
            self._fresh()
            parsed = self._guard(sql)
            inputs = [self._resolve(ref) for ref in parsed.tables]
            self._check_inputs(inputs)
            connection = self._single_source(inputs)
            if connection:
                remote = self.external.remote_sql(connection, parsed)
                con = self.external.connect(connection)
                try:
                    cur = con.cursor().execute(f"SELECT * FROM ({remote}) lantide_q WHERE 1 = 0")
                    columns = [{"name": d[0], "type": d[1].__name__} for d in cur.description]
                finally:
                    con.close()
            else:
                kind = type(parsed.expression).__name__
                try:
                    rows = self.engine.execute(f"DESCRIBE {results.select_body(parsed.body, kind)}")
                except QueryError as exc:
                    exc.position = map_position(parsed, exc.position,
                                                results.wrapped_prefix("DESCRIBE ", kind))
                    raise
                columns = [{"name": r[0], "type": r[1]} for r in rows]
        except LantideError as exc:
            return {"ok": False, **exc.to_dict()}
        found = self._hints(parsed, inputs)
        return {"ok": True, "columns": columns, "tables": [i.name for i in inputs],
                "source": connection or "local", "hints": found,
                "warnings": self._reading_warnings(inputs) + [h["message"] for h in found]}

    def preview_sql(self, sql: str, rows: int) -> dict:
        """The first ``rows`` rows of a read-only statement run again under the QEM's guard:
        nothing materialized, no step (the agent's ``read_step`` with ``rows``)."""
        self._fresh()
        parsed = self._guard(sql)
        inputs = [self._resolve(ref) for ref in parsed.tables]
        if self._single_source(inputs):
            raise QueryRefused("a step on an external database is not run again for its rows",
                               code="EXTERNAL_NOT_RERUN",
                               hint="Read its cached (staged) table instead.")
        kind = type(parsed.expression).__name__
        try:
            preview = self.engine.run(lambda cur: results.preview_only(
                cur, parsed.body, kind, max(1, int(rows))))
        except QueryError as exc:
            exc.position = map_position(parsed, exc.position,
                                        results.wrapped_prefix(results.PREVIEW_PREFIX, kind))
            raise
        return {"columns": preview.columns, "rows": preview.rows, "row_count": preview.row_count}

    def _hints(self, parsed: ParsedQuery, inputs: list[lin.Input]) -> list[dict]:
        out = []
        complexity = hint_rules.complexity_hint(parsed)
        if complexity:
            out.append(complexity)
        entities = [i.name for i in inputs if i.kind in (lin.DATA, lin.EXTERNAL)]
        optimization = hint_rules.optimization_hint(parsed, entities)
        if optimization:
            out.append(optimization)
        return out

    # -- run_query -------------------------------------------------------------------
    def run_query(self, sql: str, result_label: str | None = None, purpose: str | None = None,
                  *, project=None, large_remote_warning_id: str | None = None,
                  allow_complex: bool = False, max_cell_chars: int | None = None) -> dict:
        """``max_cell_chars``: the cap of one preview cell (default
        :data:`results.CELL_CHARS`; 0 shows whole values)."""
        started = time.perf_counter()
        project_obj, unreadable = self._project_or_unreadable(project)
        status = project_obj.status if project_obj else None
        self._fresh()
        parsed = self._guard(sql)
        purpose = qem.check_purpose(status, purpose)
        inputs = [self._resolve(ref) for ref in parsed.tables]
        self._check_inputs(inputs)
        connection = self._single_source(inputs)
        step_id = _new_step_id()
        label = (result_label or "").strip() or None
        plan = qem.decide_materialization(
            tab=None, external=bool(connection), result_label=label, project_status=status,
            tables_read=len(parsed.tables) + len(parsed.files), step_id=step_id)
        qem.check_not_own_result(parsed, plan.table_name)
        if plan.table_name:
            self._check_result_name(plan.table_name, views=False)
        found = self._hints(parsed, inputs)
        complexity = next((h for h in found if h["code"] == "COMPLEXITY_SPLIT_RECOMMENDED"), None)
        if complexity and not allow_complex:
            raise QueryRefused(complexity["message"], code=complexity["code"], hint=complexity["hint"])
        kind = RESULT if not connection else STAGED
        record = CachedTable(plan.table_name or "", kind, project_obj.dirname if project_obj else None,
                             None, step_id, parsed.body, None, None, None, None)
        if connection:
            warning = self._large_remote_check(connection, parsed, large_remote_warning_id)
            if warning:
                return warning
        preview = self._execute(parsed, plan, record, connection, cell_chars=max_cell_chars)
        checks = self._result_checks(parsed, inputs, preview, plan, connection,
                                     result_checks.step_key(parsed))
        result = self._result(
            tool="run_query", parsed=parsed, plan=plan, preview=preview, started=started,
            step_id=step_id, project=project_obj, purpose=purpose, result_label=label,
            found=found, connection=connection, checks=checks,
            extra_warnings=self._reading_warnings(inputs))
        if unreadable is not None:
            result_warnings.add(result, ResultWarning(result_warnings.PROJECT_UNREADABLE,
                                                      unreadable))
        return result

    def _result_checks(self, parsed, inputs, preview, plan, connection, key,
                       previous_row_count=None) -> list[dict]:
        """The result's checks (:mod:`lantide.query.checks`), on the table just written or
        the preview rows."""
        return result_checks.compute(
            self, parsed=parsed, inputs=inputs, preview=preview,
            table=plan.table_name if plan.materialize else None, key=key,
            connection=connection, drift_factor=_drift_factor(self.settings),
            previous_row_count=previous_row_count)

    def _single_source(self, inputs: list[lin.Input]) -> str | None:
        return qem.check_single_source([(i.detail if i.kind == lin.EXTERNAL else None,
                                         i.target if i.kind == lin.EXTERNAL else None)
                                        for i in inputs])

    def _check_result_name(self, name: str, *, tab_of: tuple[str, str] | None = None,
                           views: bool = True) -> None:
        """A result or tab may replace only its own cached table, never a source's name.

        ``views=False`` when the name is about to be materialized: DuckDB itself refuses
        to replace a view by a table, before running anything, and :meth:`_execute` then
        names the view (a catalog query per new table is worth saving on a Source Run).
        """
        if self.sources.resolve(None, name) is not None:
            raise QueryRefused(
                f"{name!r} is already the name of a data file's table",
                code="TAB_NAME_TAKEN" if tab_of else "RESULT_NAME_TAKEN",
                hint="Choose another label or tab name.")
        existing = self.catalog.cached(name)
        if existing is None:
            if views:
                self._check_not_a_view(name)
            return
        if tab_of is None and existing.kind == TAB:
            raise QueryRefused(
                f"{name!r} is the cached table of SQL tab {existing.tab!r} "
                f"(project {existing.project!r})",
                code="RESULT_NAME_TAKEN",
                hint="Choose another result_label; run the tab to refresh its table.")
        if tab_of is not None and existing.kind == TAB and existing.project != tab_of[0]:
            raise TabError(
                f"the cached table {name!r} belongs to SQL tab {existing.tab!r} of project "
                f"{existing.project!r}",
                code="TAB_NAME_TAKEN",
                hint="Cached tables share one namespace per workspace: rename one of the tabs.")

    def _check_not_a_view(self, name: str) -> None:
        taken = self.engine.execute(
            "SELECT count(*) FROM duckdb_views() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND lower(view_name) = lower(?)", [name])[0][0]
        if taken:
            raise QueryRefused(f"{name!r} is already the name of a view",
                               code="RESULT_NAME_TAKEN", hint="Choose another name.")

    def _execute(self, parsed: ParsedQuery, plan: qem.Materialization, record: CachedTable,
                 connection: str | None, *, preview_rows: int | None = None,
                 cell_chars: int | None = None) -> results.Preview:
        """Run the statement under ``plan``; ``preview_rows`` overrides the setting (0: none),
        ``cell_chars`` the cap of a preview cell (None: the default, 0: whole values)."""
        kind = type(parsed.expression).__name__
        t0 = time.perf_counter()

        def bookkeeping(cur, row_count: int) -> None:
            record.name = plan.table_name
            record.row_count = row_count
            record.duration_ms = int((time.perf_counter() - t0) * 1000)
            self.catalog.record(cur, record)

        rows = self.preview_rows if preview_rows is None else preview_rows
        cap = results.CELL_CHARS if cell_chars is None else max(0, int(cell_chars))
        try:
            preview = self._execute_on(parsed, plan, kind, connection, bookkeeping, rows, cap)
        except BaseException as exc:
            if plan.materialize:
                self.catalog.invalidate()  # whatever the rollback left, read it afresh
                if isinstance(exc, TableNotFound):  # DuckDB's catalog error: maybe a view
                    self._check_not_a_view(plan.table_name)
            raise
        if plan.materialize:
            self.catalog.committed(record)  # after the commit, not before
        return preview

    def _execute_on(self, parsed, plan, kind, connection, bookkeeping,
                    preview_rows: int, cell_chars: int) -> results.Preview:
        if connection:
            from lantide.query.staging import stage

            return stage(self, connection, parsed, plan.table_name, bookkeeping, cell_chars)
        prefix = (results.materialize_prefix(plan.table_name) if plan.materialize
                  else results.PREVIEW_PREFIX)
        try:
            if plan.materialize:
                return self.engine.run(lambda cur: results.materialize(
                    cur, parsed.body, kind, plan.table_name, preview_rows, bookkeeping,
                    cell_chars))
            return self.engine.run(lambda cur: results.preview_only(
                cur, parsed.body, kind, max(1, preview_rows), cell_chars))
        except QueryError as exc:
            exc.position = map_position(parsed, exc.position, results.wrapped_prefix(prefix, kind))
            raise

    def _large_remote_check(self, connection: str, parsed: ParsedQuery, warning_ids,
                            again: str = "run the same query again") -> dict | None:
        """None when the remote result is small enough or its staging was confirmed with
        one of ``warning_ids``; else the ``warning_required`` answer with a new id."""
        remote = self.external.remote_sql(connection, parsed)
        key = statement_key(connection, remote)
        if self.consents.confirmed(key, warning_ids):
            return None
        limit = int(self.settings.large_remote_rows)
        rows = self.external.count_rows(connection, remote)
        if rows <= limit:
            return None
        return remote_warning(self.consents.issue(key, connection, rows), connection, rows,
                              limit, again=again)

    def _result(self, *, tool, parsed, plan, preview, started, step_id, project, purpose,
                result_label, found, connection, tab=None, extra_warnings=(),
                checks=()) -> dict:
        duration_ms = int((time.perf_counter() - started) * 1000)
        coded = [ResultWarning(result_warnings.READING_NOTE, w) for w in extra_warnings]
        if preview.truncated and preview.rows:  # no rows asked for (Source Run): no preview
            coded.append(result_warnings.preview_cut(len(preview.rows), preview.row_count))
        if preview.cells_cut:
            coded.append(result_warnings.cells_cut(preview.cells_cut, preview.cell_chars))
        coded.extend(ResultWarning(h["code"], h["message"]) for h in found
                     if h["code"] != "COMPLEXITY_SPLIT_RECOMMENDED" or tab is not None)
        warnings = [w.message for w in coded]  # the step shares this list with the result
        table = plan.table_name if plan.materialize else None
        step = {"step_id": step_id, "at": _now_iso(), "tool": tool,
                "project": project.dirname if project else None, "purpose": purpose,
                "result_label": result_label, "sql": parsed.sql, "row_count": preview.row_count,
                "columns": preview.columns, "cached_table_name": table,
                "materialized": plan.materialize, "materialize_reason": plan.reason_code,
                "warnings": warnings, "checks": list(checks), "duration_ms": duration_ms}
        out = {"status": "ok", "step_id": step_id, "sql": parsed.sql, "columns": preview.columns,
               "preview": preview.rows, "row_count": preview.row_count,
               "truncated": preview.truncated, "materialized": plan.materialize,
               "reason_code": plan.reason_code, "materialize_reason": plan.reason,
               "cached_table_name": table, "warnings": warnings,
               "warning_codes": [w.code for w in coded], "hints": found,
               "checks": list(checks), "duration_ms": duration_ms, "step": step,
               "cells_cut": preview.cells_cut, "cell_chars": preview.cell_chars}
        if project is not None:
            out["project"] = project.dirname
        if tab is not None:
            out["tab"] = tab
        if connection:
            out["source"] = connection
        return out



def _drift_factor(settings) -> float:
    """``query.row_count_drift_factor``; a value that is not a number above 1 (which would
    call every change a drift) falls back to the default."""
    try:
        factor = float(getattr(settings, "row_count_drift_factor", 0) or 0)
    except (TypeError, ValueError):
        factor = 0.0
    return factor if factor > 1 else result_checks.rules.DRIFT_FACTOR


def _user_query_settings():
    from lantide.workspace.settings import QuerySettings, load_settings

    try:
        return load_settings().query
    except LantideError:
        return QuerySettings()
