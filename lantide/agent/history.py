"""History by meaning, not by count, and compaction within a turn.

Across turns (:func:`fit_history`): the current turn is kept whole; earlier turns are kept
newest first while they fit, without the step-line reminders their results carried
(:func:`without_reminders`), the latest one in full when possible and older ones with
their tool results compacted (their steps stay in the ledger and Recent Query Steps, and
``read_step`` fetches one); a tool call always travels with its result; the key events
of turns that no longer fit (a project focus, a status change, a question and its answer,
analysis consent) are kept as a short note.

Within a turn, older material gives way first: earlier turns get only what the current
turn leaves (:func:`fit_history`); when the current turn itself nears the context window,
the results the model already answered from are replaced by their compact form, oldest
first (:func:`compact_turn`). A result the model has not read yet is never replaced by a
stub: when it does not fit, it is cut to its first preview rows that fit
(:func:`shrink_unread`), saying so and where the rest is (``read_step`` with ``offset``
pages on); its other fields give way before its first row does (:func:`first_page`), and
of several unread results the newest keeps room for its first row. A compacted query
result keeps ``step_id``, ``cached_table_name``, ``materialized``, ``materialize_reason``,
``warnings`` and a ``sql_preview`` (first 200 characters), and points at what really
returns its rows: ``read_step`` with ``offset`` (from its cached table when it was
materialized, else by running the step's SQL again with a limit). Any other result keeps
its error or a short prefix. Compaction changes what is sent, never the conversation file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lantide.agent.message_types import Message, MessageRecord
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


def message_tokens(message: Message) -> int:
    n = MESSAGE_OVERHEAD_TOKENS + _tokens(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        fn = call["function"]
        n += _tokens(fn.get("name", "")) + _tokens(fn.get("arguments", "")) + 3
    return n


def messages_tokens(messages: list[Message]) -> int:
    return sum(message_tokens(m) for m in messages)


@dataclass
class Turn:
    number: int
    messages: list[Message] = field(default_factory=list)


def group_turns(records: list[MessageRecord]) -> list[Turn]:
    """Conversation message records grouped by turn, in order."""
    turns: dict[int, Turn] = {}
    for record in records:
        n = int(record.get("turn") or 0)
        turns.setdefault(n, Turn(n)).messages.append(record["message"])
    return [turns[n] for n in sorted(turns)]


def _call_index(messages: list[Message]) -> dict[str, tuple[str, dict[str, object]]]:
    """tool_call_id -> (tool name, parsed arguments, as the model sent them)."""
    out: dict[str, tuple[str, dict[str, object]]] = {}
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            fn = call["function"]
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {}
            out[call.get("id")] = (fn.get("name", ""), args if isinstance(args, dict) else {})
    return out


def compact_result(content: str, tool: str, args: dict[str, object]) -> str:
    """The compact form of one tool result (see the module docstring), or the result itself
    when that is no longer: a short result sent in a longer "compact" form was waste."""
    compact = _compact_form(content, tool, args)
    try:
        whole = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return compact
    same = _dumps(whole)  # the result as the loop sends it
    return same if isinstance(whole, dict) and len(same) <= len(compact) else compact


def _compact_form(content: str, tool: str, args: dict[str, object]) -> str:
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
        sql = sql if isinstance(sql, str) else str(sql)
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
        checks = [c for c in result.get("checks") or [] if isinstance(c, dict)]
        if checks:  # an error check unresolved keeps the number from being a finding
            out["checks"] = [{k: c.get(k) for k in ("code", "severity", "message")} for c in checks]
        if tool != "run_query" and args.get("tab"):
            out["tab"] = args["tab"]
        out["note"] = "preview dropped; " + where_rows_are(result)
        return _dumps(out)
    text = _dumps(result)
    return _dumps(
        {
            "compacted": True,
            "excerpt": text[:GENERIC_KEEP_CHARS],
            "note": "call the tool again for the full result",
        }
    )


def where_rows_are(result: dict[str, object], offset: int = 0) -> str:
    """Where the rows of a query result can really be read again (from ``offset`` on)."""
    table = result.get("cached_table_name")
    if result.get("step_id"):
        source = (
            f'its cached table "{table}"'
            if result.get("materialized") and table
            else "its SQL run again"
        )
        return (
            f"read_step with step_id {result['step_id']} and offset {offset} returns the "
            f"next page of rows that fits the context window, from {source}"
        )
    if result.get("materialized") and table:
        return f'all its rows are in the cached table "{table}"'
    return "run the query again for its rows"


def _rows_key(result: dict[str, object]) -> tuple[str, list[object]] | None:
    """Where a result keeps its rows: ``preview`` (a query result) or ``rows`` (read_step),
    as a list or as ``{"columns", "rows"}``."""
    for key in ("preview", "rows"):
        value = result.get(key)
        rows = value.get("rows") if isinstance(value, dict) else value
        if isinstance(rows, list):
            return key, rows
    return None


def _largest_fitting(build: Callable[[int], str], high: int, room: int) -> tuple[int, str] | None:
    """(n, ``build(n)``) for the largest n in 0..high whose text fits ``room`` tokens."""
    if _tokens(build(0)) > room:
        return None
    low = 0
    while low < high:
        mid = (low + high + 1) // 2
        if _tokens(build(mid)) <= room:
            low = mid
        else:
            high = mid - 1
    return low, build(low)


# what a result cut to its first rows keeps when its other fields leave no room for a row:
# where the rows come from and what they mean; the sentences (warnings, hints, notes) go
ESSENTIAL_FIELDS = ("step_id", "row_count", "cached_table_name", "materialized", "next")


def first_page(
    result: dict[str, object], key: str, rows: list[object], n: int, tiny: bool = False
) -> dict[str, object]:
    """``result`` with only its first ``n`` rows and the essentials: the column names, the
    step, the checks' codes, and where the other rows are (the page that fits a small
    window, when the whole result's other fields leave no room for a row). ``tiny``: only
    the step's id, the row count, the column names, the rows and where the next are."""
    fields = ("step_id", "row_count") if tiny else ESSENTIAL_FIELDS
    out: dict[str, object] = {k: result[k] for k in fields if result.get(k) is not None}
    value = result[key]
    columns = value.get("columns") if isinstance(value, dict) else result.get("columns")
    if isinstance(columns, list) and (n or not tiny):  # no row, no names needed for it
        out["columns"] = [c.get("name") if isinstance(c, dict) else c for c in columns]
    listed = result.get("checks")
    checks = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    if checks:
        out["checks"] = (
            [c.get("code") for c in checks]
            if tiny
            else [{k: c.get(k) for k in ("code", "severity")} for c in checks]
        )
    out[key] = rows[:n]
    if tiny and result.get("step_id"):
        out["next_offset"] = n  # read_step's offset for the next page
    else:
        out[f"{key}_note"] = _more_rows_note(result, n, len(rows))
    return out


