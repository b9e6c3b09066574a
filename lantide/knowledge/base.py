"""KnowledgeBase: the user's and the focused project's knowledge, as one object.

The agent asks it for the prompt layer and ``expand_knowledge_catalog`` results; the
command line and the desktop app use it to list, approve, reject, edit, add and remove
entries; background calls use it to propose entries and to reorganize a large file.
Every call re-checks the files' modification times, so edits made in a text editor are
seen at the next call and nothing is re-read without one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

from lantide.knowledge import edits, proposals, reorganize
from lantide.knowledge import layer as injection
from lantide.knowledge.model import (
    QUEUED,
    SECTIONS,
    Entry,
    KnowledgeConflictError,
    KnowledgeDocument,
    KnowledgeError,
    KnowledgeFileDict,
    ProblemDict,
    StatKey,
)
from lantide.knowledge.parser import clean_text
from lantide.knowledge.reorganize import ReorganizeResult
from lantide.knowledge.store import KnowledgeFile

if TYPE_CHECKING:
    from lantide.workspace.model import Project

# What a cached layer was built from: each file's (path, exists, stat key), budget, name
_LayerKey = tuple[tuple[tuple[str, bool, StatKey | None], ...], int | None, str | None]

Complete = Callable[[str, str], str]  # (system, user) -> the model's text


class ProposalSource(TypedDict):
    """Where a queued entry came from (written as an HTML comment beside it)."""

    conversation: str
    turn: int
    at: NotRequired[str]  # ISO time; now when not given


class FileProblem(ProblemDict):
    """A problem of one of the files (:meth:`KnowledgeBase.problems`)."""

    scope: str
    path: str


class KnowledgeFileInfo(KnowledgeFileDict):
    """A file in :meth:`KnowledgeBase.to_dict`: its entries, problems and mode."""

    mode: str  # flat or catalog
    limit_chars: int
    needs_reorganize: bool


class KnowledgeOverview(TypedDict):
    """:meth:`KnowledgeBase.to_dict` (``lantide knowledge --json``, the knowledge panel)."""

    mode: str  # catalog when any file is in catalog mode
    files: list[KnowledgeFileInfo]


class KnowledgeBase:
    """User knowledge plus (optionally) one project's knowledge.

    ``user_path`` defaults to the user config directory's ``knowledge.md``; pass
    ``project_path=None`` when no project is focused.
    """

    def __init__(
        self,
        user_path: Path | str | None = None,
        project_path: Path | str | None = None,
        *,
        project_name: str | None = None,
    ):
        if user_path is None:
            from lantide.workspace.paths import user_knowledge_path

            user_path = user_knowledge_path()
        self.user_file = KnowledgeFile(user_path, "user")
        self.project_file = KnowledgeFile(project_path, "project") if project_path else None
        self.project_name = project_name
        self._layer_memo: tuple[_LayerKey, injection.KnowledgeLayer] | None = None

    @classmethod
    def for_project(
        cls, project: Project | None, user_path: Path | str | None = None
    ) -> KnowledgeBase:
        """For a :class:`lantide.workspace.model.Project` (or None: user knowledge only)."""
        if project is None:
            return cls(user_path)
        return cls(user_path, project.knowledge_path, project_name=project.name)

    def __repr__(self) -> str:
        return f"KnowledgeBase(user={self.user_file.path}, project={self.project_path})"

    # -- reading -------------------------------------------------------------------------

    @property
    def project_path(self) -> Path | None:
        return self.project_file.path if self.project_file else None

    @property
    def files(self) -> list[KnowledgeFile]:
        """User first, then project: the order of the prompt layer."""
        return [self.user_file] + ([self.project_file] if self.project_file else [])

    def file(self, scope: str) -> KnowledgeFile:
        if scope == "user":
            return self.user_file
        if scope == "project" and self.project_file is not None:
            return self.project_file
        if scope == "project":
            raise KnowledgeError(
                "no project is selected, so there is no project knowledge",
                hint="Pass --project NAME, or use uN for user knowledge.",
                code="KNOWLEDGE_NO_PROJECT",
            )
        raise KnowledgeError(
            f"unknown knowledge scope {scope!r}",
            hint="Use 'user' or 'project'.",
            code="KNOWLEDGE_SCOPE",
        )

    def documents(self) -> list[KnowledgeDocument]:
        return [f.load() for f in self.files]

    @contextmanager
    def _editing(self) -> Iterator[None]:
        """Hold the files' locks (in path order, so two editors never deadlock) across a
        read-modify-write: what is read inside cannot be replaced before it is written."""
        with ExitStack() as stack:
            for kfile in sorted(self.files, key=lambda f: str(f.path)):
                stack.enter_context(kfile.editing())
            yield

    def document(self, scope: str) -> KnowledgeDocument:
        return self.file(scope).load()

    def entries(self, scope: str | None = None) -> list[Entry]:
        docs = self.documents() if scope is None else [self.document(scope)]
        return [e for d in docs for e in d.entries]

    @property
    def catalog_mode(self) -> bool:
        """True when a file is at or over its flat-mode threshold (sizes only)."""
        return any(injection.file_mode(d) == "catalog" for d in self.documents())

    @property
    def mode(self) -> str:
        return "catalog" if self.catalog_mode else "flat"

    def layer(
        self,
        budget_tokens: int | None = injection.DEFAULT_BUDGET_TOKENS,
    ) -> injection.KnowledgeLayer:
        """The knowledge layer for the system prompt (see :mod:`lantide.knowledge.layer`).

        Rendered again only when a file or the budget changed: the agent asks every
        iteration, and then this costs one ``stat`` per file.
        """
        docs = self.documents()
        key: _LayerKey = (
            tuple((str(d.path), d.exists, d.stat_key) for d in docs),
            budget_tokens,
            self.project_name,
        )
        if self._layer_memo is not None and self._layer_memo[0] == key:
            return self._layer_memo[1]
        built = injection.build_layer(docs, budget_tokens, project_name=self.project_name)
        self._layer_memo = (key, built)
        return built

    def expand(
        self, heading: str, max_tokens: int = injection.DEFAULT_EXPAND_TOKENS
    ) -> injection.Expansion:
        """``expand_knowledge_catalog(heading)``: that heading's Enabled entries."""
        return injection.expand(self.documents(), heading, max_tokens)

    def problems(self) -> list[FileProblem]:
        return [
            {"scope": d.scope, "path": str(d.path), **p.to_dict()}
            for d in self.documents()
            for p in d.problems
        ]

    def to_dict(self) -> KnowledgeOverview:
        docs = self.documents()
        files: list[KnowledgeFileInfo] = []
        out: KnowledgeOverview = {
            "mode": "catalog" if any(injection.file_mode(d) == "catalog" for d in docs) else "flat",
            "files": files,
        }
        for d in docs:
            files.append(
                {
                    **d.to_dict(),
                    "mode": injection.file_mode(d),
                    "limit_chars": injection.FLAT_LIMITS[d.scope],
                    "needs_reorganize": _needs_reorganize(d),
                }
            )
        return out

    # -- entry references ------------------------------------------------------------------

    def resolve(self, ref: int | str, scope: str | None = None) -> Entry:
        """An entry by its reference: ``3`` (project, else user), ``u3`` (user), ``p3``."""
        text = str(ref).strip().lower()
        if text[:1] in ("u", "p"):
            scope, text = ("user" if text[0] == "u" else "project"), text[1:]
        if not text.isdigit():
            raise KnowledgeError(
                f"{ref!r} is not a knowledge entry number",
                hint="Use the number shown by: lantide knowledge WORKSPACE "
                "(e.g. 3, or u3 for user knowledge).",
                code="KNOWLEDGE_BAD_REF",
            )
        scope = scope or ("project" if self.project_file else "user")
        return self.document(scope).entry(int(text))

    def _resolve_many(
        self,
        refs: Iterable[int | str],
        scope: str | None,
        expect_text: str | None,
    ) -> tuple[KnowledgeFile, KnowledgeDocument, list[Entry]]:
        found = [self.resolve(r, scope) for r in refs]
        if not found:
            raise KnowledgeError("no knowledge entry given", code="KNOWLEDGE_BAD_REF")
        scopes = {e.scope for e in found}
        if len(scopes) > 1:
            raise KnowledgeError(
                "give entries of one file at a time (user or project)", code="KNOWLEDGE_BAD_REF"
            )
        kfile = self.file(found[0].scope)
        doc = kfile.load()
        if expect_text is not None and found[0].text != expect_text:
            raise KnowledgeConflictError(
                f"entry {found[0].ref} of {kfile.path} now reads {found[0].text[:60]!r}",
                hint="The file changed since it was listed; list the entries again.",
            )
        return kfile, doc, list({e.number: e for e in found}.values())

    # -- the analyst's decisions -------------------------------------------------------------

    def approve(
        self, ref: int | str, *, scope: str | None = None, expect_text: str | None = None
    ) -> Entry:
        """Enable a Queued entry; returns it as it is now. Enabled entries stay enabled."""
        return self.approve_many([ref], scope=scope, expect_text=expect_text)[0]

    def approve_many(
        self, refs: Iterable[int | str], *, scope: str | None = None, expect_text: str | None = None
    ) -> list[Entry]:
        with self._editing():
            kfile, doc, chosen = self._resolve_many(refs, scope, expect_text)
            numbers = [e.number for e in chosen]
            text = edits.approve(doc, chosen)
            after = edits.verify(
                doc,
                text,
                expect_count=len(doc.entries),
                check=lambda a: next(
                    (
                        f"entry {n} is still queued"
                        for n in numbers
                        if a.entries[n - 1].status == QUEUED
                    ),
                    None,
                ),
            )
            if text != doc.text:
                kfile.write(doc, text, after)
            return [after.entries[n - 1] for n in numbers]

    def reject(
        self, ref: int | str, *, scope: str | None = None, expect_text: str | None = None
    ) -> Entry:
        """Remove a Queued entry and remember it so it is not proposed again."""
        return self.reject_many([ref], scope=scope, expect_text=expect_text)[0]

    def reject_many(
        self, refs: Iterable[int | str], *, scope: str | None = None, expect_text: str | None = None
    ) -> list[Entry]:
        with self._editing():
            kfile, doc, chosen = self._resolve_many(refs, scope, expect_text)
            enabled = [e.ref for e in chosen if e.status != QUEUED]
            if enabled:
                raise KnowledgeError(
                    f"{'entries' if len(enabled) > 1 else 'entry'} {', '.join(enabled)} "
                    f"{'are' if len(enabled) > 1 else 'is'} Enabled; only Queued entries can be "
                    f"rejected",
                    hint="To delete an approved entry use --remove (or edit the file).",
                    code="KNOWLEDGE_NOT_QUEUED",
                )
            self._delete(kfile, doc, chosen)
            for e in chosen:
                kfile.record_rejected(e.text, e.source)
            return chosen

    def remove(
        self, ref: int | str, *, scope: str | None = None, expect_text: str | None = None
    ) -> Entry:
        """Delete any entry (the analyst's explicit choice); returns what was removed."""
        return self.remove_many([ref], scope=scope, expect_text=expect_text)[0]

    def remove_many(
        self, refs: Iterable[int | str], *, scope: str | None = None, expect_text: str | None = None
    ) -> list[Entry]:
        with self._editing():
            kfile, doc, chosen = self._resolve_many(refs, scope, expect_text)
            self._delete(kfile, doc, chosen)
            return chosen

    def _delete(self, kfile: KnowledgeFile, doc: KnowledgeDocument, chosen: list[Entry]) -> None:
        text = edits.remove(doc, chosen)
        keep = [e.raw for e in doc.entries if e not in chosen]
        after = edits.verify(
            doc,
            text,
            expect_count=len(doc.entries) - len(chosen),
            check=lambda a: (
                None if [e.raw for e in a.entries] == keep else "other entries would change"
            ),
        )
        kfile.write(doc, text, after)

    def edit(
        self, ref: int | str, text: str, *, scope: str | None = None, expect_text: str | None = None
    ) -> Entry:
        """Replace an entry's text; its status, place and source stay."""
        with self._editing():
            kfile, doc, (entry,) = self._resolve_many([ref], scope, expect_text)
            new_text = edits.replace_text(doc, entry, text)
            wanted = clean_text(edits.normalize_entry_text(text))
            after = edits.verify(
                doc,
                new_text,
                expect_count=len(doc.entries),
                check=lambda a: (
                    None
                    if a.entries[entry.number - 1].text == wanted
                    and a.entries[entry.number - 1].status == entry.status
                    else "the entry would not read as given"
                ),
            )
            kfile.write(doc, new_text, after)
            return after.entries[entry.number - 1]

    def add(
        self,
        text: str,
        *,
        section: str = "Rules",
        scope: str | None = None,
        heading: str | None = None,
        queued: bool = False,
        source: ProposalSource | None = None,
    ) -> Entry:
        """Append an entry to a section (an Enabled one unless ``queued``)."""
        with self._editing():
            scope = scope or ("project" if self.project_file else "user")
            section = _section_name(section)
            kfile = self.file(scope)
            doc = kfile.load()
            comment = None
            if source is not None:
                comment = edits.source_comment(
                    source["conversation"], source["turn"], source.get("at")
                )
            new_text = edits.insert(
                doc,
                section,
                text,
                queued=queued,
                heading=heading,
                comment=comment,
                new_file_text=kfile.new_file_text(),
            )
            wanted = clean_text(edits.normalize_entry_text(text))
            status = QUEUED if queued else "enabled"

            def landed(after: KnowledgeDocument) -> str | None:
                new = [
                    e
                    for e in after.entries
                    if e.text == wanted and e.status == status and e.section == section
                ]
                return None if new else "the new entry would not be read back as given"

            after = edits.verify(doc, new_text, expect_count=len(doc.entries) + 1, check=landed)
            kfile.write(doc, new_text, after)
            # The new entry is the one the old entries do not account for (an old last line
            # may have gained a line ending, so compare texts, not raw lines).
            unmatched = Counter((e.text, e.status, e.section) for e in doc.entries)
            for e in after.entries:
                key = (e.text, e.status, e.section)
                if unmatched[key] > 0:
                    unmatched[key] -= 1
                else:
                    return e
            raise AssertionError("verify() guarantees a new entry")  # pragma: no cover

    # -- background model calls ----------------------------------------------------------------

    def propose(
        self,
        complete: Complete,
        *,
        conversation_id: str,
        turn: int,
        analyst_messages: str | list[str],
        assistant_reply: str = "",
        max_proposals: int = proposals.MAX_PROPOSALS_PER_TURN,
    ) -> proposals.ProposalResult:
        """Ask the secondary model for entries the analyst stated in this turn and append
        them as Queued. Never raises for the model's failures: see ``result.error``."""
        if isinstance(analyst_messages, str):
            analyst_messages = [analyst_messages]
        messages = [m for m in analyst_messages if isinstance(m, str) and m.strip()]
        result = proposals.ProposalResult()
        if not any(proposals.may_hold_knowledge(m) for m in messages):
            return result  # only questions, or too short to quote: no call at all
        scopes = [f.scope for f in self.files]
        docs = self.documents()
        existing = [e.text for d in docs for e in d.entries]
        rejected = [t for f in self.files for t in f.rejected_texts()]
        system, user = proposals.build_prompt(
            messages,
            assistant_reply,
            scopes=scopes,
            existing=existing,
            rejected=rejected,
            project_name=self.project_name,
            max_proposals=max_proposals,
            headings=sorted({g.name for d in docs for s in d.sections for g in s.groups}),
        )
        try:
            output = complete(system, user)
        except Exception as exc:  # an injected model call: report, never break the turn
            result.error = f"the model call failed: {_failure(exc)}"
            return result
        try:
            accepted, result.dropped = proposals.parse_proposals(
                str(output or ""),
                messages,
                scopes=scopes,
                existing=existing,
                rejected=rejected,
                max_proposals=max_proposals,
            )
        except ValueError as exc:
            result.error = f"the model's answer was not usable ({exc}); nothing was added"
            return result
        for p in accepted:
            try:
                result.added.append(
                    self.add(
                        p.text,
                        section=p.section,
                        scope=p.scope,
                        heading=p.heading,
                        queued=True,
                        source={"conversation": conversation_id, "turn": turn},
                    )
                )
            except KnowledgeError as exc:
                result.dropped.append({"text": p.text, "reason": exc.message})
        return result

    def needs_reorganize(self) -> bool:
        """True when a file is too large for flat mode and has no ``###`` headings."""
        return bool(self.reorganize_scopes())

    def reorganize_scopes(self) -> list[str]:
        return [d.scope for d in self.documents() if _needs_reorganize(d)]

    def reorganize(
        self,
        complete: Complete,
        *,
        apply: bool = True,
    ) -> list[reorganize.ReorganizeResult]:
        """Group each file that needs it under ``###`` headings by the secondary model.

        Returns one result per file handled; ``result.applied`` says whether the file was
        rewritten, ``result.reason`` why not, ``result.diff`` what changed (show it to the
        analyst). With ``apply=False`` nothing is written; pass the result to
        :meth:`apply_reorganization` once the analyst agrees.
        """
        results = []
        for kfile in self.files:
            doc = kfile.load()
            if not _needs_reorganize(doc):
                continue
            system, user = reorganize.build_prompt(doc)
            try:
                output = complete(system, user)
            except Exception as exc:  # an injected model call: report, never raise
                results.append(
                    reorganize.ReorganizeResult(
                        doc.scope,
                        str(doc.path),
                        False,
                        f"the model call failed: {_failure(exc)}",
                        before_text=doc.text,
                    )
                )
                continue
            result = reorganize.plan(doc, str(output or ""))
            if apply and result.after_text is not None:
                result = self.apply_reorganization(result)
            results.append(result)
        return results

    def apply_reorganization(
        self,
        result: ReorganizeResult,
    ) -> ReorganizeResult:
        """Write a checked reorganization, unless the file changed since it was planned."""
        if result.after_text is None:
            return result
        kfile = self.file(result.scope)
        doc = kfile.load()
        if doc.text != result.before_text:
            result.reason = "the file changed since the grouping was made; nothing written"
            result.applied = False
            return result
        if not doc.writable:
            result.reason = doc.problems[0].message if doc.problems else "file is read-only"
            return result
        kfile.write(doc, result.after_text)
        result.applied = True
        result.reason = None
        return result


def _needs_reorganize(doc: KnowledgeDocument) -> bool:
    return (
        injection.file_mode(doc) == "catalog" and bool(doc.entries) and not doc.has_group_headings
    )


def _section_name(section: str) -> str:
    key = str(section).strip().casefold()
    for name in SECTIONS:
        if key == name.casefold():
            return name
    raise KnowledgeError(
        f"unknown knowledge section {section!r}",
        hint="Use 'Rules' or 'Info'.",
        code="KNOWLEDGE_SECTION",
    )


def _failure(exc: Exception) -> str:
    """A failed model call in words: our errors carry their message, others their type."""
    message = getattr(exc, "message", None)
    return message if isinstance(message, str) and message else f"{type(exc).__name__}: {exc}"
