"""Grouping a large knowledge file under ``###`` headings (DESIGN.md section 7).

The secondary model never rewrites an entry: it sees the entries numbered and answers
which numbers go under which heading. Lantide then moves the entries' original lines.
The result is checked before anything is written, and refused (the file left as it is,
the reason reported) when the model's answer is unusable:

- the answer is not JSON of the expected shape, or a heading is empty or too long;
- an entry is missing, given twice, unknown, or moved to the other section;
- after the move, an entry's lines differ from before, an entry has no heading, or any
  line of the file other than the new headings appeared or disappeared.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TypedDict

from lantide.knowledge.layer import quote
from lantide.knowledge.model import SECTIONS, KnowledgeDocument
from lantide.knowledge.parser import is_blank, parse_knowledge
from lantide.knowledge.proposals import extract_json
from lantide.templates import render_prompt

MAX_HEADING_CHARS = 60


class ReorganizeRejected(ValueError):
    """The model's grouping cannot be applied; the message says why."""


class ProposedGroup(TypedDict):
    """A ``###`` group the model proposed: its section, heading and entry numbers."""

    section: str
    heading: str
    entries: list[int]


class ReorganizeDict(TypedDict):
    """:meth:`ReorganizeResult.to_dict`."""

    scope: str
    path: str | None
    applied: bool
    reason: str | None
    groups: list[ProposedGroup]
    diff: str


@dataclass
class ReorganizeResult:
    scope: str
    path: str | None
    applied: bool
    reason: str | None = None  # why it was not applied
    before_text: str = ""
    after_text: str | None = None  # the proposed file, when the grouping was usable
    groups: list[ProposedGroup] = field(default_factory=list)

    @property
    def diff(self) -> str:
        if self.after_text is None:
            return ""
        return "".join(
            difflib.unified_diff(
                self.before_text.splitlines(keepends=True),
                self.after_text.splitlines(keepends=True),
                fromfile=f"{self.path} (before)",
                tofile=f"{self.path} (grouped)",
            )
        )

    def to_dict(self) -> ReorganizeDict:
        return {
            "scope": self.scope,
            "path": self.path,
            "applied": self.applied,
            "reason": self.reason,
            "groups": self.groups,
            "diff": self.diff,
        }


def build_prompt(doc: KnowledgeDocument) -> tuple[str, str]:
    sections = []
    for name in SECTIONS:
        entries = [
            {"id": e.number, "text": quote(e.text, 240)}  # the gist is enough to group
            for e in doc.entries
            if e.section == name
        ]
        if entries:
            sections.append({"name": name, "entries": entries})
    system = render_prompt(
        "background/knowledge_reorganize.md.j2",
        sections=[s["name"] for s in sections],
        max_heading_chars=MAX_HEADING_CHARS,
    )
    user = render_prompt("background/knowledge_reorganize_input.md.j2", sections=sections)
    return system, user


def _clean_heading(value: Any) -> str:
    if not isinstance(value, str):
        raise ReorganizeRejected(f"a heading is not text: {value!r}")
    heading = " ".join(value.split()).lstrip("#").strip()
    if not heading:
        raise ReorganizeRejected("a heading is empty")
    if len(heading) > MAX_HEADING_CHARS:
        raise ReorganizeRejected(
            f"heading {heading[:40]!r}… is longer than {MAX_HEADING_CHARS} characters"
        )
    return heading


def _ids(value: Any, heading: str) -> list[int]:
    if not isinstance(value, list):
        raise ReorganizeRejected(f"the entries of heading {heading!r} are not a list")
    out = []
    for item in value:
        try:
            out.append(int(item))
        except (TypeError, ValueError):
            raise ReorganizeRejected(
                f"heading {heading!r} lists {item!r}, not an entry number"
            ) from None
    return out


def parse_grouping(output: str, doc: KnowledgeDocument) -> dict[str, list[tuple[str, list[int]]]]:
    """``{section: [(heading, [entry numbers])]}``, covering every entry exactly once."""
    try:
        data = extract_json(output)
    except ValueError as exc:
        raise ReorganizeRejected(str(exc)) from None
    if not isinstance(data, dict):
        raise ReorganizeRejected("expected a JSON object with 'Rules' and 'Info'")
    by_key = {str(k).strip().casefold(): v for k, v in data.items()}
    placed: dict[str, tuple[dict[str, tuple[str, list[int]]], list[int]]] = {}
    for name in SECTIONS:
        raw_groups = by_key.get(name.casefold(), [])
        if not isinstance(raw_groups, list):
            raise ReorganizeRejected(f"'{name}' is not a list of headings")
        merged: dict[str, tuple[str, list[int]]] = {}
        seen: list[int] = []
        for group in raw_groups:
            if not isinstance(group, dict):
                raise ReorganizeRejected(f"a heading of '{name}' is not an object")
            heading = _clean_heading(group.get("heading"))
            ids = _ids(group.get("entries"), heading)
            merged.setdefault(heading.casefold(), (heading, []))[1].extend(ids)
            seen.extend(ids)
        placed[name] = (merged, seen)
    section_of = {e.number: e.section for e in doc.entries}
    for name, (_, seen) in placed.items():
        moved = sorted({i for i in seen if section_of.get(i, name) != name})
        if moved:
            raise ReorganizeRejected(f"{name}: entries {moved} belong to another section")
    grouping: dict[str, list[tuple[str, list[int]]]] = {}
    for name, (merged, seen) in placed.items():
        expected = {e.number for e in doc.entries if e.section == name}
        twice = sorted(i for i, n in Counter(seen).items() if n > 1)
        unknown = sorted(set(seen) - expected)
        missing = sorted(expected - set(seen))
        if twice:
            raise ReorganizeRejected(f"{name}: entries {twice} are placed more than once")
        if unknown:
            raise ReorganizeRejected(f"{name}: there are no entries {unknown}")
        if missing:
            raise ReorganizeRejected(f"{name}: entries {missing} were left out")
        grouping[name] = [(h, sorted(ids)) for h, ids in merged.values() if ids]
    return grouping


