"""The two hints of the QEM: ``complexity_hint`` (blocking) and ``optimization_hint``.

complexity_hint / ``COMPLEXITY_SPLIT_RECOMMENDED``
    A statement with three or more CTEs, counted over the whole statement (nested WITHs
    too), is hard to verify step by step. In ``run_query`` (ad-hoc SQL from the agent or
    the command line) it is refused with advice to split it into smaller steps or to
    persist an upstream part as a SQL tab. It is *not* a guard rule: ``validate_query``
    accepts the statement and reports the hint, a persisted SQL tab (which is the split
    the hint asks for) runs with the hint as a warning, and an analyst can run it ad hoc
    with ``allow_complex`` (``lantide sql --allow-complex``).

optimization_hint / ``CACHE_UPSTREAM_JOIN`` (never blocks)
    A join across three or more entity tables read straight from data files or external
    sources re-reads and re-joins them on every run; persisting the join as an upstream
    SQL tab makes it a cached table that later steps read cheaply.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from lantide.query import lineage as lin
from lantide.query.guard import ParsedQuery

COMPLEXITY_CTE_LIMIT = 3
JOIN_ENTITY_LIMIT = 3


class Hint(TypedDict):
    """A hint as tools and tab runs report it."""

    code: str
    message: str
    hint: str
    cte_count: NotRequired[int]  # COMPLEXITY_SPLIT_RECOMMENDED
    tables: NotRequired[list[str]]  # CACHE_UPSTREAM_JOIN


def complexity_hint(parsed: ParsedQuery) -> Hint | None:
    if parsed.cte_count < COMPLEXITY_CTE_LIMIT:
        return None
    return {
        "code": "COMPLEXITY_SPLIT_RECOMMENDED",
        "cte_count": parsed.cte_count,
        "message": f"the query has {parsed.cte_count} CTEs (the limit for one step is "
        f"{COMPLEXITY_CTE_LIMIT - 1})",
        "hint": "Split it into smaller steps: persist the first CTEs as a SQL tab "
        "(create_sql_tab) and query its cached table, then check each step's result.",
    }


def optimization_hint(parsed: ParsedQuery, entity_tables: list[str]) -> Hint | None:
    """``entity_tables``: the display names of tables read from files or connections."""
    distinct = sorted(set(entity_tables), key=str.casefold)
    if parsed.join_count < 2 or len(distinct) < JOIN_ENTITY_LIMIT:
        return None
    return {
        "code": "CACHE_UPSTREAM_JOIN",
        "tables": distinct,
        "message": f"this joins {len(distinct)} source tables ({', '.join(distinct)}) on every run",
        "hint": "Not blocking. When later steps reuse this join, persist it as an upstream SQL "
        "tab; they then read its cached table instead of re-joining the files.",
    }


def statement_hints(parsed: ParsedQuery, inputs: list[lin.Input]) -> list[Hint]:
    """The hints that apply to a statement reading ``inputs``, complexity first."""
    out: list[Hint] = []
    complexity = complexity_hint(parsed)
    if complexity:
        out.append(complexity)
    entities = [i.name for i in inputs if i.kind in (lin.DATA, lin.EXTERNAL)]
    optimization = optimization_hint(parsed, entities)
    if optimization:
        out.append(optimization)
    return out
