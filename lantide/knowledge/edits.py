"""Changing a knowledge file line by line, leaving every other line as it was.

Each function takes a parsed :class:`KnowledgeDocument` and returns the new file text
(without the BOM, which the writer puts back). Only the lines of the entries concerned
change; an inserted entry copies the bullet style of its neighbours and the file's line
endings. Callers re-parse the result and check it (:func:`verify`) before writing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

from lantide.knowledge.model import (
    QUEUED,
    QUEUED_MARKER,
    SECTIONS,
    Entry,
    KnowledgeDocument,
    KnowledgeError,
    Section,
)
from lantide.knowledge.parser import (
    HTML_COMMENT,
    LIST_MARKER,
    is_blank,
    item_body,
    parse_knowledge,
    queued_marker_span,
    split_status,
)

MAX_ENTRY_CHARS = 2000
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.:@-]")


def _eol(line: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending):
            return ending
    return ""


def normalize_entry_text(text: str) -> str:
    """Check an entry's text as given by the analyst or a model and tidy its whitespace."""
    if not isinstance(text, str):
        raise KnowledgeError(f"knowledge entry text must be a string, not {type(text).__name__}")
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    clean = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).lstrip()
    if not clean.strip():
        raise KnowledgeError(
            "a knowledge entry cannot be empty",
            hint="Give the text of the entry.",
            code="KNOWLEDGE_EMPTY",
        )
    if split_status(clean.lstrip())[0] == QUEUED:
        raise KnowledgeError(
            f"an entry's text cannot start with {QUEUED_MARKER}: {clean[:60]!r}",
            hint="Approve or reject the entry instead of writing the marker.",
            code="KNOWLEDGE_MARKER",
        )
    if len(clean) > MAX_ENTRY_CHARS:
        raise KnowledgeError(
            f"a knowledge entry is limited to {MAX_ENTRY_CHARS:,} characters "
            f"({len(clean):,} given)",
            hint="Split it into several entries, or keep details in the Plan.",
            code="KNOWLEDGE_TOO_LONG",
        )
    return clean


def source_comment(conversation_id: str, turn: int, at: str | None = None) -> str:
    """The HTML comment recording where a proposal came from (invisible when rendered)."""
    at = at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cid = _SAFE_ID.sub("_", str(conversation_id))[:80] or "unknown"
    return f"<!-- source: conversation={cid} turn={int(turn)} at={at} -->"


def _replace(doc: KnowledgeDocument, replacements: list[tuple[int, int, list[str]]]) -> str:
    """Apply (start, end, new_lines) replacements, which must not overlap."""
    lines = list(doc.lines)
    for start, end, new in sorted(replacements, key=lambda r: r[0], reverse=True):
        lines[start:end] = new
    return "".join(lines)


def approve(doc: KnowledgeDocument, entries: list[Entry]) -> str:
    """Remove the ``[queued]`` marker from each entry's first line."""
    replacements = []
    for entry in entries:
        first = doc.lines[entry.start]
        span = queued_marker_span(first.rstrip("\r\n"))
        if span is None:  # already Enabled
            continue
        replacements.append((entry.start, entry.start + 1, [first[: span[0]] + first[span[1] :]]))
    return _replace(doc, replacements)


def remove(doc: KnowledgeDocument, entries: list[Entry]) -> str:
    """Delete the entries' lines (and a blank line left doubled by the deletion)."""
    lines = list(doc.lines)
    for entry in sorted(entries, key=lambda e: e.start, reverse=True):
        start, end = entry.start, entry.end
        if start > 0 and end < len(lines) and is_blank(lines[start - 1]) and is_blank(lines[end]):
            end += 1
        del lines[start:end]
    return "".join(lines)


def _item_lines(prefix: str, body: str, offset: int, eol: str) -> list[str]:
    """A list item's lines: ``prefix`` then the body, continuation lines indented."""
    parts = body.split("\n")
    out = [prefix + parts[0] + eol]
    for part in parts[1:]:
        out.append((" " * offset + part if part.strip() else "") + eol)
    return out


def replace_text(doc: KnowledgeDocument, entry: Entry, text: str) -> str:
    """Give ``entry`` new text; its bullet, its status and its HTML comments stay."""
    text = normalize_entry_text(text)
    item = doc.lines[entry.start : entry.end]
    body, offset = item_body(item)
    status, rest = split_status(body)
    comments = HTML_COMMENT.findall(rest)
    first = item[0].rstrip("\r\n")
    match = LIST_MARKER.match(first)
    prefix = first[: match.end()] if match else first[:offset]
    if not prefix.endswith((" ", "\t")):
        prefix += " "
        offset = len(prefix)
    if status == QUEUED:
        span = queued_marker_span(first)
        prefix = first[: span[1]] if span else prefix + QUEUED_MARKER + " "
        if not prefix.endswith((" ", "\t")):
            prefix += " "
    new_body = text + ("".join(" " + c for c in comments) if comments else "")
    eol = _eol(doc.lines[entry.end - 1]) or doc.newline
    new_lines = _item_lines(prefix, new_body, offset, eol)
    if entry.end == len(doc.lines) and not _eol(doc.lines[-1]):
        new_lines[-1] = new_lines[-1].rstrip("\r\n")  # the file had no final newline
    return _replace(doc, [(entry.start, entry.end, new_lines)])


