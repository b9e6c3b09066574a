"""Conversations on disk: ``.lantide/conversations/ID.jsonl``, append-only, reopenable.

Records, one JSON object per line:

- ``{"type": "conversation", "id", "created_at", "version"}`` first;
- ``{"type": "message", "turn", "at", "message": {...}}``: one chat message exactly as
  sent to the model (the analyst's message, an engine note);
- ``{"type": "messages", "turn", "at", "messages": [...], "meta": [...]}``: one iteration,
  the assistant message with the results of its tool calls, written together (one fsync
  per iteration, and a call is never on disk without its result); ``meta`` holds per
  message what is not sent to the model (tool name, ok, partial);
- ``{"type": "event", "turn", "at", "kind", ...}``: key events the history keeps even when
  old turns are dropped (``project_focused``, ``status_changed``, ``analysis_activated``,
  ``question_asked``, ``question_answered``) and bookkeeping (``turn_finished``);
- ``{"type": "title", "title"}`` from the background namer.

A torn last line (a crash mid-write), a damaged line and a record that cannot be replayed
to the model are skipped when reading and listed in :attr:`Conversation.problems` with
their line numbers (:mod:`lantide.agent.conversation_replay`); the file is never rewritten.
No API key is ever written.

A tool result is stored with each string value cut at :data:`STORED_CELL_CHARS`, as a
preview cell is (a 5 MB value the model saw once is not kept in the file); a result that is
not JSON is cut as a whole at :data:`STORED_RESULT_CHARS`.
"""

from __future__ import annotations

import json
import re
import secrets as _random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, Unpack, cast

from lantide.agent.conversation_replay import sanitize_records
from lantide.agent.message_types import Message, MessageMeta, MessageRecord
from lantide.errors import MissingFileError, UsageError
from lantide.workspace import layout
from lantide.workspace.atomic import append_jsonl
from lantide.workspace.log_reader import LogProblem, read_log

FORMAT_VERSION = 1
KEY_EVENTS = (
    "project_focused",
    "status_changed",
    "analysis_activated",
    "question_asked",
    "question_answered",
    "project_created",
)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,80}$")
STORED_CELL_CHARS = 10_000
STORED_RESULT_CHARS = 200_000
STORED_NOTE = (
    "values longer than {cap:,} characters were cut when this result was stored; "
    "run the tool again (or read_step) for the whole value"
)


def _marker(cap: int) -> str:
    from lantide.query.results import cut_marker

    return cut_marker(cap)


def _cap_strings(value: Any, cap: int) -> tuple[Any, bool]:
    """``value`` with every string longer than ``cap`` cut and marked; (value, cut?)."""
    if isinstance(value, str):
        return (value[:cap] + _marker(cap), True) if len(value) > cap else (value, False)
    if isinstance(value, list):
        items = [_cap_strings(v, cap) for v in value]
        return [p[0] for p in items], any(p[1] for p in items)
    if isinstance(value, dict):
        pairs = {k: _cap_strings(v, cap) for k, v in value.items()}
        return {k: p[0] for k, p in pairs.items()}, any(p[1] for p in pairs.values())
    return value, False


def capped_for_storage(message: Message) -> Message:
    """A tool message as stored: long values cut (the live message is not changed)."""
    content = message.get("content")
    if (
        message.get("role") != "tool"
        or not isinstance(content, str)
        or len(content) <= STORED_CELL_CHARS
    ):
        return message
    try:
        parsed = json.loads(content)
    except ValueError:
        parsed = None
    if isinstance(parsed, (dict, list)):
        capped, cut = _cap_strings(parsed, STORED_CELL_CHARS)
        if cut and isinstance(capped, dict):
            capped["stored_note"] = STORED_NOTE.format(cap=STORED_CELL_CHARS)
        content = json.dumps(capped, ensure_ascii=False, default=str)
    if len(content) > STORED_RESULT_CHARS:
        content = content[:STORED_RESULT_CHARS] + _marker(STORED_RESULT_CHARS)
    return {**message, "content": content}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_conversation_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + _random.token_hex(2)


def check_conversation_id(conversation_id: str) -> str:
    if not _ID.match(conversation_id or ""):
        raise UsageError(
            f"invalid conversation id {conversation_id!r}",
            hint="Use an id from 'lantide ledger WORKSPACE' or the chat history.",
        )
    return conversation_id


class ConversationInfoDict(TypedDict):
    id: str
    title: str | None
    created_at: str | None
    turns: int


@dataclass
class ConversationInfo:
    id: str
    title: str | None
    created_at: str | None
    turns: int
    path: Path

    def to_dict(self) -> ConversationInfoDict:
        return {
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "turns": self.turns,
        }


