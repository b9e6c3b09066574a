"""EXPLAIN and EXPLAIN ANALYZE of a statement, as a typed plan tree.

DuckDB writes its plans as JSON with ``EXPLAIN (FORMAT JSON)`` and
``EXPLAIN (ANALYZE, FORMAT JSON)`` (documented on DuckDB's profiling page); the ASCII art
of plain ``EXPLAIN`` is never read. :func:`parse_plan` turns either into a
:class:`QueryPlan` of :class:`PlanNode` (operator, extra info, rows, time), keys of
DuckDB 2.0 (``name``, ``timing``, ``intermediate_rows``) and of 1.x (``operator_name``,
``operator_timing``, ``operator_cardinality``) alike. The profiler's own wrappers
(``RESULT_COLLECTOR``, ``EXPLAIN_ANALYZE``) are left out: they are not the query's.

**EXPLAIN ANALYZE runs the statement**, so :func:`explain_statement` puts it through the
same rules as a run (:mod:`lantide.query.qem`): the guard (one read-only statement, the
file and function rules), the inputs' checks, one source, and a tab's own result. The
statement runs on the engine like any other (cancellable by :meth:`Engine.interrupt` and
its cancel scopes, under the time limit); nothing is materialized and no step is written.
A statement on an external connection, or a remote tab's (``-- lantide: connection=``), is
refused (``EXPLAIN_REMOTE``): its plan is the remote database's, which Lantide cannot read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lantide.query import qem
from lantide.query.errors import QueryError, QueryRefused
from lantide.query.guard import map_position
from lantide.query.results import select_body, wrapped_prefix
from lantide.query.sql_format import header_connection

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Engine
    from lantide.query.resolver import InputResolver

# Operators the profiler adds around every analyzed query.
_WRAPPERS = frozenset({"RESULT_COLLECTOR", "EXPLAIN_ANALYZE", "QUERY"})
ESTIMATED = "Estimated Cardinality"
HOTSPOT_SHARE = 0.10  # an operator taking a tenth of the time is worth a look


class PlanUnreadable(QueryError):
    code = "EXPLAIN_UNREADABLE"


@dataclass
class PlanNode:
    operator: str  # e.g. HASH_JOIN, SEQ_SCAN
    extra_info: dict[str, str] = field(default_factory=dict)  # as DuckDB gives it, lists joined
    rows: int | None = None  # rows the operator produced (ANALYZE only)
    estimated_rows: int | None = None  # the optimizer's estimate
    seconds: float | None = None  # time spent in the operator itself (ANALYZE only)
    children: list[PlanNode] = field(default_factory=list)

    def walk(self) -> list[PlanNode]:
        """This node and every node below it, depth first."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "operator": self.operator,
            "extra_info": dict(self.extra_info),
            "rows": self.rows,
            "estimated_rows": self.estimated_rows,
            "seconds": self.seconds,
            "children": [c.to_dict() for c in self.children],
        }


@dataclass
class QueryPlan:
    analyzed: bool  # True: ran, with rows and timings
    roots: list[PlanNode]
    total_seconds: float | None = None  # the query's wall time (ANALYZE)
    sql: str = ""  # the statement explained

    def nodes(self) -> list[PlanNode]:
        return [n for root in self.roots for n in root.walk()]

    def slowest(self, count: int = 3) -> list[PlanNode]:
        """The ``count`` operators that took the most time (ANALYZE), slowest first; none
        that took no measurable time."""
        timed = [n for n in self.nodes() if n.seconds]
        return sorted(timed, key=lambda n: n.seconds or 0.0, reverse=True)[:count]

    def share(self, node: PlanNode) -> float | None:
        """``node``'s share of all operators' time (ANALYZE), or None."""
        total = sum(n.seconds or 0.0 for n in self.nodes())
        return (node.seconds or 0.0) / total if node.seconds is not None and total > 0 else None

    def hotspots(self, count: int = 3, min_share: float = HOTSPOT_SHARE) -> list[PlanNode]:
        """The operators worth looking at first: the ``count`` slowest that each took at
        least ``min_share`` of the operators' time (in a small plan, not every operator is
        a hotspot just by being among the three slowest)."""
        return [n for n in self.slowest(count) if (self.share(n) or 0.0) >= min_share]

    def to_dict(self) -> dict[str, object]:
        return {
            "analyzed": self.analyzed,
            "total_seconds": self.total_seconds,
            "hotspots": [n.operator for n in self.hotspots()],
            "plan": [r.to_dict() for r in self.roots],
        }


