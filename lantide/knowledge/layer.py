"""The knowledge layer of the system prompt, and ``expand_knowledge_catalog``.

Only Enabled entries are ever rendered. A file is in *flat* mode while it is under its
threshold (user 2,500 characters, project 5,000; measured by
:attr:`KnowledgeDocument.size_chars`) and its entries are included in full; at or over
the threshold it is in *catalog* mode and only an index of its headings with entry
counts is included, the entries coming through ``expand_knowledge_catalog(heading)``.

Safety: every entry and heading is rendered as a JSON string (quotes, newlines and
control characters escaped), so an entry can never start a line of its own in the
prompt, and it is capped at :data:`ENTRY_CHAR_CAP` characters. The layer's mode depends
only on sizes, never on what an entry says.

Budget: when the rendered layer exceeds ``budget_tokens``, items are dropped, Info before
Rules and later before earlier, and a marker says what was left out. A budget too small
even for the layer's framing gives an empty layer (everything reported in ``cut``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from lantide.knowledge.model import Entry, KnowledgeDocument, ProblemDict
from lantide.templates import render_prompt
from lantide.tokens import count_tokens

FLAT_LIMITS = {"user": 2500, "project": 5000}
ENTRY_CHAR_CAP = 1000
HEADING_CHAR_CAP = 100
DEFAULT_BUDGET_TOKENS = 3000
DEFAULT_EXPAND_TOKENS = 4000
_CUT_SUMMARY_GROUPS = 8
_TITLES = {"user": "User knowledge (every project)", "project": "Project knowledge"}


def quote(text: str, cap: int) -> str:
    """``text`` as a JSON string, shortened to ``cap`` characters with a note."""
    if len(text) <= cap:
        return json.dumps(text, ensure_ascii=False)
    return (
        json.dumps(text[:cap].rstrip() + "…", ensure_ascii=False)
        + f" [entry cut at {cap:,} of {len(text):,} characters]"
    )


def file_mode(doc: KnowledgeDocument) -> str:
    return "catalog" if doc.size_chars >= FLAT_LIMITS[doc.scope] else "flat"


def _section_rank(section: str) -> int:
    return 0 if section == "Rules" else 1


class CutGroup(TypedDict):
    """Entries of one heading left out of the layer for the budget."""

    scope: str
    section: str
    heading: str | None
    entries: int


class LayerFile(TypedDict):
    """One knowledge file as the layer used it (:attr:`KnowledgeLayer.files`)."""

    scope: str
    path: str | None
    exists: bool
    mode: str  # flat or catalog
    size_chars: int
    limit_chars: int
    enabled: int
    queued: int
    problems: list[ProblemDict]


class PartGroup(TypedDict):
    """A group of entries in a flat part: its label and the quoted entries."""

    label: str
    entries: list[str]


class IndexLine(TypedDict):
    """A line of a catalog part's index."""

    name: str
    section: str
    count: int


class LayerPart(TypedDict):
    """One file's part of the rendered layer (the template's input)."""

    title: str
    mode: str
    enabled_count: int
    groups: NotRequired[list[PartGroup]]  # flat
    index: NotRequired[list[IndexLine]]  # catalog


class LayerDict(TypedDict):
    """:meth:`KnowledgeLayer.to_dict`."""

    mode: str
    text: str
    tokens: int
    budget_tokens: int | None
    offers_tool: bool
    cut: list[CutGroup]
    cut_entries: int
    capped_entries: list[str]
    files: list[LayerFile]


class ExpandedEntry(TypedDict):
    scope: str
    section: str
    heading: str | None
    text: str  # cut at ENTRY_CHAR_CAP
    cut_from_chars: NotRequired[int]  # its length when it was cut


class Expansion(TypedDict):
    """``expand_knowledge_catalog``'s result (:func:`expand`)."""

    heading: str
    found: bool
    count: int
    entries: list[ExpandedEntry]
    truncated: int  # entries left out for the token budget
    headings: NotRequired[list[str]]  # when nothing was found: the ones there are
    message: NotRequired[str]


@dataclass
class KnowledgeLayer:
    """The rendered knowledge layer and what went into it."""

    mode: str  # "flat" | "catalog" (catalog when any file is in catalog mode)
    text: str  # "" when there is no Enabled knowledge
    tokens: int
    budget_tokens: int | None
    offers_tool: bool  # include expand_knowledge_catalog: catalog mode, or something cut
    cut: list[CutGroup] = field(default_factory=list)
    cut_entries: int = 0
    capped_entries: list[str] = field(default_factory=list)
    files: list[LayerFile] = field(default_factory=list)

    @property
    def catalog_mode(self) -> bool:
        return self.mode == "catalog"

    def to_dict(self) -> LayerDict:
        return {
            "mode": self.mode,
            "text": self.text,
            "tokens": self.tokens,
            "budget_tokens": self.budget_tokens,
            "offers_tool": self.offers_tool,
            "cut": self.cut,
            "cut_entries": self.cut_entries,
            "capped_entries": self.capped_entries,
            "files": self.files,
        }


