"""Reading a knowledge file (DESIGN.md section 7) with markdown-it-py.

The format is plain Markdown: ``## Rules`` and ``## Info`` sections, optionally grouped
by ``###`` headings, one entry per top-level list item, ``[queued]`` at the start of an
entry marks it Queued. Everything else (a title, other headings, comments, notes) is the
analyst's and is kept but not read as knowledge. Parsing never fails: what cannot be read
as an entry is reported as a :class:`Problem` with its line number.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from lantide.knowledge.model import (
    ENABLED,
    QUEUED,
    QUEUED_MARKER,
    SECTIONS,
    Entry,
    EntrySource,
    Group,
    KnowledgeDocument,
    Problem,
    Section,
)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# A list item's first line: indentation, bullet or number, the spaces before the content.
LIST_MARKER = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+|(?=\r?\n|\r|\Z))")
_QUEUED = re.compile(r"^\[queued\][ \t]*", re.IGNORECASE)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
SOURCE_COMMENT = re.compile(r"<!--\s*source:(.*?)-->", re.DOTALL)
_SOURCE_PAIR = re.compile(r"(\w+)=(\S+)")
_NOT_ENTRY_BLOCKS = {
    "paragraph_open": "text",
    "blockquote_open": "a quote",
    "code_block": "a code block",
    "fence": "a code block",
    "table_open": "a table",
}


class _RawGroup(TypedDict):
    name: str
    start: int


class _RawSection(TypedDict):
    """A ``## Rules`` / ``## Info`` section as the reader meets it (its end comes later)."""

    name: str
    start: int
    groups: list[_RawGroup]


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split the way Markdown counts them (\\n, \\r\\n, \\r)."""
    return _LINE.findall(text)


def is_blank(line: str) -> bool:
    return not line.strip()


def section_name(heading: str) -> str | None:
    """``Rules`` or ``Info`` for a ``##`` heading that names one (any case, ``:`` allowed)."""
    key = heading.strip().rstrip(":").strip().casefold()
    for name in SECTIONS:
        if key == name.casefold():
            return name
    return None


def item_body(lines: list[str]) -> tuple[str, int]:
    """The text of a list item without its bullet, continuation lines dedented.

    Returns the body and the content offset (the column where the text starts).
    """
    first = lines[0].rstrip("\r\n")
    match = LIST_MARKER.match(first)
    offset = len(match.group(0)) if match else len(first) - len(first.lstrip())
    if match and len(match.group(3).expandtabs(4)) > 4:
        # CommonMark: five or more spaces after the bullet start an indented code block,
        # the content itself begins one space after the bullet.
        offset = len(match.group(1)) + len(match.group(2)) + 1
    body = [first[offset:]]
    for line in lines[1:]:
        line = line.rstrip("\r\n")
        indent = len(line) - len(line.lstrip(" "))
        body.append(line[min(indent, offset) :])
    return "\n".join(body).rstrip(), offset


def parse_source(body: str) -> EntrySource | None:
    match = SOURCE_COMMENT.search(body)
    if not match:
        return None
    pairs: EntrySource = dict(_SOURCE_PAIR.findall(match.group(1)))
    turn = pairs.get("turn")
    if isinstance(turn, str) and turn.isdigit():
        pairs["turn"] = int(turn)
    return pairs or None


def clean_text(body: str) -> str:
    """What the model may see of an entry: no HTML comments, no trailing spaces."""
    text = HTML_COMMENT.sub("", body)
    text = "\n".join(re.sub(r"[ \t]{2,}", " ", line).rstrip() for line in text.split("\n"))
    return text.strip()


def split_status(body: str) -> tuple[str, str]:
    """``(status, body without the marker)``."""
    match = _QUEUED.match(body)
    if match:
        return QUEUED, body[match.end() :]
    return ENABLED, body


def _line_map(token: Token) -> list[int]:
    """``[first line, end line)`` of a block token; markdown-it sets it on every block
    token this module reads (opening tokens, fences, HTML blocks)."""
    assert token.map is not None
    return token.map


def _heading_text(tokens: list[Token], index: int) -> str:
    inline = tokens[index + 1] if index + 1 < len(tokens) else None
    return inline.content.strip() if inline is not None and inline.type == "inline" else ""