def parse_plan(text: str, *, analyzed: bool) -> QueryPlan:
    """DuckDB's JSON plan (the ``explain_value`` column) as a :class:`QueryPlan`."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise PlanUnreadable(
            f"DuckDB's plan is not JSON ({exc})",
            hint="This DuckDB may not write JSON plans; update it (DuckDB 1.1 or later).",
        ) from None
    total: float | None = None
    if isinstance(data, dict) and data.get("result") == "error":  # e.g. VALUES alone
        raise PlanUnreadable(
            "DuckDB could not profile this statement",
            hint="Explain (without Analyze) shows its plan; a statement that reads a table "
            "can be profiled.",
        )
    if isinstance(data, dict):  # ANALYZE: the profile, operators under "children"/"operator"
        query = data.get("query")
        raw_total = query.get("total_time") if isinstance(query, dict) else data.get("latency")
        total = _float(raw_total)
        tops = data.get("operator") if "operator" in data else data.get("children")
    else:
        tops = data
    if not isinstance(tops, list):
        raise PlanUnreadable(
            "DuckDB's plan has no operators",
            hint="Run the statement instead; its plan could not be read.",
        )
    roots: list[PlanNode] = []
    for top in tops:
        roots.extend(_nodes(top))
    return QueryPlan(analyzed, roots, total)


def _nodes(raw: object) -> list[PlanNode]:
    """``raw`` as nodes: one, or its children when it is a profiler wrapper."""
    if not isinstance(raw, dict):
        return []
    children = [n for c in raw.get("children") or [] for n in _nodes(c)]
    name = str(raw.get("name") or raw.get("operator_name") or raw.get("operator_type") or "?")
    if name.strip().upper() in _WRAPPERS:
        return children
    extra = _extra(raw.get("extra_info"))
    estimated = _int(extra.get(ESTIMATED))
    rows = raw.get("intermediate_rows", raw.get("operator_cardinality"))
    seconds = raw.get("timing", raw.get("operator_timing"))
    has_profile = "timing" in raw or "operator_timing" in raw
    return [
        PlanNode(
            operator=name.strip(),
            extra_info=extra,
            rows=_int(rows) if has_profile else None,
            estimated_rows=estimated,
            seconds=_float(seconds) if has_profile else None,
            children=children,
        )
    ]


def _extra(raw: object) -> dict[str, str]:
    if isinstance(raw, dict):
        return {
            str(k): "\n".join(str(x) for x in v) if isinstance(v, list) else str(v)
            for k, v in raw.items()
        }
    if isinstance(raw, str) and raw.strip():  # DuckDB 1.0 gave one text
        return {"Info": raw.strip()}
    return {}


def _int(value: object) -> int | None:
    try:
        return int(str(value).replace(",", "").strip().lstrip("~"))
    except (TypeError, ValueError):
        return None


def _float(value: object) -> float | None:
    if not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _remote_refusal(connection: str) -> QueryRefused:
    return QueryRefused(
        f"the statement runs on the connection {connection!r}; its plan is that "
        "database's, which Lantide does not read",
        code="EXPLAIN_REMOTE",
        hint="Use the database's own EXPLAIN in its tools, or explain a statement on "
        "the staged (cached) table.",
    )


def explain_statement(
    sql: str,
    *,
    inputs: InputResolver,
    engine: Engine,
    analyze: bool = False,
    tab: str | None = None,
) -> QueryPlan:
    """The plan of ``sql`` under the QEM's rules (see the module docstring); ``tab``: the
    SQL tab it comes from, which may not read its own cached table."""
    remote = header_connection(sql)
    if remote:
        raise _remote_refusal(remote)
    inputs.refresh_if_stale()
    parsed = inputs.guard(sql)
    qem.check_not_own_result(parsed, tab)
    resolved = [inputs.resolve(ref) for ref in parsed.tables]
    inputs.check_inputs(resolved)
    connection = qem.single_source(resolved)
    if connection:
        raise _remote_refusal(connection)
    kind = parsed.kind
    prefix = "EXPLAIN (ANALYZE, FORMAT JSON) " if analyze else "EXPLAIN (FORMAT JSON) "

    def work(cur: Cursor) -> str:
        rows = cur.execute(prefix + select_body(parsed.body, kind)).fetchall()
        return str(rows[0][1]) if rows else ""

    try:
        text = engine.run(work, statement=parsed.body)
    except QueryError as exc:
        exc.position = map_position(parsed, exc.position, wrapped_prefix(prefix, kind))
        raise
    plan = parse_plan(text, analyzed=analyze)
    plan.sql = parsed.body
    return plan