@dataclass(frozen=True)
class _Item:
    """One thing the budget can drop: an entry (flat) or an index line (catalog)."""

    order: int  # position in the rendered layer
    scope: str
    section: str
    heading: str | None
    entries: tuple[Entry, ...]


def _items(docs: list[KnowledgeDocument], modes: dict[str, str]) -> list[_Item]:
    items: list[_Item] = []
    for doc in docs:
        enabled = doc.enabled_entries()
        if modes[doc.scope] == "flat":
            items.extend(_Item(len(items), doc.scope, e.section, e.heading, (e,)) for e in enabled)
            continue
        groups: dict[tuple[str, str | None], list[Entry]] = {}
        for e in enabled:
            groups.setdefault((e.section, e.heading), []).append(e)
        for (section, heading), members in groups.items():
            items.append(_Item(len(items), doc.scope, section, heading, tuple(members)))
    return items


def _priority(items: list[_Item]) -> list[_Item]:
    """The order in which items are kept: Rules first, then document order."""
    return sorted(items, key=lambda it: (_section_rank(it.section), it.order))


def _label(section: str, heading: str | None) -> str:
    if heading is None:
        return section
    return f"{section} › {quote(heading, HEADING_CHAR_CAP)}"


def _parts(
    docs: list[KnowledgeDocument],
    modes: dict[str, str],
    kept: list[_Item],
    project_name: str | None,
) -> list[LayerPart]:
    parts = []
    for doc in docs:
        mine = sorted((it for it in kept if it.scope == doc.scope), key=lambda it: it.order)
        if not mine:
            continue
        title = _TITLES[doc.scope]
        if doc.scope == "project" and project_name:
            # project.json can be hand-edited: one line, capped, like any user text
            title = f"{title}: {' '.join(str(project_name).split())[:HEADING_CHAR_CAP]}"
        part: LayerPart = {
            "title": title,
            "mode": modes[doc.scope],
            "enabled_count": len(doc.enabled_entries()),
        }
        if modes[doc.scope] == "flat":
            groups: list[PartGroup] = []
            for it in sorted(mine, key=lambda it: (_section_rank(it.section), it.order)):
                label = _label(it.section, it.heading)
                if not groups or groups[-1]["label"] != label:
                    groups.append({"label": label, "entries": []})
                groups[-1]["entries"].append(quote(it.entries[0].text, ENTRY_CHAR_CAP))
            part["groups"] = groups
        else:
            part["index"] = [
                {
                    "name": quote(
                        it.heading if it.heading is not None else it.section, HEADING_CHAR_CAP
                    ),
                    "section": it.section,
                    "count": len(it.entries),
                }
                for it in sorted(mine, key=lambda it: (_section_rank(it.section), it.order))
            ]
        parts.append(part)
    return parts


def _cut_report(dropped: list[_Item]) -> tuple[list[CutGroup], int, str]:
    groups: dict[tuple[str, str, str | None], int] = {}
    for it in sorted(dropped, key=lambda it: it.order):
        key = (it.scope, it.section, it.heading)
        groups[key] = groups.get(key, 0) + len(it.entries)
    cut: list[CutGroup] = [
        {"scope": s, "section": sec, "heading": h, "entries": n}
        for (s, sec, h), n in groups.items()
    ]
    total = sum(groups.values())
    names = [
        f"{c['scope']} {_label(c['section'], c['heading'])} ({c['entries']})"
        for c in cut[:_CUT_SUMMARY_GROUPS]
    ]
    if len(cut) > _CUT_SUMMARY_GROUPS:
        names.append(f"{len(cut) - _CUT_SUMMARY_GROUPS} more headings")
    summary = f"{total} {'entry' if total == 1 else 'entries'}: " + "; ".join(names)
    return cut, total, summary


