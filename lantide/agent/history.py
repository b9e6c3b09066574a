"""History by meaning, not by count, and compaction within a turn.

Across turns (:func:`fit_history`): the current turn is kept whole; earlier turns are kept
newest first while they fit, the latest one in full when possible and older ones with
their tool results compacted (their steps stay in the ledger and Recent Query Steps, and
``read_step`` fetches one); a tool call always travels with its result; the key events
of turns that no longer fit (a project focus, a status change, a question and its answer,
analysis consent) are kept as a short note.

Within a turn (:func:`compact_turn`): when the request nears the context window, earlier
tool results are replaced by their compact form, oldest first, never the results the
model has not answered yet. A compacted query result keeps ``step_id``,
``cached_table_name``, ``materialized``, ``materialize_reason``, ``warnings`` and a
``sql_preview`` (first 200 characters); any other result keeps its error or a short prefix.
Compaction changes what is sent, never the conversation file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lantide.tokens import count_tokens

SQL_PREVIEW_CHARS = 200
GENERIC_KEEP_CHARS = 300
MESSAGE_OVERHEAD_TOKENS = 4
QUERY_TOOLS = ("run_query", "run_sql_tab", "source_run_sql_tab")


def _dumps(value: Any) -> str:
    """Compact JSON, as the loop sends tool results (the SDK's own separators)."""
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


@lru_cache(maxsize=8192)
def _tokens(text: str) -> int:
    return count_tokens(text)


def message_tokens(message: dict[str, Any]) -> int:
    n = MESSAGE_OVERHEAD_TOKENS + _tokens(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        n += _tokens(fn.get("name", "")) + _tokens(fn.get("arguments", "")) + 3
    return n


def messages_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(message_tokens(m) for m in messages)


@dataclass
class Turn:
    number: int
    messages: list[dict[str, Any]] = field(default_factory=list)


def group_turns(records: list[dict[str, Any]]) -> list[Turn]:
    """Conversation message records grouped by turn, in order."""
    turns: dict[int, Turn] = {}
    for record in records:
        n = int(record.get("turn") or 0)
        turns.setdefault(n, Turn(n)).messages.append(record["message"])
    return [turns[n] for n in sorted(turns)]


def _call_index(messages: list[dict[str, Any]]) -> dict[str, tuple[str, dict]]:
    """tool_call_id -> (tool name, parsed arguments)."""
    out = {}
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {}
            out[call.get("id")] = (fn.get("name", ""), args if isinstance(args, dict) else {})
    return out


def compact_result(content: str, tool: str, args: dict[str, Any]) -> str:
    """The compact form of one tool result (see the module docstring)."""
    try:
        result = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        result = None
    if not isinstance(result, dict):
        return _dumps({"compacted": True, "excerpt": str(content)[:GENERIC_KEEP_CHARS]})
    if result.get("compacted"):
        return content
    if "error" in result:
        keep = {k: result[k] for k in ("error", "message", "hint") if k in result}
        return _dumps({"compacted": True, **keep})
    if tool in QUERY_TOOLS or "step_id" in result:
        sql = args.get("sql") or result.get("sql") or ""
        out = {
            "compacted": True,
            "step_id": result.get("step_id"),
            "cached_table_name": result.get("cached_table_name"),
            "materialized": result.get("materialized"),
            # the code, as in the ledger step (the result also carries a sentence)
            "materialize_reason": result.get("reason_code", result.get("materialize_reason")),
            "warnings": result.get("warnings") or [],
            "sql_preview": sql[:SQL_PREVIEW_CHARS],
        }
        if "row_count" in result:
            out["row_count"] = result["row_count"]
        if tool != "run_query" and args.get("tab"):
            out["tab"] = args["tab"]
        out["note"] = "preview dropped; read_step or the cached table has the rest"
        return _dumps(out)
    text = _dumps(result)
    return _dumps({"compacted": True, "excerpt": text[:GENERIC_KEEP_CHARS],
                   "note": "call the tool again for the full result"})


def _short_arguments(arguments: str) -> str:
    """Tool-call arguments with long strings cut (still valid JSON); the ledger keeps the SQL."""
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return arguments[:SQL_PREVIEW_CHARS]
    if not isinstance(args, dict):
        return arguments
    short = {k: (v[:SQL_PREVIEW_CHARS] + " …[cut]" if isinstance(v, str)
                 and len(v) > SQL_PREVIEW_CHARS + 40 else v) for k, v in args.items()}
    return _dumps(short)


def compacted_messages(messages: list[dict[str, Any]], call_ids: set[str] | None = None
                       ) -> list[dict[str, Any]]:
    """``messages`` with the tool results of ``call_ids`` compacted; with None (an earlier
    turn) every result, and long tool-call arguments are cut too."""
    index = _call_index(messages)
    out = []
    for msg in messages:
        cid = msg.get("tool_call_id")
        if msg.get("role") == "tool" and (call_ids is None or cid in call_ids):
            tool, args = index.get(cid, ("", {}))
            msg = {**msg, "content": compact_result(msg.get("content") or "", tool, args)}
        elif call_ids is None and msg.get("tool_calls"):
            msg = {**msg, "tool_calls": [
                {**c, "function": {**c["function"],
                                   "arguments": _short_arguments(c["function"].get("arguments", ""))}}
                for c in msg["tool_calls"]]}
        out.append(msg)
    return out


@dataclass
class FittedHistory:
    messages: list[dict[str, Any]]
    dropped_turns: list[int]
    compacted_turns: list[int]
    tokens: int


def fit_history(previous: list[Turn], budget: int) -> FittedHistory:
    """Earlier turns that fit in ``budget`` tokens, newest first (see module docstring)."""
    kept: list[list[dict[str, Any]]] = []
    dropped, compacted = [], []
    used = 0
    for position, turn in enumerate(reversed(previous)):
        full = turn.messages
        options = [full] if position == 0 else []
        options.append(compacted_messages(full))
        chosen = None
        for option in options:
            size = messages_tokens(option)
            if used + size <= budget:
                chosen, used = option, used + size
                break
        if chosen is None:
            dropped = [t.number for t in previous[: len(previous) - position]]
            break
        if chosen is not full:
            compacted.append(turn.number)
        kept.append(chosen)
    messages = [m for turn_messages in reversed(kept) for m in turn_messages]
    return FittedHistory(messages, dropped, sorted(compacted), used)


def describe_key_event(event: dict[str, Any]) -> str | None:
    """One line for the history note, or None for bookkeeping events."""
    kind = event.get("kind")
    turn = event.get("turn")
    if kind == "project_focused":
        return f"turn {turn}: focused project {event.get('project')}"
    if kind == "project_created":
        return f"turn {turn}: created project {event.get('project')}"
    if kind == "status_changed":
        return (f"turn {turn}: project {event.get('project')} status {event.get('old')} → "
                f"{event.get('new')}")
    if kind == "analysis_activated":
        return f"turn {turn}: statistical analysis approved ({event.get('reason')})"
    if kind == "question_answered":
        return (f"turn {turn}: you asked \"{str(event.get('question'))[:160]}\"; the analyst "
                f"answered \"{str(event.get('answer'))[:160]}\"")
    return None


@dataclass
class TurnCompaction:
    """Which tool results of the current turn are compacted; sticky for the whole turn, so
    the start of the request stays the same from one iteration to the next."""

    compacted_ids: set[str] = field(default_factory=set)

    def apply(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return compacted_messages(messages, self.compacted_ids) if self.compacted_ids else messages


def compact_turn(turn_messages: list[dict[str, Any]], state: TurnCompaction,
                 excess_tokens: int) -> int:
    """Compact tool results of the turn, oldest first, until ``excess_tokens`` are saved;
    returns how many were compacted. Results the model has not read yet (after the last
    assistant message) are compacted only when the older ones did not save enough."""
    last_assistant = max((i for i, m in enumerate(turn_messages) if m.get("role") == "assistant"),
                         default=-1)
    index = _call_index(turn_messages)
    candidates = [i for i, m in enumerate(turn_messages)
                  if m.get("role") == "tool" and m.get("tool_call_id") not in state.compacted_ids]
    ordered = [i for i in candidates if i < last_assistant] + \
              [i for i in candidates if i > last_assistant]
    saved, n = 0, 0
    for i in ordered:
        if saved >= excess_tokens:
            break
        msg = turn_messages[i]
        cid = msg.get("tool_call_id")
        tool, args = index.get(cid, ("", {}))
        before = message_tokens(msg)
        after = MESSAGE_OVERHEAD_TOKENS + _tokens(compact_result(msg.get("content") or "", tool, args))
        state.compacted_ids.add(cid)
        saved += max(0, before - after)
        n += 1
    return n