def _more_rows_note(result: dict[str, object], n: int, shown_of: int) -> str:
    total = result.get("row_count") if isinstance(result.get("row_count"), int) else shown_of
    if result.get("step_id"):
        return (
            f"rows 1-{n} of {total}; the rest did not fit the context window: read_step "
            f"with step_id {result['step_id']} and offset {n} returns the next page that fits"
        )
    return f"{n} of the {shown_of} rows shown: the rest did not fit the context window"


def shrink_result(content: str, max_tokens: int) -> str | None:
    """An unread result cut to fit ``max_tokens`` (message overhead included): a result with
    rows keeps its first rows (with only its essentials when its other fields would leave
    no room for one: the first page of a result fits whenever anything of it can), anything
    else the start of its text. None when not even that fits."""
    room = max_tokens - MESSAGE_OVERHEAD_TOKENS
    if _tokens(content) <= room:
        return content
    try:
        result = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        result = None
    found = _rows_key(result) if isinstance(result, dict) else None
    if found is None:
        text = str(content)

        def excerpt(n: int) -> str:
            return json.dumps(
                {
                    "cut": True,
                    "excerpt": text[:n],
                    "note": "cut to fit the model's context window; call the tool "
                    "again with narrower arguments for the rest",
                },
                ensure_ascii=False,
            )

        fitted = _largest_fitting(excerpt, len(text), room)
        return fitted[1] if fitted else None
    key, rows = found
    assert isinstance(result, dict)  # _rows_key found rows in it

    def cut(n: int) -> str:
        out = dict(result)
        value = result[key]
        out[key] = {**value, "rows": rows[:n]} if isinstance(value, dict) else rows[:n]
        out[f"{key}_note"] = (
            f"{n} of the {len(rows)} rows shown: the rest did not fit the "
            f"model's context window; {where_rows_are(result, n)}"
        )
        return json.dumps(out, ensure_ascii=False, default=str)

    def page(n: int) -> str:
        return json.dumps(first_page(result, key, rows, n), ensure_ascii=False, default=str)

    def tiny(n: int) -> str:
        return json.dumps(first_page(result, key, rows, n, True), ensure_ascii=False, default=str)

    whole = _largest_fitting(cut, len(rows) - 1, room)
    if whole is not None and (whole[0] > 0 or not rows):
        return whole[1]
    smallest = None
    for build in (page, tiny):  # the first page fits whenever anything of it can
        fitted = _largest_fitting(build, len(rows) - 1, room)
        if fitted is not None and fitted[0] > 0:
            return fitted[1]
        smallest = smallest or fitted
    # no row fits: still the result (its step, columns and where its rows are), not a stub
    return whole[1] if whole else smallest[1] if smallest else None


