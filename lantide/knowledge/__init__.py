"""Governed knowledge: what the agent may remember, and only what the analyst approved.

DESIGN.md section 7. Two plain Markdown files, the user's (user config directory,
``lantide.workspace.paths.user_knowledge_path()``) and the project's
(``projects/NAME/knowledge.md``), each with ``## Rules`` and ``## Info``, optionally
grouped by ``###`` headings, one entry per list item; ``[queued]`` marks a proposal
waiting for approval. Only Enabled entries ever reach the model.

The one object to use is :class:`KnowledgeBase`::

    from lantide.knowledge import KnowledgeBase

    kb = KnowledgeBase.for_project(project)          # or KnowledgeBase(user_path, project_path)
                                                     # project None: user knowledge only
    # -- the agent, every iteration (cheap: one stat per file, parsed again only on change)
    layer = kb.layer(budget_tokens=3000)
    layer.text          # str, the rendered prompts/knowledge.md.j2 ("" when nothing is enabled)
    layer.tokens        # int, count_tokens(layer.text)
    layer.mode          # "flat" | "catalog" ("catalog" when any file is over its threshold)
    layer.offers_tool   # bool: include the expand_knowledge_catalog tool (catalog mode, or
                        #       entries were cut for the budget and can be fetched by heading)
    layer.cut           # [{"scope", "section", "heading", "entries": n}] left out for the budget
    layer.cut_entries   # int
    layer.files         # [{"scope", "path", "exists", "mode", "size_chars", "limit_chars",
                        #   "enabled", "queued", "problems": [{"line", "message", "severity"}]}]
    layer.to_dict()     # all of the above, JSON-serializable
    kb.catalog_mode     # bool, by the size thresholds alone
    kb.expand(heading)  # the tool's result, JSON-serializable:
        # {"heading", "found": True, "count": n, "truncated": k,
        #  "entries": [{"scope", "section", "heading", "text"}]}
        # {"heading", "found": False, "count": 0, "entries": [], "truncated": 0,
        #  "headings": [names], "message"}
        # heading: a ### name, "Rules"/"Info" for ungrouped entries, or "Rules › Name".

    # -- after a turn, in the background (secondary model)
    result = kb.propose(complete, conversation_id="c1", turn=3,
                        analyst_messages=["..."], assistant_reply="...")
    result.added        # [Entry] appended as [queued] with <!-- source: conversation=c1 turn=3 -->
    result.dropped      # [{"text", "reason"}]: e.g. its quote is not in the analyst's words
    result.error        # str | None: the model failed or answered something unusable

    # -- before a new conversation first uses the knowledge
    if kb.needs_reorganize():                        # too large for flat mode, no ### headings
        for r in kb.reorganize(complete):            # apply=False to preview first
            r.applied, r.reason, r.diff              # refused answers leave the file as it is
            # kb.apply_reorganization(r) writes a previewed result

    # -- the analyst's panel and the command line
    kb.entries(scope=None)   # [Entry]: .ref ("3" project / "u3" user), .number, .scope,
                             # .section, .heading, .status ("enabled"|"queued"), .text,
                             # .line, .source; Entry.to_dict()
    kb.approve(ref) / kb.reject(ref) / kb.remove(ref) / kb.edit(ref, text)   # -> Entry
    kb.approve_many(refs) / kb.reject_many(refs) / kb.remove_many(refs)      # -> [Entry]
    kb.add(text, section="Rules"|"Info", scope=None, heading=None)           # -> Entry
    kb.to_dict()             # {"mode", "files": [{... "entries": [...], "problems": [...],
                             #   "mode", "limit_chars", "needs_reorganize"}]}

``complete(system: str, user: str) -> str`` is the injected model call; it may raise,
which is reported in the result, never raised. Every edit is re-parsed and checked before
it is written atomically, and refused when the file changed on disk meanwhile
(:class:`KnowledgeConflictError`) or is not UTF-8 (``CorruptFileError``). Errors derive
from :class:`lantide.errors.LantideError`.
"""

from __future__ import annotations

from lantide.knowledge.base import KnowledgeBase
from lantide.knowledge.layer import (
    DEFAULT_BUDGET_TOKENS,
    ENTRY_CHAR_CAP,
    FLAT_LIMITS,
    KnowledgeLayer,
)
from lantide.knowledge.model import (
    Entry,
    KnowledgeConflictError,
    KnowledgeDocument,
    KnowledgeError,
    Problem,
)
from lantide.knowledge.parser import parse_knowledge
from lantide.knowledge.proposals import ProposalResult
from lantide.knowledge.reorganize import ReorganizeResult
from lantide.knowledge.store import KnowledgeFile

EXPAND_TOOL = "expand_knowledge_catalog"

__all__ = [
    "KnowledgeBase",
    "KnowledgeLayer",
    "KnowledgeFile",
    "KnowledgeDocument",
    "Entry",
    "Problem",
    "ProposalResult",
    "ReorganizeResult",
    "KnowledgeError",
    "KnowledgeConflictError",
    "parse_knowledge",
    "FLAT_LIMITS",
    "DEFAULT_BUDGET_TOKENS",
    "ENTRY_CHAR_CAP",
    "EXPAND_TOOL",
]