def apply_grouping(doc: KnowledgeDocument, grouping: dict[str, list[tuple[str, list[int]]]]) -> str:
    """Move the entries' lines under their new headings; all other lines stay."""
    if doc.has_group_headings:
        raise ReorganizeRejected("the file already has ### headings")
    nl = doc.newline
    by_number = {e.number: e for e in doc.entries}
    lines = list(doc.lines)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += nl
    out: list[str] = []
    cursor = 0
    done: set[str] = set()
    for sec in doc.sections:
        out.extend(lines[cursor : sec.start])
        cursor = sec.end
        out.append(lines[sec.start])
        inside = [e for e in doc.entries if sec.start < e.start < sec.end]
        taken = {i for e in inside for i in range(e.start, e.end)}
        block: list[str] = []
        for i in range(sec.start + 1, sec.end):  # notes and comments stay, in order
            if i in taken or (is_blank(lines[i]) and (not block or is_blank(block[-1]))):
                continue
            block.append(lines[i])
        while block and is_blank(block[-1]):
            block.pop()
        if block:
            out.append(nl)
            out.extend(block)
        if sec.name not in done:
            done.add(sec.name)
            for heading, numbers in grouping.get(sec.name, []):
                out.extend([nl, f"### {heading}{nl}", nl])
                out.extend(_with_eol(by_number[n].raw, nl) for n in numbers)
        out.append(nl)
    out.extend(lines[cursor:])
    while out and is_blank(out[-1]):
        out.pop()
    return "".join(out)


def _with_eol(raw: str, nl: str) -> str:
    return raw if raw.endswith(("\n", "\r")) else raw + nl


def _entry_key(raw: str) -> tuple[str, ...]:
    return tuple(line.rstrip() for line in raw.splitlines())


def check_invariant(
    before: KnowledgeDocument, after_text: str, grouping: dict[str, list[tuple[str, list[int]]]]
) -> str | None:
    """None when ``after_text`` only moved entries and added headings, else the reason."""
    after = parse_knowledge(after_text, scope=before.scope, path=before.path)
    old = Counter((e.section, e.status, e.text, _entry_key(e.raw)) for e in before.entries)
    new = Counter((e.section, e.status, e.text, _entry_key(e.raw)) for e in after.entries)
    if old != new:
        lost = sum((old - new).values())
        changed = sum((new - old).values())
        return f"{lost} entries would be lost or changed ({changed} new or altered)"
    want = Counter(
        (_entry_key(before.entries[n - 1].raw), section, heading)
        for section, groups in grouping.items()
        for heading, numbers in groups
        for n in numbers
    )
    got = Counter((_entry_key(e.raw), e.section, e.heading) for e in after.entries)
    if want != got:
        return "entries did not land under the headings they were given"
    headings = Counter(f"### {h}" for groups in grouping.values() for h, _ in groups)
    old_lines = Counter(line.rstrip() for line in before.lines if not is_blank(line)) + headings
    new_lines = Counter(line.rstrip() for line in after.lines if not is_blank(line))
    if old_lines != new_lines:
        return "lines of the file other than the new headings would change"
    return None


def plan(doc: KnowledgeDocument, output: str) -> ReorganizeResult:
    """Turn the model's answer into a checked proposal (nothing written here)."""
    result = ReorganizeResult(
        doc.scope, str(doc.path) if doc.path else None, applied=False, before_text=doc.text
    )
    try:
        grouping = parse_grouping(output, doc)
        after = apply_grouping(doc, grouping)
    except ReorganizeRejected as exc:
        result.reason = f"the model's grouping was refused: {exc}"
        return result
    problem = check_invariant(doc, after, grouping)
    if problem:
        result.reason = f"the model's grouping was refused: {problem}"
        return result
    result.after_text = after
    result.groups = [
        {"section": s, "heading": h, "entries": ids}
        for s, groups in grouping.items()
        for h, ids in groups
    ]
    return result