def _short_arguments(arguments: str) -> str:
    """Tool-call arguments with long strings cut (still valid JSON); the ledger keeps the SQL."""
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return arguments[:SQL_PREVIEW_CHARS]
    if not isinstance(args, dict):
        return arguments
    short = {
        k: (
            v[:SQL_PREVIEW_CHARS] + " …[cut]"
            if isinstance(v, str) and len(v) > SQL_PREVIEW_CHARS + 40
            else v
        )
        for k, v in args.items()
    }
    return _dumps(short)


def _result_id(msg: Message) -> str | None:
    """The id of the call a tool result answers (text on every replayable result), else None."""
    cid = msg.get("tool_call_id")
    return cid if isinstance(cid, str) else None


def compacted_messages(messages: list[Message], call_ids: set[str] | None = None) -> list[Message]:
    """``messages`` with the tool results of ``call_ids`` compacted; with None (an earlier
    turn) every result, and long tool-call arguments are cut too."""
    index = _call_index(messages)
    out = []
    for msg in messages:
        cid = _result_id(msg)
        if msg.get("role") == "tool" and cid is not None and (call_ids is None or cid in call_ids):
            tool, args = index.get(cid, ("", {}))
            msg = {**msg, "content": compact_result(msg.get("content") or "", tool, args)}
        elif call_ids is None and msg.get("tool_calls"):
            msg = {
                **msg,
                "tool_calls": [
                    {
                        **c,
                        "function": {
                            **c["function"],
                            "arguments": _short_arguments(c["function"].get("arguments", "")),
                        },
                    }
                    for c in msg["tool_calls"]
                ],
            }
        out.append(msg)
    return out


@dataclass
class FittedHistory:
    messages: list[Message]
    dropped_turns: list[int]
    compacted_turns: list[int]
    tokens: int


REMINDER_KEY = "next"  # a step result's reminder of the [[QUERY_STEP]] line to write


def without_reminders(messages: list[Message]) -> list[Message]:
    """An earlier turn's messages without the reminders its step results carried (the line
    to write after them): that turn is answered, its lines written or not, and the ledger
    keeps the steps; the reminder only repeated, in every later request, what the core asks."""
    out = []
    for msg in messages:
        content = msg.get("content")
        if msg.get("role") == "tool" and isinstance(content, str) and REMINDER_KEY in content:
            try:
                result = json.loads(content)
            except json.JSONDecodeError:
                result = None
            if isinstance(result, dict) and REMINDER_KEY in result:
                del result[REMINDER_KEY]
                msg = {**msg, "content": _dumps(result)}
        out.append(msg)
    return out


def fit_history(previous: list[Turn], budget: int) -> FittedHistory:
    """Earlier turns that fit in ``budget`` tokens, newest first (see module docstring)."""
    kept: list[list[Message]] = []
    dropped, compacted = [], []
    used = 0
    for position, turn in enumerate(reversed(previous)):
        full = without_reminders(turn.messages)
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


def describe_key_event(event: Mapping[str, object]) -> str | None:
    """One line for the history note, or None for bookkeeping events."""
    kind = event.get("kind")
    turn = event.get("turn")
    if kind == "project_focused":
        return f"turn {turn}: focused project {event.get('project')}"
    if kind == "project_created":
        return f"turn {turn}: created project {event.get('project')}"
    if kind == "status_changed":
        return (
            f"turn {turn}: project {event.get('project')} status {event.get('old')} → "
            f"{event.get('new')}"
        )
    if kind == "analysis_activated":
        where = f" for {event['project']}" if event.get("project") else ""
        return f"turn {turn}: statistical analysis approved{where} ({event.get('reason')})"
    if kind == "question_answered":
        return (
            f'turn {turn}: you asked "{str(event.get("question"))[:160]}"; the analyst '
            f'answered "{str(event.get("answer"))[:160]}"'
        )
    return None


@dataclass
class TurnCompaction:
    """Which tool results of the current turn are compacted; sticky for the whole turn, so
    the start of the request stays the same from one iteration to the next."""

    compacted_ids: set[str] = field(default_factory=set)
    shrunk: dict[str, int] = field(default_factory=dict)  # unread result -> its token cap

    def apply(self, messages: list[Message]) -> list[Message]:
        out = compacted_messages(messages, self.compacted_ids) if self.compacted_ids else messages
        if not self.shrunk:
            return out
        shrunk = []
        for msg in out:
            cid = _result_id(msg) if msg.get("role") == "tool" else None
            cap = self.shrunk.get(cid) if cid is not None else None
            if cap is not None and cid not in self.compacted_ids:
                msg = {
                    **msg,
                    "content": shrink_result(msg.get("content") or "", cap)
                    or msg.get("content")
                    or "",
                }
            shrunk.append(msg)
        return shrunk