# -- inserting ------------------------------------------------------------------------


def _section_for_insert(doc: KnowledgeDocument, section: str) -> Section | None:
    found = doc.sections_named(section)
    return found[0] if found else None


def _bullet_like(doc: KnowledgeDocument, neighbour: Entry | None) -> str:
    if neighbour is not None:
        match = LIST_MARKER.match(doc.lines[neighbour.start])
        if match and match.group(2) in "-*+":
            return f"{match.group(1)}{match.group(2)} "
    return "- "


def _insert_lines(
    lines: list[str], at: int, new: list[str], newline: str, *, after_entry: bool
) -> list[str]:
    """Insert ``new`` at line ``at`` with blank lines where Markdown needs them."""
    lines = list(lines)
    if at > 0 and not _eol(lines[at - 1]):
        lines[at - 1] += newline
    block = list(new)
    if (
        not after_entry
        and at > 0
        and not is_blank(lines[at - 1])
        and not lines[at - 1].lstrip().startswith("#")
    ):
        block.insert(0, newline)
    if at < len(lines) and not is_blank(lines[at]):
        block.append(newline)
    lines[at:at] = block
    return lines


def insert(
    doc: KnowledgeDocument,
    section: str,
    text: str,
    *,
    queued: bool,
    heading: str | None = None,
    comment: str | None = None,
    new_file_text: str | None = None,
) -> str:
    """Add an entry at the end of ``section`` (or of its ``heading`` group)."""
    if section not in SECTIONS:
        raise KnowledgeError(
            f"unknown knowledge section {section!r}",
            hint="Use 'Rules' or 'Info'.",
            code="KNOWLEDGE_SECTION",
        )
    text = normalize_entry_text(text)
    if not doc.text.strip() and new_file_text is not None:
        doc = parse_knowledge(new_file_text, scope=doc.scope, path=doc.path)
    nl = doc.newline
    marker = f"{QUEUED_MARKER} " if queued else ""
    body = marker + text + (f" {comment}" if comment else "")
    sec = _section_for_insert(doc, section)
    if sec is None:
        return _add_section(doc, section, body)
    in_section = [e for e in doc.entries if sec.start < e.start < sec.end]
    group = None
    if heading:
        key = heading.strip().casefold()
        group = next((g for g in sec.groups if g.name.strip().casefold() == key), None)
    if group is not None:
        members = [e for e in in_section if group.start < e.start < group.end]
        region_start, region_end = group.start, group.end
    else:
        first_group = sec.groups[0].start if sec.groups else sec.end
        members = [e for e in in_section if e.start < first_group]
        region_start, region_end = sec.start, first_group
    if members:
        last = members[-1]
        prefix = _bullet_like(doc, last)
        at, after_entry = last.end, True
    else:
        prefix = _bullet_like(doc, in_section[-1] if in_section else None)
        at = region_end
        while at > region_start + 1 and is_blank(doc.lines[at - 1]):
            at -= 1
        after_entry = False
    new = _item_lines(prefix, body, len(prefix), nl)
    return "".join(_insert_lines(doc.lines, at, new, nl, after_entry=after_entry))


def _add_section(doc: KnowledgeDocument, section: str, body: str) -> str:
    """A missing ``## Rules`` goes before ``## Info``; anything else at the end."""
    nl = doc.newline
    at = len(doc.lines)
    if section == "Rules" and doc.sections_named("Info"):
        at = doc.sections_named("Info")[0].start
    block = [f"## {section}{nl}", nl, f"- {body}{nl}"]
    lines = list(doc.lines)
    if at > 0 and not _eol(lines[at - 1]):
        lines[at - 1] += nl
    if at > 0 and not is_blank(lines[at - 1]):
        block.insert(0, nl)
    if at < len(lines):
        block.append(nl)
    lines[at:at] = block
    return "".join(lines)


def verify(
    before: KnowledgeDocument,
    after_text: str,
    *,
    expect_count: int,
    check: Callable[[KnowledgeDocument], str | None],
) -> KnowledgeDocument:
    """Re-parse an edit and make sure it did what it should, else refuse it."""
    after = parse_knowledge(after_text, scope=before.scope, path=before.path)
    problem = None
    if len(after.entries) != expect_count:
        problem = f"the edit would leave {len(after.entries)} entries instead of {expect_count}"
    else:
        problem = check(after)
    if problem:
        raise KnowledgeError(
            f"{before.path}: the change was not written: {problem}",
            hint="The text probably contains Markdown that changes the file's structure "
            "(an unclosed code fence, a heading); edit the file in a text editor.",
            code="KNOWLEDGE_EDIT_REFUSED",
        )
    return after
