"""The statement runner: guard → execute → result, for ad-hoc queries and SQL tabs alike.

:class:`StatementRunner` owns what happens to one statement once its inputs are resolved
(:class:`~lantide.query.resolver.InputResolver`): the QEM's materialization plan carried
out on the engine (a preview, a cached table, or a staged remote result in one
transaction with its bookkeeping row), the large-remote-result consent, the result checks
(:mod:`lantide.query.checks`) and the result's shape with its ledger step (the shapes are
in :mod:`lantide.query.service`). ``run_query``, ``validate_query`` and ``preview_sql``
live here; SQL tabs and Source Run (:mod:`lantide.query.tab_service`) call
:meth:`StatementRunner.execute` and :func:`step_result` the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from lantide.errors import LantideError
from lantide.query import checks as result_checks
from lantide.query import lineage as lin
from lantide.query import qem, result_warnings, results
from lantide.query.catalog import RESULT, STAGED, TAB, CachedTable, Catalog
from lantide.query.checks.facts import RelationFacts
from lantide.query.engine import Engine
from lantide.query.errors import (
    LargeRemoteResult,
    QueryError,
    QueryRefused,
    TabError,
    TableNotFound,
    error_fields,
)
from lantide.query.guard import ParsedQuery, map_position
from lantide.query.hints import Hint, statement_hints
from lantide.query.projects import ProjectArg, project_or_unreadable
from lantide.query.resolver import InputResolver
from lantide.query.result_warnings import ResultWarning
from lantide.query.sources import DataSources

if TYPE_CHECKING:
    from lantide.query import row_estimate
    from lantide.query.checks.rules import Check
    from lantide.query.engine import Cursor
    from lantide.query.external import ExternalSources
    from lantide.query.remote_consent import LargeRemoteWarning, RemoteConsents
    from lantide.query.result_types import (
        PreviewAnswer,
        QueryResult,
        QueryStep,
        RunAnswer,
        Validation,
    )
    from lantide.query.results import Column
    from lantide.workspace.model import Project, Workspace
    from lantide.workspace.settings import QuerySettings

Bookkeeping = Callable[..., None]  # (cursor, row_count) inside the writing transaction


def preview_rows_of(settings: QuerySettings) -> int:
    """The preview's row count from the setting, within 1..:data:`qem.PREVIEW_ROWS`."""
    return max(1, min(int(settings.preview_rows or qem.PREVIEW_ROWS), qem.PREVIEW_ROWS))


