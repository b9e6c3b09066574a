"""What of a conversation file may be replayed to the model, checked line by line.

A conversation file is the analyst's, and can be edited, truncated or damaged by another
program. Before its records become the history sent to the model, each is checked:

- a record whose ``turn`` is not a whole number is skipped;
- only ``user``, ``assistant`` and ``tool`` messages are replayed: a stored ``system``
  message (or any other role) never reaches the model, since the system prompt is
  Lantide's own and is assembled fresh every iteration;
- a tool call travels with its result: an assistant's call without a result loses that
  call (the message keeps its text), and a result without its call is dropped.

Every skipped piece is reported with its line number (:class:`LogProblem`); the file
itself is never rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from lantide.agent.message_types import Message
from lantide.workspace.log_reader import LogProblem

REPLAYED_ROLES = ("user", "assistant", "tool")


def _is_turn(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _call_problem(call: Any) -> str | None:
    if not isinstance(call, dict):
        return "a tool call that is not an object"
    fn = call.get("function")
    if not isinstance(call.get("id"), str) or not call["id"]:
        return "a tool call without an id"
    if (
        not isinstance(fn, dict)
        or not isinstance(fn.get("name"), str)
        or not isinstance(fn.get("arguments", ""), str)
    ):
        return f"tool call {call['id']} without a name or with arguments that are not text"
    return None


def message_problem(message: Any) -> str | None:
    """Why a stored message cannot be replayed, or None."""
    if not isinstance(message, dict):
        return "a message that is not an object"
    role = message.get("role")
    if role not in REPLAYED_ROLES:
        return f"a {role!r} message, which is never replayed to the model"
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        return f"a {role} message whose content is not text"
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return "a tool result without the id of its call"
    if role == "assistant":
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            return "an assistant message whose tool_calls is not a list"
        for call in calls or []:
            problem = _call_problem(call)
            if problem:
                return problem
    return None


def _record_problem(record: Mapping[str, object]) -> str | None:
    kind = record.get("type")
    if "turn" in record and not _is_turn(record["turn"]):
        return f"turn {record['turn']!r} is not a whole number"
    if kind == "message":
        return message_problem(record.get("message"))
    if kind == "messages" and not isinstance(record.get("messages"), list):
        return "an iteration record without a list of messages"
    if kind == "event" and not isinstance(record.get("kind"), str):
        return "an event without a kind"
    if kind == "title" and not isinstance(record.get("title"), str):
        return "a title that is not text"
    return None


class _Problems:
    def __init__(self, path: Path):
        self.path = path
        self.items: list[LogProblem] = []

    def add(self, line: int, reason: str) -> None:
        self.items.append(LogProblem(self.path, line, reason))


def sanitize_records(
    path: Path, entries: list[tuple[int, dict[str, Any]]]
) -> tuple[list[dict[str, Any]], list[LogProblem]]:
    """The records of a conversation file that may be used, and what was skipped."""
    problems = _Problems(path)
    kept: list[tuple[int, dict[str, Any]]] = []
    for line, record in entries:
        problem = _record_problem(record)
        if problem:
            problems.add(line, problem)
            continue
        if record.get("type") == "messages":
            good = []
            meta: list[Any] = record["meta"] if isinstance(record.get("meta"), list) else []
            good_meta = []
            for i, message in enumerate(record["messages"]):
                problem = message_problem(message)
                if problem:
                    problems.add(line, problem)
                    continue
                good.append(message)
                good_meta.append(meta[i] if i < len(meta) and isinstance(meta[i], dict) else {})
            if not good:
                continue
            record = {**record, "messages": good, "meta": good_meta}
        kept.append((line, record))
    return _pair_tool_calls(kept, problems), problems.items


def _messages_of(record: Mapping[str, object]) -> list[Message]:
    """The messages of a record that passed :func:`_record_problem` (and, in an iteration
    record, :func:`message_problem` each): their shape is checked."""
    if record.get("type") == "message":
        return [cast(Message, record["message"])]
    messages = record.get("messages")
    if record.get("type") == "messages" and isinstance(messages, list):
        return [cast(Message, m) for m in messages]
    return []


def _pair_tool_calls(
    kept: list[tuple[int, dict[str, Any]]], problems: _Problems
) -> list[dict[str, Any]]:
    """Drop calls without results and results without calls (see the module docstring)."""
    answered: set[str] = set()
    called: set[str] = set()
    for _line, record in kept:
        for message in _messages_of(record):
            if message["role"] == "tool" and message["tool_call_id"] in called:
                answered.add(message["tool_call_id"])
            for call in message.get("tool_calls") or []:
                called.add(call["id"])
    out: list[dict[str, Any]] = []
    seen_calls: set[str] = set()
    for line, record in kept:
        if record.get("type") not in ("message", "messages"):
            out.append(record)
            continue
        messages: list[Message] = []
        meta: list[Any] = []
        # an iteration record's meta was lined up with its messages by sanitize_records; a
        # single-message record has none (a stray "meta" there is not read)
        old_meta: list[Any] = record["meta"] if record.get("type") == "messages" else [{}]
        for message, extra in zip(_messages_of(record), old_meta, strict=True):
            if message["role"] == "tool":
                cid = message["tool_call_id"]
                if cid not in seen_calls or cid not in answered:
                    problems.add(
                        line, f"a tool result for call {cid!r}, which no earlier message made"
                    )
                    continue
                answered.discard(cid)  # a second result for the same call is dropped too
            calls = message.get("tool_calls") or []
            if calls:
                paired = [c for c in calls if c["id"] in answered]
                for c in calls:
                    if c["id"] not in answered:
                        problems.add(
                            line, f"tool call {c['id']!r} ({c['function']['name']}) has no result"
                        )
                seen_calls.update(c["id"] for c in paired)
                if len(paired) != len(calls):
                    message = {**message}  # the stored record is left as it is
                    del message["tool_calls"]
                    if paired:
                        message["tool_calls"] = paired
                    if not paired and not message.get("content"):
                        continue
            messages.append(message)
            meta.append(extra)
        if not messages:
            continue
        if record.get("type") == "message":
            out.append({**record, "message": messages[0]})
        else:
            out.append({**record, "messages": messages, "meta": meta})
    return out
