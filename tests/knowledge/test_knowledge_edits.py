"""Approve, reject, remove, edit and add: only the entry's lines change, never the rest."""

from __future__ import annotations

import difflib
import os

import pytest
from knowledge_samples import HAND_WRITTEN

from lantide.errors import CorruptFileError
from lantide.knowledge import KnowledgeConflictError, KnowledgeError
from lantide.knowledge.store import KnowledgeFile


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.ndiff(before.splitlines(True), after.splitlines(True))
        if line[:2] in ("- ", "+ ")
    ]


def test_reading_and_listing_never_changes_the_file(make_kb, files):
    kb = make_kb(HAND_WRITTEN)
    kb.entries(), kb.layer(), kb.expand("Dates"), kb.to_dict()
    assert files[1].read_text(encoding="utf-8") == HAND_WRITTEN
    assert not files[0].exists()  # user knowledge is not created by reading


def test_approve_changes_only_the_marker(make_kb, files):
    kb = make_kb(HAND_WRITTEN)
    entry = kb.approve(2)
    assert entry.status == "enabled" and entry.text == "The fiscal year starts on 1 April."
    after = files[1].read_text(encoding="utf-8")
    assert changed_lines(HAND_WRITTEN, after) == [
        "- * [Queued] The fiscal year starts on 1 April.\n",
        "+ * The fiscal year starts on 1 April.\n",
    ]
    # approving again is harmless and writes nothing
    stamp = os.stat(files[1]).st_mtime_ns
    assert kb.approve(2).status == "enabled"
    assert os.stat(files[1]).st_mtime_ns == stamp


def test_reject_removes_a_queued_entry_and_remembers_it(make_kb, files):
    kb = make_kb(HAND_WRITTEN)
    rejected = kb.reject("2")
    assert rejected.text == "The fiscal year starts on 1 April."
    after = files[1].read_text(encoding="utf-8")
    assert changed_lines(HAND_WRITTEN, after) == [
        "- * [Queued] The fiscal year starts on 1 April.\n"
    ]
    assert KnowledgeFile(files[1], "project").rejected_texts() == [rejected.text]
    with pytest.raises(KnowledgeError, match="Enabled"):
        kb.reject(1)  # an approved entry is not "rejected"
    assert files[1].read_text(encoding="utf-8") == after


def test_remove_many_keeps_everything_else(make_kb, files):
    kb = make_kb(HAND_WRITTEN)
    removed = kb.remove_many([1, 4, 7])
    assert [e.text for e in removed] == [
        "Revenue means net revenue: gross minus refunds.",
        "Weeks start on Monday.",
        "loose item after a blank line",
    ]
    left = [e.text for e in kb.entries("project")]
    assert left[0] == "The fiscal year starts on 1 April." and len(left) == 4
    after = files[1].read_text(encoding="utf-8")
    assert "<!-- kept by Ana; ask before changing -->" in after
    assert "- not knowledge, just a todo list" in after
    assert all(line[0] == "-" for line in changed_lines(HAND_WRITTEN, after))


def test_edit_keeps_bullet_status_and_source(make_kb, files):
    text = (
        "## Rules\n* [queued] Churn is 60 days. "
        "<!-- source: conversation=c1 turn=2 at=2026-01-01T00:00:00Z -->\n- other\n"
    )
    kb = make_kb(text)
    entry = kb.edit(1, "Churn is 90 days\nwithout an order.")
    assert (entry.status, entry.text) == ("queued", "Churn is 90 days\nwithout an order.")
    assert entry.source["conversation"] == "c1" and entry.source["turn"] == 2
    assert files[1].read_text(encoding="utf-8") == (
        "## Rules\n* [queued] Churn is 90 days\n  without an order. "
        "<!-- source: conversation=c1 turn=2 at=2026-01-01T00:00:00Z -->\n- other\n"
    )


@pytest.mark.parametrize(
    "bad, match",
    [
        ("", "empty"),
        ("[queued] sneaky", "cannot start with"),
        ("x" * 2001, "limited"),
    ],
)
def test_edit_refuses_bad_text(make_kb, files, bad, match):
    kb = make_kb(HAND_WRITTEN)
    with pytest.raises(KnowledgeError, match=match):
        kb.edit(1, bad)
    assert files[1].read_text(encoding="utf-8") == HAND_WRITTEN


def test_markdown_in_an_edit_stays_inside_the_entry(make_kb, files):
    kb = make_kb("## Rules\n- a\n- b\n\n## Info\n- c\n")
    kb.edit(1, "see this:\n```\nunclosed fence\n## Info\n- not an entry")
    assert [(e.section, e.text) for e in kb.entries("project")] == [
        ("Rules", "see this:\n```\nunclosed fence\n## Info\n- not an entry"),
        ("Rules", "b"),
        ("Info", "c"),
    ]


def test_an_edit_that_would_not_read_back_is_refused(make_kb, files):
    kb = make_kb("## Rules\n- a\n- b\n")
    with pytest.raises(KnowledgeError, match="not written"):
        kb.edit(1, "<!-- only a comment, so the entry would vanish -->")
    assert files[1].read_text(encoding="utf-8") == "## Rules\n- a\n- b\n"


