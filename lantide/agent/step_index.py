"""Similar past steps: a full-text index over every query step in the workspace's ledgers.

The analyst's earlier formal steps are the best examples the agent can have: each has a
purpose, a one-line summary and the SQL the analyst saw. ``find_similar_steps`` ranks them
with BM25 (tantivy, a maintained Rust search engine; no hand-written ranker) over the
purpose, the summary, the result label and the SQL text.

The index is a cache in ``.lantide/index/steps/`` (rebuilt from the ledgers if it is
missing or unreadable; the ledgers stay the record). It is kept incrementally, and read
time is when: each agent iteration asks how many past steps there are (the Context
Summary shows it, and the tool is offered only then), and each search first catches up
(:meth:`StepIndex.catch_up`): the conversations whose ledger file changed since the last
pass (size or modification time, in ``.lantide/index/steps.json``) are re-indexed, the
others are left alone, so a step written in one iteration is found in the next. Nothing
is indexed in the query step's own path (a step never waits for the index). One process
writes at a time (tantivy's lock); a second one searches what is there and catches up
later.

A summary corrected by ``patch_step`` is indexed as it reads now; the wording it replaced
stays searchable at a low weight, so a step found only by its wrong summary ranks below
the steps whose current words match.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from lantide.workspace import layout
from lantide.workspace.atomic import atomic_write_json

if TYPE_CHECKING:
    import tantivy

    from lantide.agent.ledger_types import LedgerStep

log = logging.getLogger(__name__)

# purpose and summary say what a step was for; the SQL and label say how; a corrected
# summary's old words count a little, never as much as what the step says now
FIELD_BOOSTS = {"purpose": 2.0, "summary": 2.0, "label": 1.0, "sql": 1.0, "replaced": 0.2}
SEARCHED = tuple(FIELD_BOOSTS)
STEP_TOOLS_SKIPPED = ("reflection",)
SQL_CHARS_RETURNED = 1_500
MAX_LIMIT = 20
_WRITER_HEAP = 15_000_000
_lock = threading.Lock()  # one writer per process; tantivy's own lock guards the rest


def _schema() -> tantivy.Schema:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("conversation", stored=True, tokenizer_name="raw")
    builder.add_text_field("step_id", stored=True, tokenizer_name="raw")
    for name in SEARCHED:
        builder.add_text_field(name, stored=False)
    return builder.build()


def step_documents(steps: list[LedgerStep]) -> list[dict[str, str]]:
    """The searchable text of each query step of one ledger (reflections and entries
    without a step id are not steps)."""
    out = []
    for step in steps:
        if not step.get("step_id") or step.get("tool") in STEP_TOOLS_SKIPPED:
            continue
        replaced = [
            str((p.get("old") or {}).get(k) or "")
            for p in step.get("patches") or []
            if isinstance(p, dict)
            for k in ("summary", "purpose")
        ]
        out.append(
            {
                "conversation": str(step.get("conversation_id") or ""),
                "step_id": str(step["step_id"]),
                "purpose": str(step.get("purpose") or ""),
                "summary": str(step.get("summary") or ""),
                "label": str(step.get("result_label") or step.get("cached_table_name") or ""),
                "sql": str(step.get("sql") or ""),
                "replaced": " ".join(r for r in replaced if r),
            }
        )
    return out


class StepHit(TypedDict):
    """One match of a search: the step's address and its score."""

    conversation_id: str
    step_id: str
    score: float


