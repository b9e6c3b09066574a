"""SQL tabs of one workspace: the part of :class:`lantide.query.service.QueryService` for tabs.

run / Source Run / create / rename / delete / list / lineage. A rename or delete moves the
tab's cached table with it and reports the tabs that read it (``dependents``); a rename
rewrites their references to it (:mod:`lantide.query.tab_refs`), a delete does not.
Shapes: ``run_sql_tab`` is ``run_query``'s shape plus ``"tab"``;
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
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from lantide.errors import LantideError
from lantide.query import guard, qem, remote_tabs, result_warnings
from lantide.query import lineage as lin
from lantide.query import tabs as tab_files
from lantide.query.catalog import TAB, CachedTable, Catalog
from lantide.query.engine import Engine, transaction
from lantide.query.errors import LargeRemoteResult, QueryError, QueryErrorDict, error_fields
from lantide.query.file_stamps import stamp
from lantide.query.names import quote_ident, same_name
from lantide.query.projects import ProjectArg, required_project
from lantide.query.remote_consent import warning_ids
from lantide.query.resolver import InputResolver
from lantide.query.results import new_step_id
from lantide.query.runner import StatementRunner, step_result
from lantide.query.sources import DataSources, DataTable
from lantide.query.tab_refs import plan_rewrites

if TYPE_CHECKING:
    from lantide.query.engine import Cursor
    from lantide.query.result_types import RunAnswer
    from lantide.query.sourcerun import Progress, SourceRunReport, StatementGate
    from lantide.workspace.model import Project, Workspace
    from lantide.workspace.settings import QuerySettings

Graph = dict[str, list[str]]


class TabRow(TypedDict):
    """A tab as ``list_sql_tabs`` lists it."""

    tab: str
    path: str
    cached_table: str | None  # the tab's name once it ran
    row_count: int | None
    last_run_at: str | None  # ISO 8601
    state: Literal["up_to_date", "stale", "never_run"]
    error: QueryErrorDict | None  # the tab's file cannot be read or parsed


class TabCreated(TypedDict):
    project: str
    tab: str
    path: str
    lineage: lin.TabLineageDict


class RewrittenTab(TypedDict):
    """A tab whose references to a renamed tab's cached table were rewritten."""

    project: str
    tab: str
    path: str
    references: int


class TabRenamed(TypedDict):
    project: str
    old: str
    new: str
    path: str
    cached_table_renamed: bool
    dependents: list[str]  # tabs that read the old name
    rewritten: list[RewrittenTab]  # those rewritten to read the new one
    changed_files: list[str]
    message: NotRequired[str]  # when tabs were rewritten: which, and how to undo
    hint: NotRequired[str]  # when dependents were left unchanged


