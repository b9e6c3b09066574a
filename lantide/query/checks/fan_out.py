"""``JOIN_FAN_OUT`` and ``TOTAL_EXCEEDS_SOURCE``: a join that repeats the rows being
counted or summed, measured on the actual inputs.

For a side S of a join scope: starting from S, every join to a source whose key is unique
on its own side (measured: distinct keys = rows with a key) adds exactly one row per row
of S. The sources reached that way are *determined*. A join from a determined source to
one whose key is not unique repeats the rows of S (as many times as that key's most
frequent value has rows). S is repeated when such a join exists; a count or sum that reads
only repeated sides is distorted and fires. A sum that also reads a side that is not
repeated (``sum(o.quantity * p.price)`` over orders joined to products) is computed per
row of that side and is fine.

Key uniqueness of a derived table is known from its SQL when it groups by (or selects
DISTINCT) the join keys, and measured on its result otherwise. A key that is not unique
in the whole table is measured again on the rows the statement keeps of it, when a
condition reads that side alone (``JOIN prices p ON … AND p.current``). A key that cannot be
measured (an external table, an expression) is left alone: the check says nothing rather
than guess, and ``TOTAL_EXCEEDS_SOURCE`` (a direct comparison of totals) still runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from lantide.query.checks.facts import KeyFacts, Relation

if TYPE_CHECKING:
    from sqlglot import exp
    from sqlglot.optimizer.scope import Scope

    from lantide.query.checks.facts import RelationFacts
    from lantide.query.checks.result_stats import ResultFacts
    from lantide.query.checks.rules import Check
    from lantide.query.checks.statement import Edge, JoinScope, Statement
    from lantide.query.engine import Cursor

# A join that repeats a side's rows: (the edge, the alias across it, that side's key facts).
RepeatingJoin = tuple["Edge", str, KeyFacts]


class FanOutJoin(TypedDict):
    """One join of a JOIN_FAN_OUT check's evidence: the side that repeats rows, by its key."""

    join: str  # "a JOIN b ON ..."
    by: str
    by_name: str
    key: list[str]
    key_rows: int
    distinct_keys: int
    max_repeat: int


@dataclass
class Repetition:
    """Why the rows of one side are repeated: the joins that repeat them."""

    side: str
    joins: list[RepeatingJoin] = field(default_factory=list)
    unknown: bool = False  # a join whose key could not be measured

    @property
    def repeated(self) -> bool:
        return bool(self.joins)


def _label(js: JoinScope, alias: str) -> str:
    return js.sources[alias].label