class StatementRunner:
    """Runs guarded statements of one workspace on its engine (see the module docstring)."""

    def __init__(
        self,
        workspace: Workspace,
        settings: QuerySettings,
        *,
        engine: Engine,
        catalog: Catalog,
        sources: DataSources,
        external: Callable[[], ExternalSources],
        consents: Callable[[], RemoteConsents],
        inputs: InputResolver,
        check_facts: Callable[[], RelationFacts],
    ):
        """``external``, ``consents``: the remote parts, called for when a statement reads
        a connection (a workspace of local data never makes them)."""
        self.workspace = workspace
        self.settings = settings
        self.engine = engine
        self.catalog = catalog
        self.sources = sources
        self._external = external
        self._consents = consents
        self.inputs = inputs
        # called when a result is checked: a refused or failed statement makes no facts table
        self.check_facts = check_facts
        self.preview_rows = preview_rows_of(settings)

    @property
    def external(self) -> ExternalSources:
        return self._external()

    @property
    def consents(self) -> RemoteConsents:
        return self._consents()

    # -- the three entry points on ad-hoc SQL ---------------------------------------
    def validate_query(self, sql: str) -> Validation:
        """Parse and bind without running: ``{"ok": True, ...}`` or the error. Never rows."""
        try:
            self.inputs.refresh_if_stale()
            parsed = self.inputs.guard(sql)
            inputs = [self.inputs.resolve(ref) for ref in parsed.tables]
            self.inputs.check_inputs(inputs)
            connection = qem.single_source(inputs)
            if connection:
                remote = self.external.remote_sql(connection, parsed)
                con = self.external.connect(connection)
                try:
                    cur = con.cursor().execute(f"SELECT * FROM ({remote}) lantide_q WHERE 1 = 0")
                    columns: list[Column] = [
                        {"name": d[0], "type": d[1].__name__} for d in cur.description
                    ]
                finally:
                    con.close()
            else:
                kind = parsed.kind
                try:
                    rows = self.engine.execute(f"DESCRIBE {results.select_body(parsed.body, kind)}")
                except QueryError as exc:
                    exc.position = map_position(
                        parsed, exc.position, results.wrapped_prefix("DESCRIBE ", kind)
                    )
                    raise
                columns = [{"name": r[0], "type": r[1]} for r in rows]
        except LantideError as exc:
            return {"ok": False, **error_fields(exc)}
        found = statement_hints(parsed, inputs)
        return {
            "ok": True,
            "columns": columns,
            "tables": [i.name for i in inputs],
            "source": connection or "local",
            "hints": found,
            "warnings": self.inputs.reading_warnings(inputs) + [h["message"] for h in found],
        }

    def preview_sql(self, sql: str, rows: int) -> PreviewAnswer:
        """The first ``rows`` rows of a read-only statement run again under the QEM's guard:
        nothing materialized, no step (the agent's ``read_step`` with ``rows``)."""
        self.inputs.refresh_if_stale()
        parsed = self.inputs.guard(sql)
        inputs = [self.inputs.resolve(ref) for ref in parsed.tables]
        if qem.single_source(inputs):
            raise QueryRefused(
                "a step on an external database is not run again for its rows",
                code="EXTERNAL_NOT_RERUN",
                hint="Read its cached (staged) table instead.",
            )
        kind = parsed.kind
        try:
            preview = self.engine.run(
                lambda cur: results.preview_only(cur, parsed.body, kind, max(1, int(rows)))
            )
        except QueryError as exc:
            exc.position = map_position(
                parsed, exc.position, results.wrapped_prefix(results.PREVIEW_PREFIX, kind)
            )
            raise
        return {"columns": preview.columns, "rows": preview.rows, "row_count": preview.row_count}

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
        analyst's own run (:func:`qem.check_purpose`)."""
        started = time.perf_counter()
        project_obj, unreadable = project_or_unreadable(self.workspace, project)
        status = project_obj.status if project_obj else None
        self.inputs.refresh_if_stale()
        parsed = self.inputs.guard(sql)
        inputs = [self.inputs.resolve(ref) for ref in parsed.tables]
        self.inputs.check_inputs(inputs)
        step_id = results.new_step_id()
        label = (result_label or "").strip() or None
        admitted = qem.admit(
            qem.Statement(
                parsed,
                inputs,
                step_id,
                result_label=label,
                project_status=status,
                purpose=purpose,
                purpose_required=purpose_required,
                allow_complex=allow_complex,
            ),
            check_target=lambda name: self.check_result_name(name, views=False),
            large_remote=lambda conn: self.large_remote_check(
                conn, parsed, large_remote_warning_id
            ),
        )
        if admitted.remote_warning:
            return admitted.remote_warning
        plan, purpose, connection, found = (
            admitted.plan,
            admitted.purpose,
            admitted.connection,
            admitted.hints,
        )
        kind = RESULT if not connection else STAGED
        record = CachedTable(
            plan.table_name or "",
            kind,
            project_obj.dirname if project_obj else None,
            None,
            step_id,
            parsed.body,
            None,
            None,
            None,
            None,
        )
        cap = self.remote_cap(connection, parsed, large_remote_warning_id)
        try:
            preview = self.execute(
                parsed, plan, record, connection, cell_chars=max_cell_chars, cap=cap
            )
        except LargeRemoteResult as exc:  # more rows arrived than the estimate said
            return exc.warning
        checks = self.result_checks(
            parsed, inputs, preview, plan, connection, result_checks.step_key(parsed)
        )
        result = step_result(
            tool="run_query",
            parsed=parsed,
            plan=plan,
            preview=preview,
            started=started,
            step_id=step_id,
            project=project_obj,
            purpose=purpose,
            result_label=label,
            found=found,
            connection=connection,
            checks=checks,
            extra_warnings=self.inputs.reading_warnings(inputs),
        )
        if unreadable is not None:
            result_warnings.add(
                result, ResultWarning(result_warnings.PROJECT_UNREADABLE, unreadable)
            )
        if qem.runs_without_purpose(status, purpose):  # the analyst's, let through
            result_warnings.add(result, result_warnings.no_purpose(qem.PURPOSE_MAX_CHARS))
        return result

    # -- the parts a SQL tab's run shares -------------------------------------------
    def check_result_name(
        self, name: str, *, tab_of: tuple[str, str] | None = None, views: bool = True
    ) -> None:
        """A result or tab may replace only its own cached table, never a source's name.

        ``views=False`` when the name is about to be materialized: DuckDB itself refuses
        to replace a view by a table, before running anything, and :meth:`execute` then
        names the view (a catalog query per new table is worth saving on a Source Run).
        """
        if self.sources.resolve(None, name) is not None:
            raise QueryRefused(
                f"{name!r} is already the name of a data file's table",
                code="TAB_NAME_TAKEN" if tab_of else "RESULT_NAME_TAKEN",
                hint="Choose another label or tab name.",
            )
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
                hint="Choose another result_label; run the tab to refresh its table.",
            )
        if tab_of is not None and existing.kind == TAB and existing.project != tab_of[0]:
            raise TabError(
                f"the cached table {name!r} belongs to SQL tab {existing.tab!r} of project "
                f"{existing.project!r}",
                code="TAB_NAME_TAKEN",
                hint="Cached tables share one namespace per workspace: rename one of the tabs.",
            )

    def _check_not_a_view(self, name: str) -> None:
        taken = self.engine.execute(
            "SELECT count(*) FROM duckdb_views() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND lower(view_name) = lower(?)",
            [name],
        )[0][0]
        if taken:
            raise QueryRefused(
                f"{name!r} is already the name of a view",
                code="RESULT_NAME_TAKEN",
                hint="Choose another name.",
            )

    def large_remote_check(
        self,
        connection: str,
        parsed: ParsedQuery,
        warning_ids: str | Iterable[object] | None,
        again: str = "run the same query again",
    ) -> LargeRemoteWarning | None:
        """None when the remote result is small enough or its staging was confirmed with
        one of ``warning_ids``; else the ``warning_required`` answer with a new id."""
        from lantide.query import row_estimate
        from lantide.query.remote_consent import statement_key
        from lantide.query.remote_consent import warning as remote_warning

        remote = self.external.remote_sql(connection, parsed)
        key = statement_key(connection, remote)
        if self.consents.confirmed(key, warning_ids):
            return None
        limit = int(self.settings.large_remote_rows)
        hook = self.engine.cancel_hook
        # the engine's own plan first: clearly small, no COUNT (the copy is capped anyway)
        if row_estimate.clearly_small(
            self.external.explain_rows(connection, remote, register_cancel=hook), limit
        ):
            return None
        rows = self.external.count_rows(connection, remote, register_cancel=hook)
        if rows <= limit:
            return None
        return remote_warning(
            self.consents.issue(key, connection, rows), connection, rows, limit, again=again
        )

    def remote_cap(
        self,
        connection: str | None,
        parsed: ParsedQuery,
        warning_ids: str | Iterable[object] | None,
        again: str = "run the same query again",
    ) -> row_estimate.RowCap | None:
        """The cap of a remote copy nobody consented to stage large (None: local, or
        confirmed with one of ``warning_ids``): more rows than the limit stop it with the
        same ``warning_required`` as :meth:`large_remote_check` (the estimate was wrong)."""
        if not connection:
            return None
        from lantide.query import row_estimate
        from lantide.query.remote_consent import statement_key
        from lantide.query.remote_consent import warning as remote_warning

        remote = self.external.remote_sql(connection, parsed)
        key = statement_key(connection, remote)
        if self.consents.confirmed(key, warning_ids):
            return None
        limit = int(self.settings.large_remote_rows)

        def warn(rows: int) -> LargeRemoteWarning:
            new_id = self.consents.issue(key, connection, rows)
            return remote_warning(new_id, connection, rows, limit, again=again, source="copy")

        return row_estimate.RowCap(limit, warn)

    def execute(
        self,
        parsed: ParsedQuery,
        plan: qem.Materialization,
        record: CachedTable,
        connection: str | None,
        *,
        preview_rows: int | None = None,
        cell_chars: int | None = None,
        cap: row_estimate.RowCap | None = None,
    ) -> results.Preview:
        """Run the statement under ``plan``; ``preview_rows`` overrides the setting (0: none),
        ``cell_chars`` the cap of a preview cell (None: the default, 0: whole values),
        ``cap`` the rows a remote copy may bring (:meth:`remote_cap`). A materialized
        result and its bookkeeping row ``record`` commit together."""
        kind = parsed.kind
        t0 = time.perf_counter()

        def bookkeeping(cur: Cursor, row_count: int) -> None:
            record.name = plan.table_name or ""
            record.row_count = row_count
            record.duration_ms = int((time.perf_counter() - t0) * 1000)
            self.catalog.record(cur, record)

        rows = self.preview_rows if preview_rows is None else preview_rows
        cell_cap = results.CELL_CHARS if cell_chars is None else max(0, int(cell_chars))
        try:
            preview = self._execute_on(
                parsed, plan, kind, connection, bookkeeping, rows, cell_cap, cap
            )
        except BaseException as exc:
            if plan.materialize:
                self.catalog.invalidate()  # whatever the rollback left, read it afresh
                if isinstance(exc, TableNotFound) and plan.table_name:  # maybe a view
                    self._check_not_a_view(plan.table_name)
            raise
        if plan.materialize:
            self.catalog.committed(record)  # after the commit, not before
            if not connection and preview.columns:  # DESCRIBE's, of the table just committed
                result_checks.remember_columns(self.check_facts(), record, preview.columns)
        return preview

    def _execute_on(
        self,
        parsed: ParsedQuery,
        plan: qem.Materialization,
        kind: str,
        connection: str | None,
        bookkeeping: Bookkeeping,
        preview_rows: int,
        cell_chars: int,
        cap: row_estimate.RowCap | None = None,
    ) -> results.Preview:
        table = plan.table_name or ""
        if connection:
            from lantide.query.staging import stage

            # A staged result's preview reads the setting's rows (Source Run's 0 too).
            return stage(
                self.external,
                self.engine,
                connection,
                parsed,
                table,
                bookkeeping,
                preview_rows=self.preview_rows,
                cell_chars=cell_chars,
                cap=cap,
            )
        prefix = results.materialize_prefix(table) if plan.materialize else results.PREVIEW_PREFIX
        try:
            if plan.materialize:
                return self.engine.run(
                    lambda cur: results.materialize(
                        cur, parsed.body, kind, table, preview_rows, bookkeeping, cell_chars
                    ),
                    statement=parsed.body,
                )
            return self.engine.run(
                lambda cur: results.preview_only(
                    cur, parsed.body, kind, max(1, preview_rows), cell_chars
                ),
                statement=parsed.body,
            )
        except QueryError as exc:
            exc.position = map_position(parsed, exc.position, results.wrapped_prefix(prefix, kind))
            raise

    def result_checks(
        self,
        parsed: ParsedQuery,
        inputs: list[lin.Input],
        preview: results.Preview,
        plan: qem.Materialization,
        connection: str | None,
        key: str | None,
        previous_row_count: int | None = None,
    ) -> list[Check]:
        """The result's checks (:mod:`lantide.query.checks`), on the table just written or
        the preview rows."""
        return result_checks.compute(
            engine=self.engine,
            facts=self.check_facts(),
            sources=self.sources,
            catalog=self.catalog,
            parsed=parsed,
            inputs=inputs,
            preview=preview,
            table=plan.table_name if plan.materialize else None,
            key=key,
            connection=connection,
            drift_factor=drift_factor(self.settings),
            previous_row_count=previous_row_count,
        )