class Conversation:
    def __init__(
        self,
        directory: Path,
        conversation_id: str,
        records: list[dict[str, Any]],
        problems: list[LogProblem] | None = None,
    ):
        self.id = check_conversation_id(conversation_id)
        self.path = layout.log_path(directory, conversation_id)
        self.records = records
        self.problems: list[LogProblem] = list(problems or [])  # lines skipped on reading
        self._written = self.path.exists()

    # -- lifecycle
    @classmethod
    def create(cls, directory: Path, conversation_id: str | None = None) -> Conversation:
        """A new conversation; its file appears with the first record written."""
        conv = cls(directory, conversation_id or new_conversation_id(), [])
        if conv.path.exists():
            return cls.open(directory, conv.id)
        conv.records.append(
            {"type": "conversation", "id": conv.id, "created_at": _now(), "version": FORMAT_VERSION}
        )
        return conv

    @classmethod
    def open(cls, directory: Path, conversation_id: str) -> Conversation:
        check_conversation_id(conversation_id)
        path = layout.log_path(directory, conversation_id)
        if not path.exists():
            recent = ", ".join(i.id for i in list_conversations(directory)[-5:]) or "none yet"
            raise MissingFileError(
                path,
                "conversation",
                hint=f"Recent conversations: {recent}. Leave out "
                "--conversation to start a new one.",
            )
        return cls(directory, conversation_id, *_read_records(path))

    def _append(self, record: dict[str, Any]) -> None:
        if not self._written:
            append_jsonl(self.path, self.records[0])
            self._written = True
        append_jsonl(self.path, record)
        self.records.append(record)

    # -- writing
    def add_message(self, message: Message, turn: int, **extra: Unpack[MessageMeta]) -> None:
        self._append(
            {
                "type": "message",
                "turn": turn,
                "at": _now(),
                "message": capped_for_storage(message),
                **extra,
            }
        )

    def add_messages(self, messages: list[Message], turn: int, meta: list[MessageMeta]) -> None:
        """Several messages of one iteration in one record."""
        if messages:
            self._append(
                {
                    "type": "messages",
                    "turn": turn,
                    "at": _now(),
                    "messages": [capped_for_storage(m) for m in messages],
                    "meta": meta,
                }
            )

    def add_event(self, kind: str, turn: int, **data: Any) -> None:
        self._append({"type": "event", "turn": turn, "at": _now(), "kind": kind, **data})

    def set_title(self, title: str) -> None:
        self._append({"type": "title", "at": _now(), "title": title})

    # -- reading
    @property
    def title(self) -> str | None:
        titles = [r["title"] for r in self.records if r.get("type") == "title" and r.get("title")]
        return titles[-1] if titles else None

    @property
    def last_turn(self) -> int:
        return max((int(r.get("turn") or 0) for r in self.records), default=0)

    def message_records(self) -> list[MessageRecord]:
        """Every message as ``{"type": "message", "turn", "at", "message", **meta}``, in order
        (iteration records expanded). The records are this class's own or were read through
        :func:`sanitize_records`, which checks every message's shape."""
        out: list[MessageRecord] = []
        for r in self.records:
            kind = r.get("type")
            if kind == "message" and isinstance(r.get("message"), dict):
                out.append(cast(MessageRecord, r))
            elif kind == "messages" and isinstance(r.get("messages"), list):
                meta: list[Any] = r["meta"] if isinstance(r.get("meta"), list) else []
                for i, message in enumerate(r["messages"]):
                    if isinstance(message, dict):
                        extra = meta[i] if i < len(meta) and isinstance(meta[i], dict) else {}
                        record = {
                            "type": "message",
                            "turn": r.get("turn"),
                            "at": r.get("at"),
                            "message": message,
                            **extra,
                        }
                        out.append(cast(MessageRecord, record))
        return out

    def events(self, kinds: tuple[str, ...] | None = None) -> list[dict[str, object]]:
        """Event records (``{"type": "event", "turn", "at", "kind", **data}``) as the file
        holds them: only their ``kind`` is checked, so every other field is read with care."""
        return [
            r
            for r in self.records
            if r.get("type") == "event" and (kinds is None or r.get("kind") in kinds)
        ]

    def pending_question(self) -> dict[str, object] | None:
        """The last ``ask_user`` question if the analyst has not answered it yet."""
        for r in reversed(self.events(("question_asked", "question_answered"))):
            return r if r["kind"] == "question_asked" else None
        return None

    def last_answer(self) -> dict[str, object] | None:
        answers = self.events(("question_answered",))
        return answers[-1] if answers else None

    def analysis_active(self) -> bool:
        return bool(self.events(("analysis_activated",)))

    def info(self) -> ConversationInfo:
        head = self.records[0] if self.records else {}
        turns = len({r.get("turn") for r in self.message_records()})
        return ConversationInfo(self.id, self.title, head.get("created_at"), turns, self.path)


def list_conversations(directory: Path) -> list[ConversationInfo]:
    """Conversations in creation order (their ids sort by time)."""
    out = []
    for path in layout.log_paths(directory):
        if not _ID.match(path.stem):
            continue
        # One damaged file is a problem for itself only: it is listed without its details,
        # never the reason the other conversations are not.
        try:
            out.append(Conversation(directory, path.stem, *_read_records(path)).info())
        except (OSError, ValueError, TypeError, AttributeError, KeyError):
            out.append(ConversationInfo(path.stem, None, None, 0, path))
    return out


def _read_records(path: Path) -> tuple[list[dict[str, Any]], list[LogProblem]]:
    read = read_log(path)
    records, problems = sanitize_records(path, read.entries)
    return records, sorted(read.problems + problems, key=lambda p: p.line)
