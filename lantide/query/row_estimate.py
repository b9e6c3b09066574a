"""How many rows a remote statement will copy: the engine's own EXPLAIN first, its COUNT
only where that is not clearly small (QEM rule 6, ``query.large_remote_rows``).

- PostgreSQL: ``EXPLAIN (FORMAT JSON)``, the top plan node's ``"Plan Rows"`` (a LIMIT
  is in it).
- MariaDB and MySQL: ``EXPLAIN FORMAT=JSON``, the product of the top query block's tables'
  ``rows`` times ``filtered`` (a union: the sum of its parts). It ignores LIMIT and
  GROUP BY: an estimate too high, which only costs the COUNT.
- Any other engine (SQL Server, ...): no estimate; the COUNT runs as before.

An estimate only spares the COUNT when it is at least :data:`MARGIN` times below the limit
(:func:`clearly_small`). Estimates can be wrong both ways (a recursive CTE, an expression
the planner guesses at), so the copy itself stops once more than the limit has arrived
without consent (:class:`RowCap`, applied by :func:`lantide.query.staging.stage`) and
answers the same ``warning_required`` as the COUNT would have.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lantide.query.errors import QueryError

if TYPE_CHECKING:
    from lantide.query.remote_consent import LargeRemoteWarning

MARGIN = 10  # an estimate this many times under the limit is trusted: no COUNT

# dialect -> the EXPLAIN that answers one JSON document
_EXPLAIN = {
    "postgres": "EXPLAIN (FORMAT JSON) {sql}",
    "mysql": "EXPLAIN FORMAT=JSON {sql}",
}
# MariaDB's wrappers around a query block's tables (sorting, grouping, DISTINCT)
_MYSQL_WRAPPERS = (
    "filesort",
    "temporary_table",
    "duplicates_removal",
    "read_sorted_file",
    "window_functions_computation",
    "grouping_operation",
    "ordering_operation",
)


def explain_sql(dialect: str, remote_sql: str) -> str | None:
    """The EXPLAIN statement whose answer :func:`read_estimate` reads; None where the
    dialect has none Lantide reads."""
    template = _EXPLAIN.get(dialect)
    return template.format(sql=remote_sql) if template else None


def read_estimate(dialect: str, rows: Sequence[Sequence[Any]]) -> int | None:
    """The row estimate in the EXPLAIN's answer; None when it is not in a form read here
    (then the COUNT decides)."""
    if not rows or not rows[0]:
        return None
    text = "".join(str(r[0]) for r in rows if r and r[0] is not None)
    try:
        document = json.loads(text)
    except ValueError:
        return None
    try:
        if dialect == "postgres":
            value: float | None = float(document[0]["Plan"]["Plan Rows"])
        else:
            value = _mysql_block_rows(document["query_block"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if value is None or math.isnan(value) or value < 0:
        return None
    return int(math.ceil(value)) if not math.isinf(value) else None


def clearly_small(estimate: int | None, limit: int) -> bool:
    """Whether the estimate alone says the result is under the limit (no COUNT needed)."""
    return estimate is not None and estimate * MARGIN <= limit


class RowsOverLimit(QueryError):
    """Raised inside a capped copy when more rows arrived than the limit allows; the
    staging turns it into :class:`~lantide.query.errors.LargeRemoteResult` once its
    transaction is rolled back."""

    code = "LARGE_REMOTE_RESULT"

    def __init__(self, rows: int, limit: int) -> None:
        super().__init__(f"{rows:,} rows arrived, more than the limit of {limit:,}")
        self.rows = rows


@dataclass(frozen=True)
class RowCap:
    """The copy of a statement nobody consented to stage large: at most ``limit`` rows;
    ``warn(rows)`` issues the ``warning_required`` answer when more arrive."""

    limit: int
    warn: Callable[[int], LargeRemoteWarning]


def _mysql_block_rows(block: dict[str, Any]) -> float | None:
    union = block.get("union_result")
    if isinstance(union, dict):
        parts = [_mysql_block_rows(s["query_block"]) for s in union["query_specifications"]]
        return None if any(p is None for p in parts) else sum(p or 0.0 for p in parts)
    tables = _mysql_tables(block)
    if tables is None:
        return None
    rows = 1.0
    for table in tables:
        message = str(table.get("message") or "")
        if "impossible" in message.lower() or "no matching" in message.lower():
            return 0.0
        if message:
            if "no tables used" in message.lower():
                continue
            return None  # a plan not read here
        scanned = table.get("rows", table.get("rows_examined_per_scan"))
        if scanned is None:
            return None
        rows *= float(scanned) * float(table.get("filtered", 100)) / 100.0
    return rows


def _mysql_tables(block: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The tables joined in one query block (not those of its subqueries or derived
    tables, whose rows the outer table's own estimate stands for)."""
    for key in _MYSQL_WRAPPERS:
        inner = block.get(key)
        if isinstance(inner, dict):
            return _mysql_tables(inner)
    if isinstance(block.get("table"), dict):
        return [block["table"]]
    loop = block.get("nested_loop")
    if not isinstance(loop, list):
        return None
    out: list[dict[str, Any]] = []
    for step in loop:
        if not isinstance(step, dict):
            return None
        if isinstance(step.get("table"), dict):
            out.append(step["table"])
            continue
        joined = next((v for v in step.values() if isinstance(v, dict) and "table" in v), None)
        if joined is None or not isinstance(joined["table"], dict):
            return None  # a join kind not read here
        out.append(joined["table"])
    return out
