"""``read_step``: a ledger step, and a page of its rows that fits the context window.

``read_step(step_id)`` gives the step as the ledger keeps it. With ``offset`` or ``rows`` it
also gives rows, from the step's cached table while that table is still the step's, else
by running the step's SQL again (gated like any statement an agent runs, and checked for
drift: a row count far from the one recorded is ``ROW_COUNT_DRIFT``, as ``lantide sql``
says it). In the agent's loop the page is cut to what the next request has room for
(``ToolContext.room_tokens``, computed by the loop with :func:`lantide.tokens.count_tokens`
from the request as it will be sent): the rows from ``offset`` that fit, at least one
whenever one can, with ``next_offset`` for the next page. At a 4,096-token window this is
how a model reads a 200-row result, a few rows at a time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import ToolError, tool_error
from lantide.tokens import count_tokens

if TYPE_CHECKING:
    from lantide.agent.ledger_types import LedgerStep

# what the ledger keeps for ``lantide report check`` only: up to a thousand numbers (thousands
# of tokens) the model has as rows already; sent, they left a wide step too big to be cut to
# its first rows in a small window
LEDGER_ONLY_FIELDS = ("result_values", "result_values_cut", "result_cells", "result_cells_cut")
# the step's fields kept beside a page when the whole step leaves too little room for rows
BRIEF_STEP_FIELDS = ("step_id", "purpose", "row_count", "cached_table_name", "materialized")
SQL_PREVIEW_CHARS = 200
# a step's SQL run again returns its first offset + rows rows (the engine has no cheaper
# way to skip rows of a statement): past this, page through a cached table instead
MAX_RERUN_ROWS = 10_000


class ReadStepArgs(TypedDict):
    step_id: str
    offset: NotRequired[int]
    rows: NotRequired[int]


def result_tokens(result: Mapping[str, object]) -> int:
    """Tokens of a tool result as the loop sends it (compact JSON, characters unescaped)."""
    return count_tokens(json.dumps(result, ensure_ascii=False, default=str, separators=(",", ":")))


def step_rows(
    ctx: ToolContext, step: LedgerStep, offset: int, rows: int
) -> dict[str, Any] | ToolError:
    """``rows`` rows of a ledger step from ``offset``: from its cached table while that
    table is still the step's, else by running the step's SQL again with a limit."""
    from lantide.agent.services import AgentQuery
    from lantide.agent.tools.query_tools import _run_guarded, advised
    from lantide.query.checks.rules import row_count_drift
    from lantide.query.results import json_rows
    from lantide.query.runner import drift_factor

    table = str(step.get("cached_table_name") or "")
    service = ctx.services.query()
    cached = service.catalog.cached(table) if table and step.get("materialized") else None
    if cached is not None and cached.step_id == step.get("step_id"):

        def read(q: AgentQuery) -> dict[str, Any]:
            info = q.relation_info(table)
            return {
                "columns": info["columns"],
                "row_count": info["row_count"],
                "rows": json_rows(q.fetch_rows(table, offset, rows)),
                "from": f'the cached table "{table}"',
            }

        return _run_guarded(ctx, read)
    sql = step.get("sql")
    if not sql:
        return tool_error(
            "NO_SQL",
            f"step {step.get('step_id')} has no SQL to run again",
            "Run the query again with run_query.",
        )
    refusal = ctx.statistics_refusal(sql)  # run again, it is computed again
    if refusal is not None:
        return refusal
    if offset + rows > MAX_RERUN_ROWS:
        return tool_error(
            "OFFSET_TOO_FAR",
            f"step {step.get('step_id')} has no cached table, and reading rows from offset "
            f"{offset:,} would run its SQL for its first {offset + rows:,} rows",
            f"Page within its first {MAX_RERUN_ROWS:,} rows, aggregate with SQL, or run it "
            "again with result_label (a cached table pages at any offset).",
        )
    preview = _run_guarded(ctx, lambda q: q.preview_sql(sql, offset + rows))
    out = {
        **preview,
        "rows": preview["rows"][offset:],
        "from": "the step's SQL, run again now (the data may have changed since)",
    }
    recorded, now = step.get("row_count"), out.get("row_count")
    if isinstance(recorded, int) and isinstance(now, int):
        drift = row_count_drift(recorded, now, drift_factor(ctx.settings.query))
        if drift:
            out["checks"] = advised(drift)
    return out


def _page_note(offset: int, shown: int, total: Any, room: int | None) -> str:
    end = offset + shown
    left = isinstance(total, int) and end < total
    fit = f" (what fits the {room:,} tokens left in the context window)" if room else ""
    if not shown:
        return f"no rows from offset {offset}{fit}"
    more = f"; read_step with offset {end} gives the next page" if left else ""
    return f"rows {offset + 1}-{end} of {total}{fit}{more}"


BRIEF, TINY = 1, 2  # how far a page sheds the step's fields to make room for rows


def fit_page(out: dict[str, Any], room: int | None) -> dict[str, Any]:
    """``out`` (``{"step", "rows"}``) cut to ``room`` tokens: the whole step with as many of
    the page's rows as fit; when that leaves no room for a row, a brief step (then only the
    step's id, the column names and the offsets) with as many as fit: one at least whenever
    one can. When not even that fits, the tiniest form with no row and its offset."""
    page = out["rows"]
    rows = list(page.get("rows") or [])
    offset = int(page.get("offset") or 0)
    total = page.get("row_count")

    def build(n: int, level: int) -> dict[str, Any]:
        step = out["step"]
        shown = {**page, "rows": rows[:n]}
        if level:
            step = {k: step[k] for k in BRIEF_STEP_FIELDS if step.get(k) is not None}
            if out["step"].get("sql") and level < TINY:
                step["sql_preview"] = str(out["step"]["sql"])[:SQL_PREVIEW_CHARS]
            if isinstance(page.get("columns"), list):
                shown["columns"] = [
                    c.get("name") if isinstance(c, dict) else c for c in page["columns"]
                ]
        checks = [c for c in page.get("checks") or [] if isinstance(c, dict)]
        if level and checks:  # a drift is news at any size: its code and sentence stay
            shown["checks"] = [{k: c.get(k) for k in ("code", "message")} for c in checks]
        if level == TINY:
            step = {"step_id": step.get("step_id")}
            keep = ("columns", "rows", "row_count", "checks")
            shown = {k: shown[k] for k in keep if k in shown}
            shown["offset"] = offset
        if isinstance(total, int) and offset + n < total:
            shown["next_offset"] = offset + n
        else:
            shown.pop("next_offset", None)
        if level < TINY and (n < len(rows) or room is not None):
            shown["note"] = _page_note(offset, n, total, room if n < len(rows) else None)
        return {"step": step, "rows": shown}

    if room is None or result_tokens(build(len(rows), 0)) <= room:
        return build(len(rows), 0)
    for level in (0, BRIEF, TINY):
        if result_tokens(build(0, level)) > room:
            continue
        low, high = 0, len(rows)
        while low < high:  # the most rows that fit
            mid = (low + high + 1) // 2
            if result_tokens(build(mid, level)) <= room:
                low = mid
            else:
                high = mid - 1
        if low > 0 or not rows:
            return build(low, level)
    return build(0, TINY)


def read_step(ctx: ToolContext, args: ReadStepArgs) -> Mapping[str, object]:
    step = ctx.ledger.step(args["step_id"])
    full = {k: v for k, v in step.items() if k not in LEDGER_ONLY_FIELDS}
    if not args.get("rows") and args.get("offset") is None:
        return {"step": full}
    offset = max(0, int(args.get("offset") or 0))
    cap = ctx.settings.query.preview_rows
    rows = step_rows(ctx, step, offset, min(int(args.get("rows") or cap), cap))
    if "error" in rows:  # a ToolError
        return rows
    return fit_page({"step": full, "rows": {**rows, "offset": offset}}, ctx.room_tokens)