class FanOutAnalysis:
    def __init__(
        self,
        cur: Cursor,
        facts: RelationFacts,
        statement: Statement,
        relation_of: Callable[[exp.Table], Relation | None],
    ) -> None:
        """``relation_of(table_node)``: the :class:`Relation` of a base table, or None."""
        self.cur, self.facts, self.statement = cur, facts, statement
        self.relation_of = relation_of
        self._repetitions: dict[tuple[int, str], Repetition] = {}  # (scope, side)
        # (scope, alias, key names, with_max) -> facts
        self._unique: dict[tuple[int, str, tuple[str, ...], bool], KeyFacts | None] = {}

    # -- measuring --------------------------------------------------------------------
    def _relation(self, js: JoinScope, alias: str) -> Relation | None:
        src = js.sources[alias]
        if src.table is not None:
            return self.relation_of(src.table)
        if src.scope is None:
            return None
        sql: str = src.scope.expression.sql("duckdb")
        found = [self.relation_of(t) for t in _base_tables(src.scope)]
        versions = [v for v in found if v is not None]
        if len(versions) != len(found):
            return None
        version = hashlib.sha256("|".join(v.version for v in versions).encode()).hexdigest()[:16]
        subject = (
            "derived:" + hashlib.sha256((self.statement.with_sql + sql).encode()).hexdigest()[:20]
        )
        return Relation(subject, f"({sql})", version, self.statement.with_sql)

    def key_facts(
        self, js: JoinScope, alias: str, keys: list[exp.Column], *, with_max: bool = False
    ) -> KeyFacts | None:
        names = [k.name for k in keys]
        memo = (js.key, alias, tuple(names), with_max)
        if memo in self._unique:
            return self._unique[memo]
        found: KeyFacts | None = None
        src = js.sources[alias]
        if src.scope is not None and not with_max and _grouped_by(src.scope.expression, names):
            found = KeyFacts(1, 1, 1)  # grouped by (or DISTINCT on) the join keys
        else:
            rel = self._relation(js, alias)
            if rel is not None:
                found = self.facts.keys(self.cur, rel, names, with_max=with_max)
                filters = js.filters.get(alias)
                if found is not None and not found.unique and filters:
                    # measured again on the rows the statement keeps of that side
                    where = " AND ".join(f"({f})" for f in filters)
                    digest = hashlib.sha256(where.encode()).hexdigest()[:12]
                    kept = Relation(
                        f"{rel.subject}|where:{digest}",
                        f"(SELECT * FROM {rel.sql} WHERE {where})",
                        rel.version,
                        rel.prefix,
                    )
                    found = self.facts.keys(self.cur, kept, names, with_max=with_max)
        self._unique[memo] = found
        return found

    # -- deciding ---------------------------------------------------------------------
    def repetition(self, js: JoinScope, side: str) -> Repetition:
        memo = (js.key, side)
        if memo in self._repetitions:
            return self._repetitions[memo]
        determined = {side}
        out = Repetition(side)
        changed = True
        crossing: list[tuple[Edge, str, KeyFacts | None]] = []
        while changed:
            changed = False
            crossing = []
            for edge in js.edges:
                if (edge.left in determined) == (edge.right in determined):
                    continue
                near = edge.left if edge.left in determined else edge.right
                far = edge.other(near)
                facts = self.key_facts(js, far, edge.keys_of(far))
                if facts is not None and facts.unique:
                    determined.add(far)
                    changed = True
                    break
                crossing.append((edge, far, facts))
        for edge, far, facts in crossing:
            if facts is None:
                out.unknown = True
            else:
                out.joins.append((edge, far, facts))
        self._repetitions[memo] = out
        return out

    def fan_out_checks(self) -> list[Check]:
        checks: list[Check] = []
        for js in self.statement.join_scopes:
            fired: dict[str, list[str]] = {}  # side -> the aggregates it distorts
            for additive in js.additives:
                aliases = {alias for scope_key, alias in additive.sides if scope_key == js.key}
                if not aliases:
                    continue
                # all(): stop measuring at the first side that is not repeated
                if all(self.repetition(js, a).repeated for a in sorted(aliases)):
                    for r in (self.repetition(js, a) for a in sorted(aliases)):
                        fired.setdefault(r.side, []).append(additive.text)
            for side, aggregates in fired.items():
                checks.append(self._fan_out_check(js, self.repetition(js, side), aggregates))
        return checks

    def total_checks(self, result_facts: ResultFacts | None) -> list[Check]:
        checks: list[Check] = []
        if result_facts is None or not result_facts.complete:
            return checks
        by_key = {js.key: js for js in self.statement.join_scopes}
        for out in self.statement.sum_outputs:
            js = by_key.get(out.scope_key)
            if js is None:
                continue
            rep = self.repetition(js, out.alias)
            if not (rep.repeated or rep.unknown):
                continue  # every join keeps one row per row of the summed table
            rel = self.relation_of(out.table)
            column = (
                result_facts.columns[out.column] if out.column < len(result_facts.columns) else None
            )
            if rel is None or column is None or column.total is None:
                continue
            base_total, base_min = self.facts.total(self.cur, rel, out.expression)
            if base_total is None or base_min is None or base_min < 0:
                continue  # with negative values a subset can sum higher: no proof
            if column.total > base_total * (1 + 1e-9) + 1e-9:
                checks.append(
                    {
                        "code": "TOTAL_EXCEEDS_SOURCE",
                        "severity": "error",
                        "message": (
                            f"{out.output_name} totals {column.total:,.2f} over the result, "
                            f"more than the {base_total:,.2f} of {out.expression} in "
                            f"{js.sources[out.alias].name} itself: the join counts some of "
                            f"its rows more than once"
                        ),
                        "evidence": {
                            "column": out.output_name,
                            "result_total": column.total,
                            "source": _label(js, out.alias),
                            "source_total": base_total,
                            "ratio": round(column.total / base_total, 3) if base_total else None,
                        },
                    }
                )
        return checks

    def _fan_out_check(self, js: JoinScope, rep: Repetition, aggregates: list[str]) -> Check:
        joins: list[FanOutJoin] = []
        bound = 1
        for edge, far, facts in rep.joins:
            far_keys = edge.keys_of(far)
            # how many times at most: grouped only now that the check fires
            facts = self.key_facts(js, far, far_keys, with_max=True) or facts
            times = facts.max_repeat or 0
            bound *= max(times, 1)
            joins.append(
                {
                    "join": f"{_label(js, edge.left)} {edge.kind} {_label(js, edge.right)} "
                    f"ON {edge.condition()}",
                    "by": _label(js, far),
                    "by_name": js.sources[far].name,
                    "key": [k.name for k in far_keys],
                    "key_rows": facts.non_null,
                    "distinct_keys": facts.distinct,
                    "max_repeat": times,
                }
            )
        first = joins[0]
        side = js.sources[rep.side].name
        far = first["by_name"] if "by_name" in first else first["by"]
        verb = "sums" if all(a.lower().startswith(("sum", "avg")) for a in aggregates) else "counts"
        return {
            "code": "JOIN_FAN_OUT",
            "severity": "error",
            "message": (
                f"{', '.join(aggregates)} {verb} rows of {side}, but the join with "
                f"{far} repeats them: {far}.{', '.join(first['key'])} has "
                f"{first['distinct_keys']:,} distinct values for {first['key_rows']:,} "
                f"rows, so one row of {side} appears up to {bound:,} times"
            ),
            "evidence": {
                "repeated_side": _label(js, rep.side),
                "aggregates": aggregates,
                "joins": joins,
                "max_repeat": bound,
            },
        }