class _Reader:
    """One pass over the top-level tokens, tracking the current section and group."""

    def __init__(self, lines: list[str], scope: str):
        self.lines = lines
        self.scope = scope
        self.entries: list[Entry] = []
        self.problems: list[Problem] = []
        self.sections: list[_RawSection] = []
        self.section: str | None = None
        self.other_heading: str | None = None  # a ## heading that is neither Rules nor Info
        self.group: str | None = None

    def close_region(self) -> None:
        self.section = None
        self.group = None
        self.other_heading = None

    def heading(self, level: int, text: str, line: int) -> None:
        if level <= 2:
            self.close_region()
            if level == 2:
                name = section_name(text)
                if name is None:
                    self.other_heading = text
                    return
                if any(s["name"] == name for s in self.sections):
                    self.problems.append(
                        Problem(
                            line + 1,
                            f"a second '## {name}' section; its entries are read as {name} too",
                        )
                    )
                self.section = name
                self.sections.append({"name": name, "start": line, "groups": []})
            return
        if self.section is None:
            return
        if level == 3:
            self.group = text
            self.sections[-1]["groups"].append({"name": text, "start": line})
        else:
            self.problems.append(
                Problem(
                    line + 1,
                    f"a level-{level} heading is not a group; only ### headings group "
                    f"entries (entries below stay under "
                    f"{self.group or self.section!r})",
                )
            )

    def not_entry(self, what: str, line: int) -> None:
        if self.section is not None:
            self.problems.append(
                Problem(
                    line + 1,
                    f"{what} under '## {self.section}' that is not a list item is not "
                    f"an entry; start it with '- ' to make it one",
                )
            )

    def stray_list(self, line: int) -> None:
        where = f"'## {self.other_heading}'" if self.other_heading else "no ## Rules or ## Info"
        self.problems.append(
            Problem(
                line + 1,
                f"a list under {where} is not read as knowledge; only entries under "
                f"## Rules and ## Info are",
            )
        )

    def item(self, start: int, end: int) -> None:
        while end > start and is_blank(self.lines[end - 1]):
            end -= 1
        if end <= start:
            return
        assert self.section is not None  # parse_knowledge reads items inside a section only
        body, _ = item_body(self.lines[start:end])
        status, rest = split_status(body)
        text = clean_text(rest)
        if not text:
            self.problems.append(Problem(start + 1, "an empty entry is not read"))
            return
        self.entries.append(
            Entry(
                number=len(self.entries) + 1,
                scope=self.scope,
                section=self.section,
                heading=self.group,
                status=status,
                text=text,
                raw="".join(self.lines[start:end]),
                start=start,
                end=end,
                source=parse_source(rest),
            )
        )


def _finish_sections(raw: list[_RawSection], tokens: list[Token], n_lines: int) -> list[Section]:
    # A section ends at the next level-1 or level-2 heading (or the end of the file).
    cuts = sorted(
        _line_map(t)[0]
        for t in tokens
        if t.type == "heading_open" and t.level == 0 and t.tag in ("h1", "h2")
    )
    out = []
    for sec in raw:
        end = next((c for c in cuts if c > sec["start"]), n_lines)
        starts = [g["start"] for g in sec["groups"]] + [end]
        groups = tuple(
            Group(sec["name"], g["name"], g["start"], starts[i + 1])
            for i, g in enumerate(sec["groups"])
        )
        out.append(Section(sec["name"], sec["start"], end, groups))
    return out


def parse_knowledge(text: str, *, scope: str, path: Path | None = None) -> KnowledgeDocument:
    """Parse ``text`` (the file's contents, any line endings) into a document."""
    bom = ""
    if text.startswith("\ufeff"):
        bom, text = "\ufeff", text[1:]
    lines = split_lines(text)
    tokens = _markdown().parse(text)
    reader = _Reader(lines, scope)
    list_depth = 0
    for i, tok in enumerate(tokens):
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            if list_depth == 0 and tok.level == 0 and reader.section is None:
                reader.stray_list(_line_map(tok)[0])
            list_depth += 1
            continue
        if tok.type in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
            continue
        if tok.type == "list_item_open" and tok.level == 1 and reader.section is not None:
            reader.item(_line_map(tok)[0], _line_map(tok)[1])
            continue
        if tok.level != 0:
            continue
        if tok.type == "heading_open":
            reader.heading(int(tok.tag[1]), _heading_text(tokens, i), _line_map(tok)[0])
        elif tok.type in _NOT_ENTRY_BLOCKS:
            reader.not_entry(_NOT_ENTRY_BLOCKS[tok.type], _line_map(tok)[0])
        elif tok.type == "html_block" and not HTML_COMMENT.fullmatch(tok.content.strip()):
            reader.not_entry("HTML", _line_map(tok)[0])
    return KnowledgeDocument(
        scope=scope,
        path=path,
        lines=lines,
        entries=reader.entries,
        sections=_finish_sections(reader.sections, tokens, len(lines)),
        problems=reader.problems,
        bom=bom,
    )


def queued_marker_span(first_line: str) -> tuple[int, int] | None:
    """Where ``[queued]`` and the spaces after it sit in an entry's first line."""
    match = LIST_MARKER.match(first_line)
    if not match:
        return None
    offset = match.end()
    found = _QUEUED.match(first_line[offset:])
    if not found:
        return None
    return offset, offset + found.end()


__all__ = ["parse_knowledge", "split_lines", "item_body", "QUEUED_MARKER", "LIST_MARKER"]
