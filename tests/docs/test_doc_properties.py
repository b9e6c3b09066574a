"""Property tests: random sequences of annotation operations and text edits.

After every step: each open, non-detached annotation has exactly one mark; resolved and
detached ones have none; no two marks share an id; no annotation disappears: a deleted one
moves to the deleted list (its history ending in ``deleted``) and an undeleted one comes
back from it with the status it had; the text outside the touched mark is unchanged; and
the pair on disk reopens to exactly the same state with nothing to repair.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from lantide.docs import open_document
from lantide.docs.anchoring import check_consistent
from lantide.docs.errors import AnnotationError
from lantide.docs.marks import scan_marks, unwrap
from lantide.workspace.model import Workspace

WORDS = ["churn", "revenue", "Q2", "customers", "active", "net", "the", "region", "rate"]
word = st.sampled_from(WORDS)
phrase = st.lists(word, min_size=1, max_size=6).map(" ".join)
inline = st.one_of(
    phrase,
    phrase.map(lambda p: f"`{p}`"),
    phrase.map(lambda p: f"*{p}*"),
    phrase.map(lambda p: f"**{p}**"),
    phrase.map(lambda p: f"[{p}](https://x.org)"),
)
line = st.lists(inline, min_size=1, max_size=4).map(" ".join)
block = st.one_of(
    line.map(lambda t: "# " + t),
    st.lists(line, min_size=1, max_size=3).map("\n".join),
    st.lists(line, min_size=1, max_size=3).map(lambda ls: "\n".join("- " + x for x in ls)),
    line.map(lambda t: "> " + t),
    st.tuples(phrase, phrase, phrase, phrase).map(
        lambda c: f"| {c[0]} | {c[1]} |\n|---|---|\n| {c[2]} | {c[3]} |"
    ),
    phrase.map(lambda t: f"```\n{t}\n```"),
)
document = st.lists(block, min_size=1, max_size=6).map(lambda bs: "\n\n".join(bs) + "\n")
insertion = st.text(alphabet="ab `*_[]()<>|#\n- ", max_size=8) | word


class AnnotatedDocument(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="lantide-prop-"))
        self.doc = None
        self.known: set[str] = set()  # live annotations
        self.gone: set[str] = set()  # deleted ones

    def teardown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    @initialize(text=document)
    def start(self, text):
        ws = Workspace.create(self.tmp / "ws")
        self.project = ws.create_project("p", plan_text=text)
        self.doc = open_document(self.project, "plan")

    # -- helpers ---------------------------------------------------------------------------
    def _ids(self, status=None):
        return [a.id for a in self.doc.annotations if status in (None, a.status)]

    # -- operations --------------------------------------------------------------------------
    @rule(data=st.data())
    def create(self, data):
        regions = self.doc.scan.structure.regions
        if not regions:
            return
        region = data.draw(st.sampled_from(regions))
        start = data.draw(st.integers(region.start, max(region.start, region.end - 1)))
        end = data.draw(st.integers(start + 1, max(start + 1, region.end)))
        before = self.doc.text
        try:
            ann_id = self.doc.create_annotation(start, end, "why?")
        except AnnotationError:
            assert self.doc.text == before
            return
        self.known.add(ann_id)
        assert unwrap(self.doc.text, self.doc.scan.mark(ann_id)) == before

    @precondition(lambda self: self.doc is not None and self.doc.annotations)
    @rule(data=st.data(), reply=phrase)
    def reply(self, data, reply):
        ann_id = data.draw(st.sampled_from(self._ids()))
        before = self.doc.text
        self.doc.reply(ann_id, reply, by="agent")
        assert self.doc.text == before and self.doc.annotation(ann_id).latest_reply["text"] == reply

    @precondition(
        lambda self: self.doc is not None and any(a.is_open for a in self.doc.annotations)
    )
    @rule(data=st.data(), mode=st.sampled_from("AB"), replacement=phrase)
    def resolve(self, data, mode, replacement):
        ann_id = data.draw(st.sampled_from(self._ids("open")))
        before, mark = self.doc.text, self.doc.scan.mark(ann_id)
        try:
            self.doc.resolve(ann_id, mode, replacement=replacement, answer="done", by="agent")
        except AnnotationError as exc:
            assert mode == "A" and mark is None and exc.code == "ANNOTATION_DETACHED"
            assert self.doc.text == before
            return
        if mark is None:
            expected = before
        elif mode == "A":
            expected = before[: mark.start] + replacement + before[mark.end :]
        else:
            expected = unwrap(before, mark)
        assert self.doc.text == expected
        assert self.doc.annotation(ann_id).status == "resolved"

    @precondition(
        lambda self: self.doc is not None and any(not a.is_open for a in self.doc.annotations)
    )
    @rule(data=st.data())
    def reopen(self, data):
        ann_id = data.draw(st.sampled_from(self._ids("resolved")))
        before = self.doc.text
        ann = self.doc.reopen(ann_id)
        mark = self.doc.scan.mark(ann_id)
        assert ann.is_open and (mark is None) == ann.detached
        assert (unwrap(self.doc.text, mark) if mark else self.doc.text) == before

    @precondition(lambda self: self.doc is not None and self.doc.annotations)
    @rule(data=st.data())
    def delete(self, data):
        ann_id = data.draw(st.sampled_from(self._ids()))
        before, mark = self.doc.text, self.doc.scan.mark(ann_id)
        history = self.doc.annotation(ann_id).history
        self.doc.delete(ann_id, by="analyst")
        self.known.discard(ann_id)
        self.gone.add(ann_id)
        assert self.doc.text == (unwrap(before, mark) if mark else before)
        gone = self.doc.deleted_annotations[-1]
        assert gone.id == ann_id and gone.history[:-1] == history
        assert (gone.history[-1]["action"], gone.history[-1]["by"]) == ("deleted", "analyst")

    @precondition(lambda self: self.doc is not None and self.doc.deleted_annotations)
    @rule(data=st.data())
    def undelete(self, data):
        ann_id = data.draw(st.sampled_from([a.id for a in self.doc.deleted_annotations]))
        before, was = self.doc.text, self.doc.deleted_annotation(ann_id)
        ann = self.doc.undelete(ann_id)
        self.gone.discard(ann_id)
        self.known.add(ann_id)
        mark = self.doc.scan.mark(ann_id)
        assert ann.status == was.status and ann.history[:-1] == was.history
        assert ann.history[-1]["action"] == "undeleted" and not ann.deleted
        if ann.is_open:
            assert (mark is None) == ann.detached
        else:
            assert mark is None and not ann.detached
        assert (unwrap(self.doc.text, mark) if mark else self.doc.text) == before

    @precondition(lambda self: self.doc is not None)
    @rule(data=st.data(), inserted=insertion)
    def edit_text(self, data, inserted):
        text = self.doc.text
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 12)))
        report = self.doc.save_text(text[:start] + inserted + text[end:], by="user")
        # an edit can only add annotations by rebuilding entries for marks it created
        self.known |= set(report.ids("recreated")) | set(report.ids("undeleted"))
        self.gone -= set(report.ids("undeleted"))

    @precondition(lambda self: self.doc is not None and self.doc.marks)
    @rule(data=st.data(), copy=st.booleans())
    def drop_or_copy_a_mark(self, data, copy):
        """What another editor might do: remove a mark's tags, or paste a marked phrase."""
        mark = data.draw(st.sampled_from(self.doc.marks))
        text = self.doc.text
        new_text = text + "\n" + text[mark.start : mark.end] + "\n" if copy else unwrap(text, mark)
        report = self.doc.save_text(new_text)
        if copy and len(scan_marks(new_text).by_id()[mark.id]) > 1:
            assert mark.id in report.ids("duplicate_removed")
        elif not copy:
            assert mark.id in report.ids("reanchored") + report.ids("detached")
        self.known |= set(report.ids("recreated"))

    # -- invariants ------------------------------------------------------------------------
    @invariant()
    def consistent_and_round_trips(self):
        if self.doc is None:
            return
        text, entries = self.doc.text, [a.raw for a in self.doc.annotations]
        scan = scan_marks(text)
        assert check_consistent(text, entries, scan) == []
        ids = [m.id for m in scan.marks]
        assert len(ids) == len(set(ids))
        assert set(self._ids()) == self.known  # nothing lost, nothing invented
        deleted = [a.raw for a in self.doc.deleted_annotations]
        assert {e["id"] for e in deleted} == self.gone and len(deleted) == len(self.gone)
        assert all(e["history"][-1]["action"] == "deleted" for e in deleted)
        assert all(e["id"] not in ids for e in deleted)  # a deleted one has no mark
        fresh = open_document(self.project, "plan")
        assert fresh.text == text and fresh.repairs == [] and not fresh.dirty
        assert [a.raw for a in fresh.annotations] == entries
        assert [a.raw for a in fresh.deleted_annotations] == deleted
        for ann in fresh.annotations:
            if ann.span:
                assert ann.raw["anchor"]["span"] == list(ann.span)
                assert text[ann.span[0] : ann.span[1]] == ann.quote


AnnotatedDocument.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_random_operations_and_edits_keep_annotations_consistent = pytest.mark.slow(
    AnnotatedDocument.TestCase
)