def _last_assistant(turn_messages: list[Message]) -> int:
    return max((i for i, m in enumerate(turn_messages) if m.get("role") == "assistant"), default=-1)


def turn_floor_tokens(turn_messages: list[Message], state: TurnCompaction) -> int:
    """The least the current turn's messages can take in the next request: each result the
    model already answered from at its compact form when that is shorter (the assembler
    compacts those before it touches anything else), every other message as it is sent."""
    sent = state.apply(turn_messages)
    last_assistant = _last_assistant(sent)
    index = _call_index(sent)
    total = 0
    for i, msg in enumerate(sent):
        size = message_tokens(msg)
        cid = _result_id(msg) if msg.get("role") == "tool" else None
        if cid is not None and i < last_assistant and cid not in state.compacted_ids:
            tool, args = index.get(cid, ("", {}))
            compact = MESSAGE_OVERHEAD_TOKENS + _tokens(
                compact_result(msg.get("content") or "", tool, args)
            )
            size = min(size, compact)
        total += size
    return total


def compact_turn(turn_messages: list[Message], state: TurnCompaction, excess_tokens: int) -> int:
    """Compact the tool results the model already answered from (before the last assistant
    message), oldest first, until ``excess_tokens`` are saved; returns how many were
    compacted. Unread results are left to :func:`shrink_unread`."""
    last_assistant = _last_assistant(turn_messages)
    index = _call_index(turn_messages)
    ordered = [
        i
        for i, m in enumerate(turn_messages)
        if m.get("role") == "tool"
        and i < last_assistant
        and _result_id(m) not in state.compacted_ids
    ]
    saved, n = 0, 0
    for i in ordered:
        if saved >= excess_tokens:
            break
        msg = turn_messages[i]
        cid = _result_id(msg)
        if cid is None:  # never on a replayable result (conversation_replay drops those)
            continue
        tool, args = index.get(cid, ("", {}))
        before = message_tokens(msg)
        after = MESSAGE_OVERHEAD_TOKENS + _tokens(
            compact_result(msg.get("content") or "", tool, args)
        )
        state.compacted_ids.add(cid)
        saved += max(0, before - after)
        n += 1
    return n


def _fair_caps(sizes: list[tuple[int, str, str]], room: int) -> tuple[dict[str, int], int] | None:
    """Token caps sharing ``room`` fairly among results ``(size, id, content)`` (a small
    one stays whole): ({id: cap} of those cut, the tokens all of them then take), or None
    when one cannot be cut that far."""
    caps: dict[str, int] = {}
    used, left = 0, len(sizes)
    for size, cid, content in sorted(sizes):
        share = (room - used) // left if left else 0
        left -= 1
        if size <= share:
            used += size
            continue
        cut = shrink_result(content, share) if share > 0 else None
        if cut is None:
            return None
        caps[cid] = share
        used += MESSAGE_OVERHEAD_TOKENS + _tokens(cut)
    return caps, used


def _first_row_tokens(content: str) -> int | None:
    """The tokens of a result's smallest page that still holds a row, or None (no rows)."""
    try:
        result = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return None
    found = _rows_key(result) if isinstance(result, dict) else None
    if found is None or not found[1]:
        return None
    page = first_page(result, found[0], found[1], 1, tiny=True)
    return MESSAGE_OVERHEAD_TOKENS + _tokens(json.dumps(page, ensure_ascii=False, default=str))


def shrink_unread(
    turn_messages: list[Message], state: TurnCompaction, excess_tokens: int
) -> tuple[int, bool]:
    """Cut the results the model has not read yet until ``excess_tokens`` are saved, sharing
    the room that is left fairly among them (a small one stays whole), except that the
    newest keeps room for its first row whenever the others fit beside it. Returns (how
    many were cut, whether enough was saved)."""
    unread = [
        (m, cid)
        for m in turn_messages[_last_assistant(turn_messages) + 1 :]
        if m.get("role") == "tool" and (cid := _result_id(m)) is not None
    ]
    sizes = [(message_tokens(m), cid, m.get("content") or "") for m, cid in unread]
    room = sum(size for size, _, _ in sizes) - excess_tokens
    plan = None
    if len(sizes) > 1:
        size, newest, content = sizes[-1]
        need = _first_row_tokens(content)
        if need is not None and need < size:
            others = _fair_caps(sizes[:-1], room - need)
            if others is not None:
                caps, used = others
                plan = ({**caps, newest: room - used}, room - used - need)
    if plan is None:
        fair = _fair_caps(sizes, room)
        if fair is None:  # cannot be cut that far: the turn cannot go on (see loop)
            return 0, False
        plan = (fair[0], room - fair[1])
    caps, spare = plan
    state.shrunk.update(caps)
    return len(caps), spare >= 0
