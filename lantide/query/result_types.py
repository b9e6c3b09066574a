"""The shapes of a statement's answer: the query result, its ledger step, and the other
answers of :class:`~lantide.query.service.QueryService`'s statement calls.

The query result is what ``run_query`` and ``run_sql_tab`` answer (made by
:func:`lantide.query.runner.step_result`) and what the agent's tools, ``lantide sql --json``,
MCP and the desktop app read. A large remote result answers :class:`LargeRemoteWarning`
instead (:mod:`lantide.query.remote_consent`). Keys marked ``NotRequired`` are set on some
paths only.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from lantide.query.checks.rules import Check
from lantide.query.errors import QueryErrorDict
from lantide.query.hints import Hint
from lantide.query.remote_consent import LargeRemoteWarning
from lantide.query.results import Column, JSONValue


class QueryStep(TypedDict):
    """The ledger step a successful run proposes (the agent adds its own fields when it
    records it: :func:`lantide.agent.tools.query_tools.record_step`)."""

    step_id: str
    at: str  # ISO 8601, UTC, to the hundredth of a second
    tool: str  # run_query, run_sql_tab, source_run_sql_tab
    project: str | None  # the project's folder name
    purpose: str | None
    result_label: str | None
    sql: str
    row_count: int
    columns: list[Column]
    cached_table_name: str | None
    materialized: bool
    materialize_reason: str  # the plan's reason code (lantide.query.qem.REASON_TEXT)
    warnings: list[str]  # the same list as the result's
    checks: list[Check]
    duration_ms: int
    # the external connection it ran on (a remote tab, a staged statement), by name only
    connection: NotRequired[str]


class QueryResult(TypedDict):
    """The answer of ``run_query`` / ``run_sql_tab`` (and of each tab a Source Run ran)."""

    status: Literal["ok"]
    step_id: str
    sql: str
    columns: list[Column]
    preview: list[list[JSONValue]]  # at most the preview rows; none on a Source Run
    row_count: int
    truncated: bool
    materialized: bool
    reason_code: str
    materialize_reason: str  # the reason code's sentence
    cached_table_name: str | None
    warnings: list[str]
    warning_codes: list[str]  # the code of each warning, in order (result_warnings)
    hints: list[Hint]
    checks: list[Check]
    duration_ms: int
    step: QueryStep
    cells_cut: int
    cell_chars: int | None  # the cap applied to a preview cell (None: whole values)
    project: NotRequired[str]  # when the run belongs to a project
    tab: NotRequired[str]  # a SQL tab's run
    source: NotRequired[str]  # the external connection it ran on


# What running a statement answers: its result, or the question to confirm a large remote
# result (``status`` tells them apart).
RunAnswer = QueryResult | LargeRemoteWarning


class PreviewAnswer(TypedDict):
    """``preview_sql``: the first rows of a statement run again, nothing materialized."""

    columns: list[Column]
    rows: list[list[JSONValue]]
    row_count: int


class Validated(TypedDict):
    """``validate_query`` when the statement parses and binds."""

    ok: Literal[True]
    columns: list[Column]
    tables: list[str]
    source: str  # "local" or the connection's name
    hints: list[Hint]
    warnings: list[str]


class NotValid(QueryErrorDict):
    """``validate_query`` when it does not: the error's fields."""

    ok: Literal[False]


Validation = Validated | NotValid