def step_result(
    *,
    tool: str,
    parsed: ParsedQuery,
    plan: qem.Materialization,
    preview: results.Preview,
    started: float,
    step_id: str,
    project: Project | None,
    purpose: str | None,
    result_label: str | None,
    found: list[Hint],
    connection: str | None,
    tab: str | None = None,
    extra_warnings: Iterable[str] = (),
    checks: Iterable[Check] = (),
) -> QueryResult:
    """The ``run_query`` / ``run_sql_tab`` answer with its ledger ``step``."""
    duration_ms = int((time.perf_counter() - started) * 1000)
    coded = [ResultWarning(result_warnings.READING_NOTE, w) for w in extra_warnings]
    if preview.truncated and preview.rows:  # no rows asked for (Source Run): no preview
        coded.append(result_warnings.preview_cut(len(preview.rows), preview.row_count))
    if preview.cells_cut and preview.cell_chars:  # cells are cut only under a cap
        coded.append(result_warnings.cells_cut(preview.cells_cut, preview.cell_chars))
    coded.extend(
        ResultWarning(h["code"], h["message"])
        for h in found
        if h["code"] != "COMPLEXITY_SPLIT_RECOMMENDED" or tab is not None
    )
    warnings = [w.message for w in coded]  # the step shares this list with the result
    table = plan.table_name if plan.materialize else None
    step: QueryStep = {
        "step_id": step_id,
        "at": _now_iso(),
        "tool": tool,
        "project": project.dirname if project else None,
        "purpose": purpose,
        "result_label": result_label,
        "sql": parsed.sql,
        "row_count": preview.row_count,
        "columns": preview.columns,
        "cached_table_name": table,
        "materialized": plan.materialize,
        "materialize_reason": plan.reason_code,
        "warnings": warnings,
        "checks": list(checks),
        "duration_ms": duration_ms,
    }
    if connection:  # the source it ran on, by name (never its string or password)
        step["connection"] = connection
    out: QueryResult = {
        "status": "ok",
        "step_id": step_id,
        "sql": parsed.sql,
        "columns": preview.columns,
        "preview": preview.rows,
        "row_count": preview.row_count,
        "truncated": preview.truncated,
        "materialized": plan.materialize,
        "reason_code": plan.reason_code,
        "materialize_reason": plan.reason,
        "cached_table_name": table,
        "warnings": warnings,
        "warning_codes": [w.code for w in coded],
        "hints": found,
        "checks": list(checks),
        "duration_ms": duration_ms,
        "step": step,
        "cells_cut": preview.cells_cut,
        "cell_chars": preview.cell_chars,
    }
    if project is not None:
        out["project"] = project.dirname
    if tab is not None:
        out["tab"] = tab
    if connection:
        out["source"] = connection
    return out


def drift_factor(settings: QuerySettings) -> float:
    """``query.row_count_drift_factor``; a value that is not a number above 1 (which would
    call every change a drift) falls back to the default."""
    try:
        factor = float(getattr(settings, "row_count_drift_factor", 0) or 0)
    except (TypeError, ValueError):
        factor = 0.0
    return factor if factor > 1 else result_checks.rules.DRIFT_FACTOR


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"