def test_add_goes_to_the_end_of_its_section_or_group(make_kb, files):
    kb = make_kb(HAND_WRITTEN)
    ungrouped = kb.add("Refunds are booked on the refund date.")  # Rules has a ### Dates group
    grouped = kb.add("Quarters follow the fiscal year.", heading="dates")
    info = kb.add("customers.id is unique.", section="info")
    assert (ungrouped.section, ungrouped.heading) == ("Rules", None)
    assert (grouped.section, grouped.heading) == ("Rules", "Dates")
    assert (info.section, info.heading, info.number) == ("Info", None, 10)
    after = files[1].read_text(encoding="utf-8")
    assert all(line[0] == "+" for line in changed_lines(HAND_WRITTEN, after))
    assert "  - also internal staff accounts\n+ Refunds are booked" in after
    assert "not the ship date. <!-- from the 2025 audit -->\n- Quarters follow" in after


def test_add_creates_the_file_or_a_missing_section(make_kb, files):
    kb = make_kb(with_project=False)
    entry = kb.add("Prefer ISO 8601 dates.", section="Info")
    assert entry.ref == "u1"
    assert files[0].read_text(encoding="utf-8") == (
        "# User knowledge\n\n## Rules\n\n## Info\n- Prefer ISO 8601 dates.\n"
    )
    kb = make_kb("# Mine\n\n## Info\n- fact")  # no Rules section, no final newline
    kb.add("A rule.")
    assert files[1].read_text(encoding="utf-8") == (
        "# Mine\n\n## Rules\n\n- A rule.\n\n## Info\n- fact"
    )


def test_crlf_and_bom_survive_edits(make_kb, files):
    text = "\ufeff## Rules\r\n- [queued] a\r\n- b\r\n"
    kb = make_kb(text)
    kb.approve(1)
    kb.add("c")
    assert files[1].read_bytes().decode("utf-8") == "\ufeff## Rules\r\n- a\r\n- b\r\n- c\r\n"


def test_a_file_changed_after_reading_is_not_overwritten(make_kb, files):
    kb = make_kb("## Rules\n- [queued] a\n")
    doc = kb.document("project")
    files[1].write_text(
        "## Rules\n- [queued] a\n- typed in an editor meanwhile\n", encoding="utf-8"
    )
    with pytest.raises(KnowledgeConflictError):
        kb.project_file.write(doc, "## Rules\n- a\n")
    assert "typed in an editor" in files[1].read_text(encoding="utf-8")


def test_expect_text_guards_against_stale_numbers(make_kb, files):
    kb = make_kb("## Rules\n- [queued] a\n- [queued] b\n")
    with pytest.raises(KnowledgeConflictError):
        kb.approve(1, expect_text="b")
    assert kb.approve(1, expect_text="a").status == "enabled"


def test_non_utf8_file_loads_what_it_can_and_is_never_rewritten(files):
    from lantide.knowledge import KnowledgeBase

    files[1].parent.mkdir(parents=True)
    raw = "## Rules\n- caf\xe9 latte\n- [queued] b\n".encode("latin-1")
    files[1].write_bytes(raw)
    kb = KnowledgeBase(files[0], files[1])
    doc = kb.document("project")
    assert [e.status for e in doc.entries] == ["enabled", "queued"]
    assert not doc.writable and doc.problems[0].line == 2
    assert doc.problems[0].severity == "error"
    with pytest.raises(CorruptFileError):
        kb.approve(2)
    assert files[1].read_bytes() == raw


def test_bad_references(make_kb):
    kb = make_kb("## Rules\n- a\n")
    for ref in ("0", "2", "x1", "u1"):
        with pytest.raises(KnowledgeError):
            kb.approve(ref)
    assert kb.resolve("p1").text == "a"
    assert make_kb(with_project=False).resolve  # user-only base exists
    with pytest.raises(KnowledgeError, match="no project"):
        make_kb(with_project=False).approve("p1")


@pytest.mark.parametrize(
    "text",
    [
        HAND_WRITTEN,
        HAND_WRITTEN.replace("\n", "\r\n"),
        "\ufeff" + HAND_WRITTEN.rstrip("\n"),
        "## Rules\n\t- tab-indented entry\n  * two-space list\n\n\n## Info\n1. one\n10. ten\n",
    ],
)
def test_round_trips_leave_hand_written_files_byte_identical(make_kb, files, text):
    kb = make_kb(text)
    original = files[1].read_bytes()
    for entry in kb.entries("project"):
        kb.edit(entry.ref, entry.text)  # the same text: nothing may move
        assert files[1].read_bytes() == original, entry.ref
    added = kb.add("A temporary entry.", section="Info")
    assert added.text == "A temporary entry."
    assert files[1].read_bytes() != original
    kb.remove(added.ref)
    # adding after a last line without a line ending gives that line one; nothing else
    newline = b"\r\n" if b"\r\n" in original else b"\n"
    expected = original if original.endswith(newline) else original + newline
    assert files[1].read_bytes() == expected
    queued = kb.add("A temporary proposal.", queued=True, source={"conversation": "c", "turn": 1})
    assert queued.status == "queued"
    kb.reject(queued.ref)
    assert files[1].read_bytes() == expected
