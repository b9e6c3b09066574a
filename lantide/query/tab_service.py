"""SQL tabs of one workspace: the part of :class:`lantide.query.service.QueryService` for tabs.

run / Source Run / create / rename / delete / list / lineage. A rename or delete moves the
tab's cached table with it and reports the tabs that read it (``dependents``); their SQL
is never edited. Shapes: ``run_sql_tab`` is ``run_query``'s shape plus ``"tab"``;
``source_run_sql_tab`` is described in :mod:`lantide.query.sourcerun`;
``lineage(project)`` is ``{"project", "tabs": [{"tab", "reads_tabs", "reads_sources",
"reads_cached", "reads_external", "unknown_tables", "reads_files", "error"?}],
"edges": [{"from", "to"}], "order": [...] or None, "cycle": [...] or None}``;
``list_sql_tabs`` gives ``[{"tab", "path", "cached_table", "row_count", "last_run_at",
"state": "up_to_date" | "stale" | "never_run", "error"}]``.

A tab's statement is resolved by the :class:`~lantide.query.resolver.InputResolver` (its
own project's tabs first) and run by the :class:`~lantide.query.runner.StatementRunner`
like any other; Source Run (:mod:`lantide.query.sourcerun`) walks the tabs through
:meth:`SqlTabs.graph`, :meth:`SqlTabs.tab_lineage` and :meth:`SqlTabs.run_tab`.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lantide.errors import LantideError
from lantide.query import guard, qem, result_warnings
from lantide.query import lineage as lin
from lantide.query import tabs as tab_files
from lantide.query.catalog import TAB, CachedTable, Catalog
from lantide.query.engine import Engine, transaction
from lantide.query.errors import LargeRemoteResult, QueryError
from lantide.query.hints import statement_hints
from lantide.query.names import quote_ident, same_name
from lantide.query.projects import ProjectArg, required_project
from lantide.query.remote_consent import warning_ids
from lantide.query.resolver import InputResolver, single_source
from lantide.query.results import new_step_id
from lantide.query.runner import StatementRunner, step_result
from lantide.query.sources import DataSources, DataTable

if TYPE_CHECKING:
    from lantide.query.engine import Cursor
    from lantide.query.sourcerun import StatementGate
    from lantide.workspace.model import Project, Workspace
    from lantide.workspace.settings import QuerySettings

Graph = dict[str, list[str]]


class SqlTabs:
    """The SQL tabs of one workspace's projects, run through the statement runner."""

    def __init__(
        self,
        workspace: Workspace,
        settings: QuerySettings,
        *,
        engine: Engine,
        catalog: Catalog,
        sources: DataSources,
        inputs: InputResolver,
        runner: StatementRunner,
    ):
        self.workspace = workspace
        self.settings = settings
        self.engine = engine
        self.catalog = catalog
        self.sources = sources
        self.inputs = inputs
        self.runner = runner

    def run_sql_tab(
        self,
        project: ProjectArg,
        tab: str,
        purpose: str | None = None,
        *,
        large_remote_warning_id: str | None = None,
        max_cell_chars: int | None = None,
        purpose_required: bool = True,
    ) -> dict[str, Any]:
        project_obj = required_project(self.workspace, project)
        name = tab_files.find_tab(project_obj, tab)
        purpose = qem.check_purpose(project_obj.status, purpose, required=purpose_required)
        self.inputs.refresh_if_stale()
        result = self.run_tab(
            project_obj,
            name,
            purpose,
            tool="run_sql_tab",
            large_remote_warning_id=large_remote_warning_id,
            cell_chars=max_cell_chars,
        )
        if result.get("status") == "ok" and qem.runs_without_purpose(project_obj.status, purpose):
            result_warnings.add(result, result_warnings.no_purpose(qem.PURPOSE_MAX_CHARS))
        return result

    def tab_lineage(
        self, project: Project, name: str, tabs: list[str] | None = None, text: str | None = None
    ) -> lin.TabLineage:
        """A tab's lineage; a tab whose file cannot be read (not UTF-8, removed meanwhile,
        a name that is no longer allowed) gets a lineage with that ``error``, so it is a
        problem for itself only, never for a listing or Source Run of the other tabs.
        ``text``: the file's text, read just before by the caller."""
        names = tabs if tabs is not None else tab_files.tab_names(project)
        try:
            sql = text if text is not None else tab_files.read_tab(project, name, names)
        except LantideError as exc:
            return lin.TabLineage(tab=name, sql="", sql_hash="", error=exc.to_dict())
        return lin.analyse_tab(
            name,
            sql,
            lambda ref: self.inputs.resolve(ref, names),
            data_dir=self.workspace.data_dir,
            workspace_root=self.workspace.root,
            known_table=lambda ref: self.inputs.resolve(ref, names).kind != lin.UNKNOWN,
        )

    def tab_fingerprint(self, lineage: lin.TabLineage) -> str | None:
        """SQL and inputs of a tab in one hash; None when it cannot be known (remote data)."""
        parts = [f"sql:{lineage.sql_hash}"]
        for inp in sorted(lineage.inputs, key=lambda i: (i.kind, i.target.casefold())):
            if inp.kind in (lin.TAB, lin.CACHED):
                row = self.catalog.cached(inp.target)
                if row is None:
                    return None
                parts.append(
                    f"{inp.kind}:{row.name.casefold()}:{row.fingerprint or row.created_at}"
                )
            elif inp.kind == lin.DATA:
                assert isinstance(inp.detail, DataTable)  # a data input's detail
                parts.append(f"data:{self.sources.fingerprint(inp.detail)}")
            else:
                return None  # external or unknown: never assumed unchanged
        for path in sorted(lineage.files):
            full = Path(path) if Path(path).is_absolute() else self.workspace.root / path
            try:
                st = full.stat()
                parts.append(f"file:{full}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                return None
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]

    def run_tab(
        self,
        project: Project,
        name: str,
        purpose: str | None,
        *,
        tool: str,
        lineage: lin.TabLineage | None = None,
        large_remote_warning_id: str | list[str] | None = None,
        fingerprint: str | None = None,
        preview_rows: int | None = None,
        cell_chars: int | None = None,
    ) -> dict[str, Any]:
        """Materialize one tab (its answer, or a large remote result's ``warning_required``).
        ``fingerprint``: already computed for ``lineage`` now (Source Run);
        ``preview_rows``: overrides the setting, 0 reads no rows."""
        started = time.perf_counter()
        lineage = lineage or self.tab_lineage(project, name)
        if lineage.error:
            err = lineage.error
            where = err.get("position")  # in the tab's file text, as the guard found it
            raise QueryError(
                f"SQL tab {name!r}: {err['message']}",
                code=err["error"],
                hint=err.get("hint"),
                position=(where["line"], where["column"]) if where else None,
            )
        parsed = lineage.parsed
        assert parsed is not None  # a lineage without an error has its parse
        self.inputs.check_inputs(lineage.inputs)
        qem.check_not_own_result(parsed, name)
        self.runner.check_result_name(name, tab_of=(project.dirname, name), views=False)
        connection = single_source(lineage.inputs)
        step_id = new_step_id()
        plan = qem.decide_materialization(
            tab=name,
            external=bool(connection),
            result_label=None,
            project_status=project.status,
            tables_read=len(parsed.tables),
            step_id=step_id,
        )
        found = statement_hints(parsed, lineage.inputs)
        if connection:
            source_run = tool == "source_run_sql_tab"
            warning = self.runner.large_remote_check(
                connection,
                parsed,
                large_remote_warning_id,
                again="Source Run again" if source_run else "run the tab again",
            )
            if warning and source_run:
                raise LargeRemoteResult(warning)  # this tab fails; downstream does not run
            if warning:
                return warning
        if fingerprint is None:
            fingerprint = self.tab_fingerprint(lineage)
        record = CachedTable(
            name, TAB, project.dirname, name, step_id, lineage.sql, fingerprint, None, None, None
        )
        last = self.catalog.cached(name)  # the same step ran before: same tab, same SQL
        previous = (
            last.row_count
            if (
                last is not None
                and last.kind == TAB
                and last.project == project.dirname
                and last.sql == lineage.sql
            )
            else None
        )
        preview = self.runner.execute(
            parsed, plan, record, connection, preview_rows=preview_rows, cell_chars=cell_chars
        )
        checks = self.runner.result_checks(
            parsed, lineage.inputs, preview, plan, connection, None, previous_row_count=previous
        )
        return step_result(
            tool=tool,
            parsed=parsed,
            plan=plan,
            preview=preview,
            started=started,
            step_id=step_id,
            project=project,
            purpose=purpose,
            result_label=None,
            found=found,
            connection=connection,
            tab=name,
            checks=checks,
            extra_warnings=self.inputs.reading_warnings(lineage.inputs),
        )

    def source_run_sql_tab(
        self,
        project: ProjectArg,
        tab: str,
        purpose: str | None = None,
        progress: Callable[[dict[str, Any]], None] | None = None,
        *,
        large_remote_warning_id: str | list[str] | None = None,
        statement_gate: StatementGate | None = None,
    ) -> dict[str, Any]:
        """``large_remote_warning_id``: one id or a list, confirming the staging of large
        remote results the chain's tabs answered with before (``LARGE_REMOTE_RESULT``)."""
        from lantide.query.sourcerun import default_workers, source_run

        project_obj = required_project(self.workspace, project)
        purpose = qem.check_purpose(None, purpose)
        self.inputs.refresh_if_stale()
        workers = int(getattr(self.settings, "source_run_workers", 0) or 0) or default_workers()
        return source_run(
            self,
            self.catalog,
            project_obj,
            tab_files.find_tab(project_obj, tab),
            purpose,
            progress,
            workers=workers,
            confirmed=warning_ids(large_remote_warning_id),
            statement_gate=statement_gate,
        )

    def check_new_sql_tab(self, project: ProjectArg, name: str) -> str:
        """The clean name a new tab of ``project`` may take, or the error create_sql_tab
        would give (bad name, a tab of that name, a data file's or another project's
        table). Writes nothing: the app's new tab is a file only once it is saved."""
        project_obj = required_project(self.workspace, project)
        name = tab_files.validate_tab_name(name)
        tab_files.check_no_tab_named(project_obj, name)
        self.inputs.refresh_if_stale()
        self.runner.check_result_name(name, tab_of=(project_obj.dirname, name))
        return name

    def create_sql_tab(self, project: ProjectArg, name: str, sql: str) -> dict[str, Any]:
        project_obj = required_project(self.workspace, project)
        name = tab_files.validate_tab_name(name)
        self.inputs.guard(sql)  # a tab is one read-only statement from the start
        self.runner.check_result_name(name, tab_of=(project_obj.dirname, name))
        path = tab_files.write_new_tab(project_obj, name, sql)
        lineage = self.tab_lineage(project_obj, name)
        return {
            "project": project_obj.dirname,
            "tab": name,
            "path": str(path),
            "lineage": lineage.to_dict(),
        }

    def rename_sql_tab(self, project: ProjectArg, old: str, new: str) -> dict[str, Any]:
        project_obj = required_project(self.workspace, project)
        old = tab_files.find_tab(project_obj, old)
        new = tab_files.validate_tab_name(new)
        self.runner.check_result_name(new, tab_of=(project_obj.dirname, new))
        graph = self.graph(project_obj)[0]
        dependents = [t for t in lin.downstream_of(graph, old) if old in graph.get(t, [])]
        old, new = tab_files.rename_tab_file(project_obj, old, new)
        renamed = False
        cached = self.catalog.cached(old)
        if cached is not None and cached.kind == TAB and cached.project == project_obj.dirname:

            def work(cur: Cursor) -> None:
                with transaction(cur):
                    if not same_name(old, new):
                        cur.execute(f"DROP TABLE IF EXISTS {quote_ident(new)}")
                    cur.execute(f"ALTER TABLE {quote_ident(old)} RENAME TO {quote_ident(new)}")
                    self.catalog.forget(cur, old)
                    cached.name, cached.tab = new, new
                    self.catalog.record(cur, cached)

            self.engine.run(work)
            self.catalog.invalidate()
            renamed = True
        out = {
            "project": project_obj.dirname,
            "old": old,
            "new": new,
            "path": str(project_obj.sql_tab_path(new)),
            "cached_table_renamed": renamed,
            "dependents": dependents,
        }
        if dependents:
            out["hint"] = (
                f"These tabs still read {old!r} and were not changed: "
                f"{', '.join(dependents)}. Update them to read {new!r}."
            )
        return out

    def delete_sql_tab(self, project: ProjectArg, name: str) -> dict[str, Any]:
        project_obj = required_project(self.workspace, project)
        name = tab_files.find_tab(project_obj, name)
        graph = self.graph(project_obj)[0]
        dependents = [t for t in graph if name in graph.get(t, [])]
        trash = tab_files.trash_tab_file(project_obj, name)
        dropped = False
        cached = self.catalog.cached(name)
        if cached is not None and cached.kind == TAB and cached.project == project_obj.dirname:

            def work(cur: Cursor) -> None:
                cur.execute(f"DROP TABLE IF EXISTS {quote_ident(name)}")
                self.catalog.forget(cur, name)

            self.engine.run(work)
            self.catalog.invalidate()
            dropped = True
        out = {
            "project": project_obj.dirname,
            "deleted": name,
            "trash_path": str(trash),
            "cached_table_dropped": dropped,
            "dependents": sorted(dependents),
        }
        if dependents:
            out["hint"] = (
                f"These tabs read {name!r} and will fail until changed: {', '.join(dependents)}."
            )
        return out

    def list_sql_tabs(self, project: ProjectArg) -> list[dict[str, Any]]:
        project_obj = required_project(self.workspace, project)
        tabs = tab_files.tab_names(project_obj)
        out = []
        for name in tabs:
            lineage = self.tab_lineage(project_obj, name, tabs)
            cached = self.catalog.cached(name)
            mine = (
                cached
                if (
                    cached is not None
                    and cached.kind == TAB
                    and cached.project == project_obj.dirname
                )
                else None
            )
            fingerprint = None if lineage.error else self.tab_fingerprint(lineage)
            state = (
                "never_run"
                if mine is None
                else "up_to_date"
                if fingerprint and fingerprint == mine.fingerprint
                else "stale"
            )
            out.append(
                {
                    "tab": name,
                    "path": str(project_obj.sql_tab_path(name)),
                    "cached_table": name if mine else None,
                    "row_count": mine.row_count if mine else None,
                    "last_run_at": mine.created_at.isoformat()
                    if mine and mine.created_at
                    else None,
                    "state": state,
                    "error": lineage.error,
                }
            )
        return out

    def graph(self, project: Project) -> tuple[Graph, dict[str, lin.TabLineage]]:
        """Each tab's upstream tabs, and each tab's lineage."""
        tabs = tab_files.tab_names(project)
        texts: dict[str, str] = {}
        for t in tabs:
            with contextlib.suppress(LantideError):  # its lineage reads it again, says why
                texts[t] = tab_files.read_tab(project, t, tabs)
        guard.analyse_ahead(texts.values())  # DuckDB's parser asked once for all the tabs
        lineages = {t: self.tab_lineage(project, t, tabs, texts.get(t)) for t in tabs}
        return {t: tab.upstream_tabs for t, tab in lineages.items()}, lineages

    def lineage(self, project: ProjectArg) -> dict[str, Any]:
        project_obj = required_project(self.workspace, project)
        self.inputs.refresh_if_stale()
        graph, lineages = self.graph(project_obj)
        cycle = lin.find_cycle(graph)
        return {
            "project": project_obj.dirname,
            "tabs": [lineages[t].to_dict() for t in sorted(graph, key=str.casefold)],
            "edges": [
                {"from": up, "to": t} for t in sorted(graph, key=str.casefold) for up in graph[t]
            ],
            "order": None if cycle else lin.topological(graph),
            "cycle": cycle,
        }