def build_layer(
    docs: list[KnowledgeDocument],
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
    *,
    project_name: str | None = None,
) -> KnowledgeLayer:
    """Render the layer for ``docs`` (user first, then project) within ``budget_tokens``."""
    modes = {doc.scope: file_mode(doc) for doc in docs}
    mode = "catalog" if "catalog" in modes.values() else "flat"
    files: list[LayerFile] = [
        {
            "scope": d.scope,
            "path": str(d.path) if d.path else None,
            "exists": d.exists,
            "mode": modes[d.scope],
            "size_chars": d.size_chars,
            "limit_chars": FLAT_LIMITS[d.scope],
            "enabled": len(d.enabled_entries()),
            "queued": len(d.queued_entries()),
            "problems": [p.to_dict() for p in d.problems],
        }
        for d in docs
    ]
    items = _items(docs, modes)
    if not items:
        return KnowledgeLayer(mode, "", 0, budget_tokens, mode == "catalog", files=files)
    ranked = _priority(items)

    def render(keep: int) -> tuple[str, list[_Item]]:
        kept, dropped = ranked[:keep], ranked[keep:]
        cut = None
        if dropped:
            cut = {"summary": _cut_report(dropped)[2]}
        text = render_prompt(
            "knowledge.md.j2",
            parts=_parts(docs, modes, kept, project_name),
            cut=cut,
            offers_tool=mode == "catalog" or bool(dropped),
        )
        return text, dropped

    text, dropped = render(len(ranked))
    if budget_tokens is not None and count_tokens(text) > budget_tokens:
        text, dropped = _fit(render, len(ranked), budget_tokens)
    cut, cut_total, _ = _cut_report(dropped) if dropped else ([], 0, "")
    capped = [
        e.ref
        for it in ranked
        if it not in dropped and modes[it.scope] == "flat"
        for e in it.entries
        if len(e.text) > ENTRY_CHAR_CAP
    ]
    return KnowledgeLayer(
        mode=mode,
        text=text,
        tokens=count_tokens(text),
        budget_tokens=budget_tokens,
        offers_tool=mode == "catalog" or bool(dropped),
        cut=cut,
        cut_entries=cut_total,
        capped_entries=capped,
        files=files,
    )


def _fit(
    render: Callable[[int], tuple[str, list[_Item]]], n: int, budget: int
) -> tuple[str, list[_Item]]:
    """The most items whose rendering fits ``budget`` (binary search; the marker grows
    slowly as items drop, so the token count is monotonic in practice)."""
    lo, hi = 0, n - 1  # n items is known not to fit
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        text, dropped = render(mid)
        if count_tokens(text) <= budget:
            best = (text, dropped)
            lo = mid + 1
        else:
            hi = mid - 1
    if best is None:
        # Not even the framing fits: no layer at all beats a sentence cut in half.
        return "", render(0)[1]
    return best


# -- expand_knowledge_catalog ------------------------------------------------------------


def _norm(name: str) -> str:
    name = name.strip().strip("\"'“”‘’`").strip()
    return " ".join(name.split()).casefold()


def _matches(entry: Entry, query: str) -> bool:
    if _norm(entry.group_name) == query:
        return True
    for sep in ("›", "/", ">", ":"):
        if sep in query:
            section, _, heading = query.partition(sep)
            if _norm(section) == entry.section.casefold() and _norm(heading) == _norm(
                entry.group_name
            ):
                return True
    return False


def headings(docs: list[KnowledgeDocument]) -> list[str]:
    seen: list[str] = []
    for doc in docs:
        for e in doc.enabled_entries():
            if e.group_name not in seen:
                seen.append(e.group_name)
    return seen


def expand(
    docs: list[KnowledgeDocument], heading: str, max_tokens: int = DEFAULT_EXPAND_TOKENS
) -> Expansion:
    """The Enabled entries under ``heading``, as a JSON-serializable dict."""
    query = _norm(str(heading or ""))
    found = [e for doc in docs for e in doc.enabled_entries() if query and _matches(e, query)]
    if not found:
        return {
            "heading": heading,
            "found": False,
            "count": 0,
            "entries": [],
            "truncated": 0,
            "headings": headings(docs),
            "message": f"no knowledge heading {heading!r}; use one of 'headings'",
        }
    out: list[ExpandedEntry] = []
    used = 0
    for e in found:
        text = e.text if len(e.text) <= ENTRY_CHAR_CAP else e.text[:ENTRY_CHAR_CAP] + "…"
        item: ExpandedEntry = {
            "scope": e.scope,
            "section": e.section,
            "heading": e.heading,
            "text": text,
        }
        if len(e.text) > ENTRY_CHAR_CAP:
            item["cut_from_chars"] = len(e.text)
        cost = count_tokens(json.dumps(item, ensure_ascii=False))
        if out and used + cost > max_tokens:
            break
        out.append(item)
        used += cost
    return {
        "heading": heading,
        "found": True,
        "count": len(found),
        "entries": out,
        "truncated": len(found) - len(out),
    }