class TabDeleted(TypedDict):
    project: str
    deleted: str
    trash_path: str
    cached_table_dropped: bool
    dependents: list[str]
    hint: NotRequired[str]


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
    ) -> RunAnswer:
        project_obj = required_project(self.workspace, project)
        name = tab_files.find_tab(project_obj, tab)
        self.inputs.refresh_if_stale()
        result = self.run_tab(
            project_obj,
            name,
            purpose,
            tool="run_sql_tab",
            purpose_required=purpose_required,
            large_remote_warning_id=large_remote_warning_id,
            cell_chars=max_cell_chars,
        )
        if result["status"] == "ok" and qem.runs_without_purpose(project_obj.status, purpose):
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
            return lin.TabLineage(tab=name, sql="", sql_hash="", error=error_fields(exc))
        try:
            connection = remote_tabs.tab_connection(sql)
        except LantideError as exc:  # an unclear header: this tab's problem only
            return lin.TabLineage(
                tab=name, sql=sql, sql_hash=lin.sql_hash(sql), error=error_fields(exc)
            )
        if connection is not None:
            try:
                config = self.runner.external.config(connection)
            except LantideError as exc:  # no such connection: this tab's problem only
                return lin.TabLineage(
                    tab=name, sql=sql, sql_hash=lin.sql_hash(sql), error=error_fields(exc)
                )
            return remote_tabs.analyse_remote_tab(name, sql, config.name, config.dialect)
        return lin.analyse_tab(
            name,
            sql,
            lambda ref: self.inputs.resolve(ref, names),
            data_dir=self.workspace.data_dir,
            workspace_root=self.workspace.root,
            known_table=lambda ref: self.inputs.resolve(ref, names).kind != lin.UNKNOWN,
        )

    def tab_fingerprint(self, lineage: lin.TabLineage, *, ask_source: bool = False) -> str | None:
        """SQL and inputs of a tab in one hash; None when it cannot be known (remote data).

        A remote tab's inputs are its source's rows: with ``ask_source`` (Source Run
        deciding whether to run it) the source digests the tab's result for the hash
        (:meth:`ExternalSources.result_checksum`); without (a listing), None."""
        parts = [f"sql:{lineage.sql_hash}"]
        parsed = lineage.parsed
        if parsed is not None and parsed.remote is not None:
            if not ask_source:
                return None
            external = self.runner.external
            config = external.config(parsed.remote)
            digest = external.result_checksum(
                config.name,
                external.remote_sql(config.name, parsed),
                register_cancel=self.runner.engine.cancel_hook,
            )
            if digest is None:
                return None
            parts.append(f"remote:{config.name}:{config.connection_string}:{config.user}")
            parts.append(f"rows:{digest}")
            return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]
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
                size, changed = stamp(full.stat())
                parts.append(f"file:{full}:{size}:{changed}")
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
        purpose_required: bool = False,
    ) -> RunAnswer:
        """Materialize one tab (its answer, or a large remote result's ``warning_required``).
        ``fingerprint``: already computed for ``lineage`` now (Source Run);
        ``preview_rows``: overrides the setting, 0 reads no rows; ``purpose_required``:
        the agent's ``run_sql_tab`` (:func:`qem.check_purpose`)."""
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
        step_id = new_step_id()
        source_run = tool == "source_run_sql_tab"
        admitted = qem.admit(
            qem.Statement(
                parsed,
                lineage.inputs,
                step_id,
                tab=name,
                project_status=project.status,
                purpose=purpose,
                purpose_required=purpose_required,
                allow_complex=True,
            ),
            check_target=lambda target: self.runner.check_result_name(
                target, tab_of=(project.dirname, name), views=False
            ),
            large_remote=lambda conn: self.runner.large_remote_check(
                conn,
                parsed,
                large_remote_warning_id,
                again="Source Run again" if source_run else "run the tab again",
            ),
        )
        if admitted.remote_warning and source_run:
            raise LargeRemoteResult(admitted.remote_warning)  # downstream does not run
        if admitted.remote_warning:
            return admitted.remote_warning
        plan, purpose, connection, found = (
            admitted.plan,
            admitted.purpose,
            admitted.connection,
            admitted.hints,
        )
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
        cap = self.runner.remote_cap(
            connection,
            parsed,
            large_remote_warning_id,
            again="Source Run again" if source_run else "run the tab again",
        )
        try:
            preview = self.runner.execute(
                parsed,
                plan,
                record,
                connection,
                preview_rows=preview_rows,
                cell_chars=cell_chars,
                cap=cap,
            )
        except LargeRemoteResult as exc:  # more rows arrived than the estimate said
            if source_run:
                raise  # downstream does not run
            return exc.warning
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
        progress: Progress | None = None,
        *,
        large_remote_warning_id: str | list[str] | None = None,
        statement_gate: StatementGate | None = None,
    ) -> SourceRunReport:
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

    def create_sql_tab(self, project: ProjectArg, name: str, sql: str) -> TabCreated:
        project_obj = required_project(self.workspace, project)
        name = tab_files.validate_tab_name(name)
        self.check_tab_sql(sql)  # a tab is one read-only statement from the start
        self.runner.check_result_name(name, tab_of=(project_obj.dirname, name))
        path = tab_files.write_new_tab(project_obj, name, sql)
        lineage = self.tab_lineage(project_obj, name)
        return {
            "project": project_obj.dirname,
            "tab": name,
            "path": str(path),
            "lineage": lineage.to_dict(),
        }

    def check_tab_sql(self, sql: str) -> None:
        """Refuse what no run of a tab holding ``sql`` would accept: DuckDB's guard for a
        local tab; for a remote tab, its connection and the check in its dialect."""
        connection = remote_tabs.tab_connection(sql)
        if connection is None:
            self.inputs.guard(sql)
            return
        config = self.runner.external.config(connection)
        remote_tabs.check_remote_tab(sql, config.name, config.dialect)

    def rename_sql_tab(self, project: ProjectArg, old: str, new: str) -> TabRenamed:
        """Rename the tab's file and cached table, and rewrite the references to its cached
        table in the other tabs that read it (:meth:`_readers_texts`, the rewrite in
        :mod:`lantide.query.tab_refs`). All rewrites are
        computed first: a tab that may read it but cannot be parsed refuses the rename
        with nothing changed; a failed write puts back what was written."""
        project_obj = required_project(self.workspace, project)
        old = tab_files.find_tab(project_obj, old)
        new = tab_files.validate_tab_name(new)
        self.runner.check_result_name(new, tab_of=(project_obj.dirname, new))
        graph = self.graph(project_obj)[0]
        dependents = [t for t in lin.downstream_of(graph, old) if old in graph.get(t, [])]
        rewrites = []
        projects = {project_obj.dirname: project_obj}
        if not same_name(old, new):  # a respelling reads the same table: nothing to rewrite
            rewrites = plan_rewrites(self._readers_texts(projects, old), old, new)
        old, new = tab_files.rename_tab_file(project_obj, old, new)
        try:
            tab_files.write_rewrites(projects, rewrites)
        except BaseException:
            tab_files.rename_tab_file(project_obj, new, old)
            raise
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
        path = project_obj.sql_tab_path(new)
        rewritten: list[RewrittenTab] = [
            {
                "project": r.project,
                "tab": r.tab,
                "path": str(projects[r.project].sql_tab_path(r.tab)),
                "references": r.references,
            }
            for r in rewrites
        ]
        out: TabRenamed = {
            "project": project_obj.dirname,
            "old": old,
            "new": new,
            "path": str(path),
            "cached_table_renamed": renamed,
            "dependents": dependents,
            "rewritten": rewritten,
            "changed_files": [str(path)] + [str(r["path"]) for r in rewritten],
        }
        if rewritten:
            out["message"] = (
                f"Renamed {old!r} to {new!r} and updated the tabs that read it: "
                + ", ".join(
                    (r.tab if r.project == project_obj.dirname else f"{r.project}/{r.tab}")
                    + f" ({r.references})"
                    for r in rewrites
                )
                + f". Changed files: {', '.join(out['changed_files'])}. To undo, rename "
                f"{new!r} back to {old!r}: the same tabs are updated again."
            )
        untouched = [
            t
            for t in dependents
            if t not in {r.tab for r in rewrites if r.project == project_obj.dirname}
        ]
        if untouched:
            out["hint"] = (
                f"These tabs still read {old!r} and were not changed: "
                f"{', '.join(untouched)}. Update them to read {new!r}."
            )
        return out

    def _readers_texts(self, projects: dict[str, Project], old: str) -> dict[tuple[str, str], str]:
        """The SQL of every tab that may read the cached table ``old``: the other tabs of
        its project (the only one in ``projects``), and the tabs of the other projects,
        which read it as a cached table (one namespace per workspace), unless a project
        has a tab of that name itself (its tabs read their own). ``projects`` gains the
        projects read."""
        (home,) = projects.values()
        texts = {
            (home.dirname, tab): sql
            for tab, sql in tab_files.read_tabs_exactly(home, exclude=old).items()
        }
        for other in self.workspace.list_projects(include_archived=True):
            if other.dirname == home.dirname or any(
                same_name(t, old) for t in tab_files.tab_names(other)
            ):
                continue
            projects[other.dirname] = other
            for tab, sql in tab_files.read_tabs_exactly(other).items():
                texts[(other.dirname, tab)] = sql
        return texts

    def delete_sql_tab(self, project: ProjectArg, name: str) -> TabDeleted:
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
        out: TabDeleted = {
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

    def list_sql_tabs(self, project: ProjectArg) -> list[TabRow]:
        project_obj = required_project(self.workspace, project)
        tabs = tab_files.tab_names(project_obj)
        out: list[TabRow] = []
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
            state: Literal["up_to_date", "stale", "never_run"] = (
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

    def lineage(self, project: ProjectArg) -> lin.ProjectLineage:
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
