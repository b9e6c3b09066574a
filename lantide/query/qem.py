"""The rules of the Query Execution Model (DESIGN.md section 4), in one place.

The order in which a statement meets them is :func:`admit`'s, the one place it is written
(``run_query``, a SQL tab's run and each tab of a Source Run call it once their statement is
parsed and its tables resolved; nothing else decides):

1. **Guard** (:func:`lantide.query.guard.check`, before :func:`admit`): one read-only
   statement whose tables resolve, else a refusal.
2. **Own result**: a statement may not read the cached table it is about to replace
   (``QUERY_READS_OWN_RESULT``), nor take the name of a data file's table.
3. **One source per statement**: a statement reads either local tables (data files and
   cached tables) or the tables of one external connection; mixing them is refused
   (``CROSS_SOURCE_QUERY``) with advice to stage each side first.
4. **Purpose**: while the project is ``executing``, ``run_query`` and ``run_sql_tab``
   need a ``purpose`` of at most 40 characters (``PURPOSE_REQUIRED``, ``PURPOSE_TOO_LONG``).
   The purpose is the agent's duty (its tools, MCP): the analyst's own runs (the app's SQL
   tab, the command line) and Source Run pass ``purpose_required=False`` and run without
   one as an exploratory step; a purpose, when given, still has the 40-character limit.
5. **Complexity** (:mod:`lantide.query.hints`): three or more CTEs block ad-hoc
   ``run_query`` (``COMPLEXITY_SPLIT_RECOMMENDED``); tabs get it as a warning.
6. **Large remote result**: a staged statement whose remote row count exceeds
   ``query.large_remote_rows`` answers ``warning_required`` with a
   ``large_remote_warning_id`` and runs only when that id comes back (``run_query``,
   ``run_sql_tab``; in a Source Run the tab fails with ``LARGE_REMOTE_RESULT`` carrying
   the id, before anything is copied). Ids are kept in the cache database
   (:mod:`lantide.query.remote_consent`), so a confirmation works across processes.
7. **Materialization**: :func:`decide_materialization`, following the table below (decided
   before rule 2, which needs the name; carried out after rule 6).
8. **Preview**: at most 200 rows cross into Python; the row count is computed in DuckDB.

Materialization strategy (first matching row wins; ``reason_code`` is returned every time):

| # | when                                | stored | cached table       | reason_code             |
| - | ----------------------------------- | ------ | ------------------ | ----------------------- |
| 1 | a SQL tab (run_sql_tab, Source Run) | yes    | the tab's name     | ``persisted_tab``       |
| 2 | the statement reads a connection    | yes    | label or staged_ID | ``staged_external``     |
| 3 | ``result_label`` given              | yes    | slug of the label  | ``labelled_result``     |
| 4 | the project is ``executing`` (Plan) | yes    | step_ID            | ``executing_step``      |
| 5 | a join of two or more tables        | yes    | result_ID          | ``multi_table_join``    |
| 6 | anything else                       | no     | (none)             | ``exploratory_preview`` |

(stored: materialized as a cached table)

Why: tabs and labelled results are named so later steps can read them; staged remote
results must be local to be joined; an executing step is evidence the Report may cite;
a join is the expensive kind of result that the grid pages through and later steps reuse.
A single-table exploratory look is cheap to recompute, so it is not kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lantide.query import lineage as lin
from lantide.query.errors import QueryRefused
from lantide.query.guard import ParsedQuery, TableRef
from lantide.query.hints import Hint, statement_hints
from lantide.query.names import same_name, slug

if TYPE_CHECKING:
    from lantide.query.remote_consent import LargeRemoteWarning

PREVIEW_ROWS = 200
PURPOSE_MAX_CHARS = 40

PERSISTED_TAB = "persisted_tab"
STAGED_EXTERNAL = "staged_external"
LABELLED_RESULT = "labelled_result"
EXECUTING_STEP = "executing_step"
MULTI_TABLE_JOIN = "multi_table_join"
EXPLORATORY_PREVIEW = "exploratory_preview"

REASON_TEXT = {
    PERSISTED_TAB: "a persisted SQL tab is cached under its own name",
    STAGED_EXTERNAL: "a remote result is staged locally so it can be joined",
    LABELLED_RESULT: "a labelled result is kept for later steps",
    EXECUTING_STEP: "a step of an executing project is kept as evidence",
    MULTI_TABLE_JOIN: "a join is kept so paging and later steps do not recompute it",
    EXPLORATORY_PREVIEW: "an exploratory single-table look is only previewed",
}


@dataclass(frozen=True)
class Materialization:
    materialize: bool
    reason_code: str
    table_name: str | None

    @property
    def reason(self) -> str:
        return REASON_TEXT[self.reason_code]


def decide_materialization(
    *,
    tab: str | None,
    external: bool,
    result_label: str | None,
    project_status: str | None,
    tables_read: int,
    step_id: str,
) -> Materialization:
    """The strategy table above, row by row."""
    if tab:
        return Materialization(True, PERSISTED_TAB, tab)
    if external:
        return Materialization(
            True, STAGED_EXTERNAL, slug(result_label) if result_label else f"staged_{step_id}"
        )
    if result_label:
        return Materialization(True, LABELLED_RESULT, slug(result_label))
    if project_status == "executing":
        return Materialization(True, EXECUTING_STEP, f"step_{step_id}")
    if tables_read >= 2:
        return Materialization(True, MULTI_TABLE_JOIN, f"result_{step_id}")
    return Materialization(False, EXPLORATORY_PREVIEW, None)


def check_purpose(
    project_status: str | None, purpose: str | None, *, required: bool = True
) -> str | None:
    """The purpose to record; refuses a too long one, and a missing one while executing
    when ``required`` (the agent's runs; the analyst's are not asked)."""
    clean = (purpose or "").strip() or None
    if clean and len(clean) > PURPOSE_MAX_CHARS:
        raise QueryRefused(
            f"the purpose is {len(clean)} characters; at most {PURPOSE_MAX_CHARS} are allowed",
            code="PURPOSE_TOO_LONG",
            hint=f"Say what this step is for in {PURPOSE_MAX_CHARS} characters or fewer, "
            "e.g. 'Q2 active customers per region'.",
        )
    if required and project_status == "executing" and not clean:
        raise QueryRefused(
            "the project is executing: every query needs a purpose",
            code="PURPOSE_REQUIRED",
            hint=f"Pass purpose= (at most {PURPOSE_MAX_CHARS} characters) saying what this "
            "step is for; it is written to the step ledger.",
        )
    return clean


def runs_without_purpose(project_status: str | None, purpose: str | None) -> bool:
    """An analyst's run that :func:`check_purpose` let through without a purpose while
    executing: its result says so (``NO_PURPOSE``) and its step is exploratory."""
    return project_status == "executing" and not (purpose or "").strip()


def check_not_own_result(parsed: ParsedQuery, target: str | None) -> None:
    if not target or parsed.remote is not None:  # a remote tab reads its source only
        return
    for ref in parsed.tables:
        if ref.schema is None and ref.catalog is None and same_name(ref.name, target):
            raise QueryRefused(
                f"refused: the query reads {ref.display()}, the cached table it would replace",
                code="QUERY_READS_OWN_RESULT",
                hint="Read the upstream tables instead, or give the result another label / "
                "tab name.",
            )


def check_single_source(refs: list[tuple[TableRef | None, str | None]]) -> str | None:
    """``refs`` pairs each table with its connection name (None = local).

    Returns the one connection the statement runs on, or None for a local statement.
    """
    connections = {conn for _, conn in refs if conn is not None}
    local = [ref for ref, conn in refs if conn is None]
    if len(connections) > 1 or (connections and local):
        sides = sorted(connections) + (["local tables"] if local else [])
        raise QueryRefused(
            f"refused: one statement reads from {' and '.join(sides)}; a statement runs on "
            "one source",
            code="CROSS_SOURCE_QUERY",
            hint="Stage each side first: run the part that reads the connection on its own "
            "(a SQL tab or run_query with result_label), then join the cached tables "
            "locally.",
        )
    return connections.pop() if connections else None


@dataclass(frozen=True)
class Statement:
    """A parsed statement about to run, with what the rules look at."""

    parsed: ParsedQuery
    inputs: Sequence[lin.Input]
    step_id: str
    tab: str | None = None  # a SQL tab's run (Source Run included)
    result_label: str | None = None
    project_status: str | None = None
    purpose: str | None = None
    purpose_required: bool = True
    allow_complex: bool = False  # tabs: complexity is a warning, not a refusal


@dataclass(frozen=True)
class Admitted:
    """A statement the rules let through: how it is kept, and what to tell the caller."""

    plan: Materialization
    purpose: str | None
    connection: str | None  # the one external connection it runs on, or None (local)
    hints: list[Hint]
    # rule 6: the ``warning_required`` answer; the statement must not run when it is set
    remote_warning: LargeRemoteWarning | None = None


def admit(
    statement: Statement,
    *,
    check_target: Callable[[str], None],
    large_remote: Callable[[str], LargeRemoteWarning | None],
) -> Admitted:
    """Rules 2 to 7, in the module docstring's order; raises :class:`QueryRefused`.

    ``check_target(name)`` refuses a cached table name that is a source's (it needs the
    catalog); ``large_remote(connection)`` is rule 6's count on the source, answering the
    ``warning_required`` dict or None (it needs the connection)."""
    parsed = statement.parsed
    plan = decide_materialization(
        tab=statement.tab,
        external=parsed.remote is not None or any(i.kind == lin.EXTERNAL for i in statement.inputs),
        result_label=statement.result_label,
        project_status=statement.project_status,
        tables_read=len(parsed.tables) + len(parsed.files),
        step_id=statement.step_id,
    )
    check_not_own_result(parsed, plan.table_name)  # 2
    if plan.table_name:
        check_target(plan.table_name)
    # 3; a remote tab runs on its connection even when it names no table
    connection = parsed.remote if parsed.remote is not None else single_source(statement.inputs)
    purpose = check_purpose(  # 4
        statement.project_status, statement.purpose, required=statement.purpose_required
    )
    hints = statement_hints(parsed, list(statement.inputs))  # 5
    complexity = next((h for h in hints if h["code"] == "COMPLEXITY_SPLIT_RECOMMENDED"), None)
    if complexity and not statement.allow_complex:
        raise QueryRefused(complexity["message"], code=complexity["code"], hint=complexity["hint"])
    warning = large_remote(connection) if connection else None  # 6
    return Admitted(plan, purpose, connection, hints, warning)


def single_source(inputs: Sequence[lin.Input]) -> str | None:
    """The one external connection a statement reading ``inputs`` runs on, or None when it
    reads only local tables; refused when it mixes sources (:func:`check_single_source`)."""
    return check_single_source(
        [(_table_ref(i), i.target) if i.kind == lin.EXTERNAL else (None, None) for i in inputs]
    )


def _table_ref(inp: lin.Input) -> TableRef:
    assert isinstance(inp.detail, TableRef), inp  # an external input's detail, by construction
    return inp.detail