def _grouped_by(select: exp.Expr, key_names: list[str]) -> bool:
    """The derived table has one row per value of ``key_names`` by construction."""
    from sqlglot import exp

    if not isinstance(select, exp.Select):
        return False
    outputs = {
        p.alias_or_name: p.unwrap() if hasattr(p, "unwrap") else p for p in select.expressions
    }
    key_sql = {_plain(outputs[k]) for k in key_names if k in outputs}
    group = select.args.get("group")
    if group is not None and group.expressions:
        wanted: set[str] = set()
        for g in group.expressions:
            if isinstance(g, exp.Literal) and g.is_int:  # GROUP BY 1
                idx = int(g.this) - 1
                if 0 <= idx < len(select.expressions):
                    wanted.add(_plain(select.expressions[idx]))
                continue
            wanted.add(_plain(g))
        return bool(wanted) and wanted <= key_sql
    if select.args.get("distinct"):
        return {_plain(p) for p in select.expressions} <= key_sql
    has_agg = any(
        isinstance(a, exp.AggFunc) for p in select.expressions for a in p.find_all(exp.AggFunc)
    )
    return has_agg and group is None  # one row in all


def _plain(node: exp.Expr) -> str:
    from sqlglot import exp

    if isinstance(node, exp.Alias):
        node = node.this
    sql: str = node.sql("duckdb")
    return sql


def _base_tables(scope: Scope) -> list[exp.Table]:
    from sqlglot import exp

    out = []
    for inner in scope.traverse():
        for value in inner.sources.values():
            if isinstance(value, exp.Table):
                out.append(value)
    return out
