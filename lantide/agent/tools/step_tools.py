"""``find_similar_steps``: the workspace's earlier query steps most like a question.

Offered once there is a past step to find (a new workspace pays no schema tokens for it);
the Context Summary says how many there are. Nothing is put into the prompt unasked.
"""

from __future__ import annotations

import logging
from typing import NotRequired, TypedDict

from lantide.agent.step_index import MAX_LIMIT, SQL_CHARS_RETURNED, StepIndex, step_index_for
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import Tool, ToolError, params, tool_error

log = logging.getLogger(__name__)


class FindArgs(TypedDict):
    query: str
    limit: NotRequired[int]


class SimilarStep(TypedDict):
    """A past step as ``find_similar_steps`` shows it (its SQL cut to a length)."""

    conversation_id: str
    step_id: str
    at: str | None
    purpose: str | None
    summary: str | None
    evidence: str | None
    row_count: int | None
    tables: list[str]
    sql: str
    sql_truncated: NotRequired[bool]
    summary_corrected: NotRequired[bool]


class SimilarSteps(TypedDict):
    query: str
    steps: list[SimilarStep]
    note: str


def step_index(ctx: ToolContext) -> StepIndex:
    return step_index_for(ctx.workspace.lantide_dir, ctx.workspace.ledger_dir)


def _tables(sql: str) -> list[str]:
    from lantide.query import guard

    try:
        return sorted({".".join(t.parts) for t in guard.check(sql).tables})
    except Exception:  # a step's SQL from an older version may not parse now
        return []


def find_similar_steps(ctx: ToolContext, args: FindArgs) -> SimilarSteps | ToolError:
    from lantide.agent.ledger import Ledger, StepNotFoundError

    query = args["query"].strip()
    if not query:
        return tool_error(
            "BAD_ARGUMENTS", "query is empty", "Describe the question or the numbers you are after."
        )
    hits = step_index(ctx).search(query, args.get("limit", 5))
    steps: list[SimilarStep] = []
    for hit in hits:
        try:
            step = Ledger(ctx.workspace.ledger_dir, hit["conversation_id"]).step(hit["step_id"])
        except StepNotFoundError:  # changed since the index last caught up
            continue
        sql = step.get("sql") or ""
        found: SimilarStep = {
            "conversation_id": hit["conversation_id"],
            "step_id": hit["step_id"],
            "at": step.get("at"),
            "purpose": step.get("purpose"),
            "summary": step.get("summary"),
            "evidence": step.get("evidence"),
            "row_count": step.get("row_count"),
            "tables": _tables(sql),
            "sql": sql[:SQL_CHARS_RETURNED],
        }
        if len(sql) > SQL_CHARS_RETURNED:
            found["sql_truncated"] = True
        if step.get("summary_status") == "patched":
            found["summary_corrected"] = True
        steps.append(found)
    return {
        "query": query,
        "steps": steps,
        "note": "Past steps of this workspace, best match first; their numbers are "
        "from when they ran: run the query again before stating a number.",
    }


def past_step_count(ctx: ToolContext) -> int:
    """Query steps in the workspace's other conversations (0 when the index cannot be
    read or written: then there is no tool either)."""
    try:
        return step_index(ctx).count(excluding=ctx.ledger.conversation_id)
    except Exception as exc:  # a cache must not stop a turn
        log.warning("past steps not counted: %s", exc)
        return 0


def has_past_steps(ctx: ToolContext) -> bool:
    """Offered when another conversation has a ledger (cheap: the registry asks at every
    call); the Context Summary's count is the exact figure."""
    try:
        return step_index(ctx).has_ledgers(excluding=ctx.ledger.conversation_id)
    except OSError:
        return False


TOOLS = [
    Tool(
        "find_similar_steps",
        params(
            {
                "query": {"type": "string", "minLength": 1, "maxLength": 500},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
            },
            ("query",),
        ),
        find_similar_steps,
        available=has_past_steps,
        on_demand=frozenset({"limit"}),
    ),
]