class StepIndex:
    """The index of one workspace. ``ledger_dir`` holds ``CONVERSATION.jsonl`` files."""

    def __init__(self, lantide_dir: Path, ledger_dir: Path):
        self.dir = layout.step_index_dir(lantide_dir)
        self.state_path = layout.step_index_state_path(lantide_dir)
        self.ledger_dir = Path(ledger_dir)
        self._index: tantivy.Index | None = None
        self._state_read: tuple[int, dict[str, list[int]]] | None = None

    # -- opening -------------------------------------------------------------------------
    def _open(self) -> tantivy.Index:
        import tantivy

        if self._index is not None:
            return self._index
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            self._index = tantivy.Index(_schema(), path=str(self.dir), reuse=True)
        except ValueError as exc:  # unreadable or from another schema: a cache, rebuilt
            log.warning("the step index at %s is unreadable (%s); rebuilding it", self.dir, exc)
            shutil.rmtree(self.dir, ignore_errors=True)
            self.state_path.unlink(missing_ok=True)
            self.dir.mkdir(parents=True, exist_ok=True)
            self._index = tantivy.Index(_schema(), path=str(self.dir), reuse=False)
        return self._index

    def _state(self) -> dict[str, list[int]]:
        """What the index holds (ledger size and mtime per conversation); read again only
        when another process wrote it since (a search runs this every time)."""
        try:
            stamp = self.state_path.stat().st_mtime_ns
        except OSError:
            return {}
        if self._state_read is not None and self._state_read[0] == stamp:
            return dict(self._state_read[1])
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        state = state if isinstance(state, dict) else {}
        self._state_read = (stamp, state)
        return dict(state)

    def _ledgers(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        if self.ledger_dir.is_dir():
            for entry in os.scandir(self.ledger_dir):
                if entry.name.endswith(".jsonl") and entry.is_file():
                    st = entry.stat()
                    out[entry.name[: -len(".jsonl")]] = [st.st_size, st.st_mtime_ns]
        return out

    # -- keeping it current ----------------------------------------------------------------
    def catch_up(self, only: str | None = None) -> int:
        """Re-index the conversations whose ledger changed (only ``only`` if given); the
        number re-indexed, or -1 when another process holds the writer (the index is then
        searched as it is)."""
        import tantivy

        from lantide.agent.ledger import Ledger

        index = self._open()
        with _lock:
            state = self._state()
            now = self._ledgers()
            names = [only] if only is not None else list(set(state) | set(now))
            changed = [n for n in names if state.get(n) != now.get(n)]
            if not changed:
                return 0
            try:
                writer = index.writer(heap_size=_WRITER_HEAP, num_threads=1)
            except ValueError:  # LockBusy: another process is writing it
                return -1
            try:
                for name in changed:
                    writer.delete_documents_by_term("conversation", name)
                    if name in now:
                        for doc in step_documents(Ledger(self.ledger_dir, name).steps()):
                            doc["conversation"] = name  # the file's name is the key
                            writer.add_document(tantivy.Document(**doc))
                writer.commit()
                writer.wait_merging_threads()
            except BaseException:
                writer.rollback()
                raise
            for name in changed:
                if name in now:
                    state[name] = now[name]
                else:
                    state.pop(name, None)
            atomic_write_json(self.state_path, state)
            self._state_read = None
            index.reload()
            return len(changed)

    # -- searching -----------------------------------------------------------------------
    def has_ledgers(self, *, excluding: str | None = None) -> bool:
        """Whether a conversation other than ``excluding`` has a ledger with anything in it:
        a directory listing, no index work and nothing written (it runs at every tool call,
        where the tool's availability is checked)."""
        return any(size for name, (size, _) in self._ledgers().items() if name != excluding)

    def count(self, *, excluding: str | None = None) -> int:
        """How many steps the index holds after catching up, those of the conversation
        ``excluding`` left out (the current one: its steps are in the agent's view)."""
        import tantivy

        ledgers = self._ledgers()
        if not any(size for size, _ in ledgers.values()) and not self.dir.exists():
            return 0  # no step anywhere yet: no index is made
        self.catch_up()
        index = self._open()
        searcher = index.searcher()
        total = searcher.num_docs
        if excluding:
            own = tantivy.Query.term_query(index.schema, "conversation", excluding)
            # SearchResult.count exists at run time; tantivy's stub lists only ``hits``
            total -= searcher.search(own, 1, count=True).count  # type: ignore[attr-defined]
        return total

    def search(self, query: str, limit: int = 5) -> list[StepHit]:
        """The best matches as ``{conversation_id, step_id, score}``, best first."""
        self.catch_up()
        index = self._open()
        parsed, _errors = index.parse_query_lenient(
            _plain(query), list(SEARCHED), field_boosts=FIELD_BOOSTS
        )
        searcher = index.searcher()
        hits = searcher.search(parsed, max(1, min(int(limit), MAX_LIMIT))).hits
        out: list[StepHit] = []
        for score, address in hits:
            doc = searcher.doc(address)
            out.append(
                {
                    "conversation_id": doc["conversation"][0],
                    "step_id": doc["step_id"][0],
                    "score": round(float(score), 3),
                }
            )
        return out


def _plain(query: str) -> str:
    """The words of ``query`` only: the model's text is not a query language (a stray
    quote, colon or bracket would change what is searched)."""
    import re

    return " ".join(re.findall(r"\w+", query, flags=re.UNICODE))


_open_indexes: dict[Path, StepIndex] = {}


def step_index_for(lantide_dir: Path, ledger_dir: Path) -> StepIndex:
    """The workspace's index, opened once per process (each turn asks it for a count)."""
    key = Path(lantide_dir).resolve()
    with _lock:
        found = _open_indexes.get(key)
        if found is None or found.ledger_dir != Path(ledger_dir):
            found = _open_indexes[key] = StepIndex(lantide_dir, ledger_dir)
        return found
