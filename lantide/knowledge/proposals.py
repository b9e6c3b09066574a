"""Knowledge proposals: what the secondary model may suggest remembering after a turn.

The model sees the analyst's messages of the turn (and the assistant's reply for
context) and answers JSON. A proposal is accepted only when it carries a ``quote`` that
is found, word for word, in what the analyst wrote in that turn: knowledge comes from
the analyst's statements, never from the model's guesses or the assistant's reply.
Accepted proposals are appended as ``[queued]`` entries with their source (conversation
and turn) and wait for the analyst's approval; nothing proposed is ever injected before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from lantide.knowledge.layer import quote
from lantide.knowledge.model import SECTIONS, Entry, EntryDict
from lantide.templates import render_prompt

Complete = Callable[[str, str], str]

MAX_PROPOSALS_PER_TURN = 3
MAX_PROPOSAL_CHARS = 400
MIN_QUOTE_CHARS = 12
_INPUT_CHAR_CAP = 6000  # per message sent to the secondary model
# The model sees the latest entries to avoid repeats; the full check is done here.
_MAX_EXISTING_SHOWN = 150
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
# Something shaped like an API key or token: never written into a knowledge file.
_SECRET = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}"
    r"|(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{32,})\b"
)
_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "\u00a0": " "})


@dataclass
class Proposal:
    scope: str
    section: str
    text: str
    quote: str
    heading: str | None = None


class ProposalDict(TypedDict):
    """:meth:`ProposalResult.to_dict`."""

    added: list[EntryDict]
    dropped: list[dict[str, str]]  # {"text", "reason"}
    error: str | None


@dataclass
class ProposalResult:
    """What one proposal call did. ``error`` is set when the model's answer was unusable
    (then nothing was written)."""

    added: list[Entry] = field(default_factory=list)
    dropped: list[dict[str, str]] = field(default_factory=list)  # {"text", "reason"}
    error: str | None = None

    def to_dict(self) -> ProposalDict:
        return {
            "added": [e.to_dict() for e in self.added],
            "dropped": self.dropped,
            "error": self.error,
        }


def normalize(text: str) -> str:
    """For comparing texts: case, curly quotes and whitespace do not matter."""
    return " ".join(text.translate(_QUOTES).split()).casefold()


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# Words by which a question still states something durable ("…, where revenue means net of
# refunds?"); a question without them only asks.
_STATES = re.compile(
    r"\b(?:means?|meant|defined?|definition|always|never|counts? as|"
    r"refers? to|stands? for|should|must|note that|remember)\b",
    re.I,
)


def may_hold_knowledge(message: str) -> bool:
    """Whether an analyst's message can hold an entry worth proposing, decided before any
    model call: not when it is shorter than the shortest quote a proposal needs, nor when
    every sentence of it is a question that states nothing (no ``means``, ``always``,
    ``counts as``…). "How many customers are there?" cannot teach anything; "All Q2
    actives" (an answer), "Plot it as bars" or a question with a definition in it can."""
    text = " ".join(str(message or "").split())
    if len(text) < MIN_QUOTE_CHARS:
        return False
    sentences = [s.strip() for s in _SENTENCE_END.split(str(message)) if s.strip()]
    return any(not s.endswith("?") or _STATES.search(s) for s in sentences)


def build_prompt(
    analyst_messages: list[str],
    assistant_reply: str,
    *,
    scopes: list[str],
    existing: list[str],
    rejected: list[str],
    project_name: str | None,
    headings: list[str] | None = None,
    max_proposals: int = MAX_PROPOSALS_PER_TURN,
) -> tuple[str, str]:
    """``(system, user)`` for the secondary model."""
    system = render_prompt(
        "background/knowledge_propose.md.j2",
        scopes=scopes,
        sections=list(SECTIONS),
        max_proposals=max_proposals,
        min_quote_chars=MIN_QUOTE_CHARS,
        max_chars=MAX_PROPOSAL_CHARS,
    )
    user = render_prompt(
        "background/knowledge_propose_input.md.j2",
        analyst_messages=[quote(m, _INPUT_CHAR_CAP) for m in analyst_messages],
        assistant_reply=quote(assistant_reply, _INPUT_CHAR_CAP) if assistant_reply else None,
        existing=[quote(t, 200) for t in existing[-_MAX_EXISTING_SHOWN:]],
        rejected=[quote(t, 300) for t in rejected[-50:]],
        headings=[quote(h, 100) for h in (headings or [])],
        project_name=project_name,
    )
    return system, user


def extract_json(output: str) -> Any:
    """The JSON value in a model's answer, tolerating a code fence or prose around it."""
    text = _FENCE.sub("", output.strip())
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        pass
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1])
            except (json.JSONDecodeError, ValueError):
                continue
    raise ValueError("the answer is not JSON")


def _section(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    key = value.strip().strip("#").strip().casefold()
    return next((s for s in SECTIONS if s.casefold() == key), None)


def parse_proposals(
    output: str,
    analyst_messages: list[str],
    *,
    scopes: list[str],
    existing: list[str],
    rejected: list[str],
    max_proposals: int = MAX_PROPOSALS_PER_TURN,
) -> tuple[list[Proposal], list[dict[str, str]]]:
    """Check the model's answer; returns (accepted, dropped with reasons).

    Raises ValueError when the answer as a whole is unusable.
    """
    data = extract_json(output)
    if isinstance(data, dict):
        data = data.get("proposals", [])
    if not isinstance(data, list):
        raise ValueError("expected a JSON object with a 'proposals' list")
    said = normalize("\n".join(analyst_messages))
    known = {normalize(t) for t in existing}
    refused = {normalize(t) for t in rejected}
    accepted: list[Proposal] = []
    dropped: list[dict[str, str]] = []

    def drop(text: Any, reason: str) -> None:
        dropped.append({"text": str(text)[:MAX_PROPOSAL_CHARS], "reason": reason})

    for raw in data:
        if not isinstance(raw, dict):
            drop(raw, "not an object")
            continue
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            drop(text, "no text")
            continue
        text = " ".join(text.split())
        if text.startswith(("- ", "* ")):
            text = text[2:].strip()
        said_quote = raw.get("quote")
        section = _section(raw.get("section"))
        scope = raw.get("scope") if raw.get("scope") in ("user", "project") else scopes[-1]
        if section is None:
            drop(text, f"section must be one of {', '.join(SECTIONS)}")
        elif scope not in scopes:
            drop(text, f"no {scope} knowledge file to add it to")
        elif len(text) > MAX_PROPOSAL_CHARS:
            drop(text, f"longer than {MAX_PROPOSAL_CHARS} characters")
        elif normalize(text).startswith("[queued]"):
            drop(text, "the text carries a status marker")
        elif _SECRET.search(text):
            drop(text, "it looks like it contains a key or token")
        elif not isinstance(said_quote, str) or len(normalize(said_quote)) < MIN_QUOTE_CHARS:
            drop(text, "no quote of what the analyst said")
        elif normalize(said_quote).strip(" .,;:!?") not in said:
            drop(
                text,
                "the quote is not in the analyst's messages (the model's guess, "
                "not the analyst's statement)",
            )
        elif normalize(text) in known:
            drop(text, "already in the knowledge")
        elif normalize(text) in refused:
            drop(text, "the analyst rejected it before")
        elif len(accepted) >= max_proposals:
            drop(text, f"more than {max_proposals} proposals in one turn")
        else:
            heading = raw.get("heading")
            heading = " ".join(heading.split())[:100] if isinstance(heading, str) else None
            accepted.append(Proposal(scope, section, text, said_quote, heading or None))
            known.add(normalize(text))
    return accepted, dropped
