"""Delete keeps an annotation (and its history) in the sidecar's deleted list; undelete
brings it back, marked again where its text is still found, else detached."""

import json
import random

import pytest
from docs_helpers import disk_text, entry, mark, read_sidecar

from lantide.docs import agent_view, open_document, update_document
from lantide.docs.anchoring import check_consistent
from lantide.docs.errors import AnnotationBatchError, AnnotationError
from lantide.docs.marks import scan_marks

TEST_ACCOUNTS = mark("c51d8e", "test accounts")


def _consistent(project):
    text = disk_text(project)
    data = read_sidecar(project)
    assert check_consistent(text, data["annotations"], scan_marks(text)) == []
    live = {e["id"] for e in data["annotations"]}
    assert not live & {e["id"] for e in data.get("deleted", [])}


def test_delete_moves_the_entry_with_its_history_to_the_deleted_list(sample_project):
    doc = open_document(sample_project, "plan")
    doc.reply("c51d8e", "checked the flag", by="agent")
    before = disk_text(sample_project)
    doc.delete("c51d8e", by="team lead")

    text = disk_text(sample_project)
    assert text == before.replace(TEST_ACCOUNTS, "test accounts")
    data = read_sidecar(sample_project)
    assert data["version"] == 1  # older readers keep "deleted" as an unknown field
    assert [e["id"] for e in data["annotations"]] == ["3f9a1c", "7be204"]
    (gone,) = data["deleted"]
    assert gone["id"] == "c51d8e" and gone["status"] == "open"
    assert gone["comment"].startswith("Is is_test_account reliable?")
    assert [h["action"] for h in gone["history"]] == ["created", "replied", "deleted"]
    last = gone["history"][-1]
    assert set(last) == {"at", "by", "action"} and last["by"] == "team lead"
    assert last["at"].endswith("Z") and len(last["at"]) == 20
    start, end = gone["anchor"]["span"]
    assert text[start:end] == "test accounts"  # where its text was left
    _consistent(sample_project)

    assert [a.id for a in doc.annotations] == ["3f9a1c", "7be204"] and doc.open_count == 2
    (deleted,) = doc.deleted_annotations
    assert deleted.deleted and deleted.span is None and deleted.deletion["by"] == "team lead"
    fresh = open_document(sample_project, "plan")
    assert fresh.repairs == [] and not fresh.dirty
    assert [a.raw for a in fresh.deleted_annotations] == [deleted.raw]


def test_agent_view_does_not_show_or_count_deleted_annotations(sample_project):
    open_document(sample_project, "plan").delete("7be204")
    view = agent_view(sample_project, "plan")
    assert [a["id"] for a in view["annotations"]] == ["3f9a1c", "c51d8e"]
    assert [a["id"] for a in view["annotation_summary"]] == ["3f9a1c", "c51d8e"]
    assert view["open_annotation_count"] == 2
    assert "7be204" not in view["text"] and "7be204" not in json.dumps(view)


def test_operations_on_a_deleted_annotation_say_it_was_deleted(sample_project):
    doc = open_document(sample_project, "plan")
    doc.delete("3f9a1c")
    before = disk_text(sample_project), read_sidecar(sample_project)
    for call in (
        lambda: doc.reply("3f9a1c", "hi"),
        lambda: doc.delete("3f9a1c"),
        lambda: doc.annotation("3f9a1c"),
    ):
        with pytest.raises(AnnotationError) as err:
            call()
        assert err.value.code == "ANNOTATION_DELETED" and "--restore 3f9a1c" in err.value.hint
    with pytest.raises(AnnotationBatchError) as err:
        doc.resolve_many([{"id": "3f9a1c", "mode": "B"}, {"id": "7be204", "mode": "B"}])
    assert err.value.problems[0]["code"] == "ANNOTATION_DELETED" and len(err.value.problems) == 1
    assert (disk_text(sample_project), read_sidecar(sample_project)) == before


def test_undelete_marks_the_text_where_it_was_left_even_when_the_quote_repeats(make_project):
    text = f"Count {mark('dd0001', 'active')} users. Later: active users again.\n"
    project = make_project(text, {"version": 1, "annotations": [entry("dd0001", "active")]})
    doc = open_document(project, "plan")
    doc.delete("dd0001")
    assert disk_text(project) == "Count active users. Later: active users again.\n"
    ann = doc.undelete("dd0001", by="analyst")
    assert disk_text(project) == text
    assert ann.is_open and not ann.detached and not ann.deleted
    assert [h["action"] for h in ann.history] == ["created", "deleted", "undeleted"]
    assert ann.history[-1]["by"] == "analyst" and "text" not in ann.history[-1]
    assert "deleted" not in read_sidecar(project)  # the key is written only when not empty
    _consistent(project)


def test_undelete_finds_a_moved_quote_that_occurs_once(make_project):
    text = f"# Plan\n\nWe exclude {mark('dd0002', 'test accounts')} first.\n"
    project = make_project(text, {"version": 1, "annotations": [entry("dd0002", "test accounts")]})
    doc = open_document(project, "plan")
    doc.delete("dd0002")
    doc.save_text("# Plan\n\nA new first paragraph.\n\nWe exclude test accounts first.\n")
    ann = doc.undelete("dd0002")
    assert not ann.detached
    assert disk_text(project) == (
        f"# Plan\n\nA new first paragraph.\n\nWe exclude {mark('dd0002', 'test accounts')} first.\n"
    )
    _consistent(project)


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda t: t.replace("active users", "buyers"), "no longer in the text"),
        (lambda t: "Intro: active users.\n\n" + t, "occurs more than once"),
    ],
)
def test_undelete_without_a_unique_quote_comes_back_detached(make_project, edit, reason):
    text = f"Count {mark('dd0003', 'active users')} here and there.\n"
    project = make_project(text, {"version": 1, "annotations": [entry("dd0003", "active users")]})
    doc = open_document(project, "plan")
    doc.delete("dd0003")
    doc.save_text(edit(doc.text))
    edited = disk_text(project)
    ann = doc.undelete("dd0003")
    assert ann.is_open and ann.detached and ann.span is None
    assert reason in ann.history[-1]["text"] and ann.history[-1]["action"] == "undeleted"
    assert disk_text(project) == edited  # nothing was marked
    summary = agent_view(project, "plan")["annotation_summary"]
    assert summary == [
        {"id": "dd0003", "quote": "active users", "comment": "why?", "detached": True}
    ]
    _consistent(project)


def test_a_resolved_annotation_comes_back_resolved_without_a_mark(sample_project):
    doc = open_document(sample_project, "plan")
    doc.resolve("7be204", "B", answer="every Q2 active", by="agent")
    doc.delete("7be204")
    text = disk_text(sample_project)
    ann = doc.undelete("7be204")
    assert ann.status == "resolved" and ann.span is None and not ann.detached
    assert ann.resolution["text"] == "every Q2 active"
    assert disk_text(sample_project) == text
    assert [h["action"] for h in ann.history][-3:] == ["resolved", "deleted", "undeleted"]
    ann = doc.reopen("7be204")  # and it can be reopened like any resolved one
    assert ann.is_open and ann.span
    _consistent(sample_project)


def test_undelete_puts_it_back_in_its_place_by_creation_time(make_project):
    def created(ann_id, quote, at):
        e = entry(ann_id, quote)
        e["history"][0]["at"] = at
        return e

    text = f"{mark('aa0001', 'one')} {mark('bb0002', 'two')} {mark('cc0003', 'three')}\n"
    project = make_project(
        text,
        {
            "version": 1,
            "annotations": [
                created("aa0001", "one", "2026-01-01T10:00:00Z"),
                created("bb0002", "two", "2026-01-02T10:00:00Z"),
                created("cc0003", "three", "2026-01-03T10:00:00Z"),
            ],
        },
    )
    doc = open_document(project, "plan")
    doc.delete("bb0002")
    doc.delete("aa0001")
    doc.undelete("bb0002")
    assert [a.id for a in doc.annotations] == ["bb0002", "cc0003"]
    doc.undelete("aa0001")
    assert [a["id"] for a in read_sidecar(project)["annotations"]] == ["aa0001", "bb0002", "cc0003"]
    assert disk_text(project) == text


def test_undelete_refuses_what_is_not_deleted(sample_project):
    doc = open_document(sample_project, "plan")
    with pytest.raises(AnnotationError) as err:
        doc.undelete("3f9a1c")
    assert err.value.code == "ANNOTATION_NOT_DELETED"
    doc.delete("7be204")
    with pytest.raises(AnnotationError) as err:
        doc.undelete("nope00")
    assert err.value.code == "ANNOTATION_UNKNOWN_ID" and "7be204" in err.value.hint


def test_a_new_annotation_never_takes_a_deleted_id(make_project):
    random.seed(20261130)
    first_pick = f"{random.getrandbits(24):06x}"
    text = "Churn rose in the north.\n"
    gone = entry(first_pick, "north")
    gone["history"].append({"at": "2026-11-30T11:00:00Z", "by": "user", "action": "deleted"})
    project = make_project(text, {"version": 1, "annotations": [], "deleted": [gone]})
    doc = open_document(project, "plan")
    random.seed(20261130)
    new_id = doc.create_annotation(0, 5, "which churn?")
    assert new_id != first_pick
    assert [e["id"] for e in read_sidecar(project)["deleted"]] == [first_pick]


def test_a_mark_of_a_deleted_annotation_put_back_in_the_text_undeletes_it(sample_project):
    doc = open_document(sample_project, "plan")
    original = doc.text
    doc.delete("c51d8e")
    # another editor (or an undo) writes the old text back, mark included
    report = update_document(sample_project, "plan", original, by="agent")
    assert report["undeleted"] == ["c51d8e"] and report["unknown_marks"] == []
    assert any("c51d8e" in w and "brought back" in w for w in report["warnings"])
    data = read_sidecar(sample_project)
    assert "deleted" not in data
    back = next(e for e in data["annotations"] if e["id"] == "c51d8e")
    assert back["comment"].startswith("Is is_test_account reliable?")  # not a recreated stub
    assert not back.get("recreated")
    assert [(h["action"], h["by"]) for h in back["history"]][-2:] == [
        ("deleted", "user"),
        ("undeleted", "lantide"),
    ]
    assert disk_text(sample_project) == original
    _consistent(sample_project)


def test_deleting_the_only_annotation_of_a_report_keeps_it(make_project):
    project = make_project("# Plan\n")
    doc = open_document(project, "report")
    doc.save_text("# Report\n\nChurn rose to 4%.\n")
    start = doc.text.index("4%")
    ann_id = doc.create_annotation(start, start + 2, "source?")
    doc.delete(ann_id)
    data = json.loads((project.dir / "report.annotations.json").read_text())
    assert data["annotations"] == [] and [e["id"] for e in data["deleted"]] == [ann_id]
    assert disk_text(project, "report") == "# Report\n\nChurn rose to 4%.\n"


def test_a_sidecar_with_deleted_entries_keeps_unknown_fields(make_project):
    text = f"Text {mark('uf0001', 'here')}.\n"
    gone = entry("gg0001", "there", color="blue")
    gone["history"].append({"at": "x", "by": "u", "action": "deleted", "why": "dupe"})
    project = make_project(
        text,
        {
            "version": 1,
            "producer": "other",
            "annotations": [entry("uf0001", "here")],
            "deleted": [gone],
            "trailer": {"k": 1},
        },
    )
    open_document(project, "plan").reply("uf0001", "noted")
    data = read_sidecar(project)
    assert data["producer"] == "other" and data["trailer"] == {"k": 1}
    assert data["deleted"] == [gone]
    assert list(data)[-2:] == ["annotations", "deleted"]


@pytest.mark.parametrize(
    "deleted, problem",
    [
        ({"a": 1}, "'deleted' must be a list"),
        ([{"id": "x1", "status": "gone"}], "deleted annotation x1: 'status' must be"),
        (["nope"], "deleted annotation 1 is not an object"),
    ],
)
def test_a_broken_deleted_list_makes_annotations_read_only_and_is_kept(
    make_project, deleted, problem
):
    content = json.dumps({"version": 1, "annotations": [], "deleted": deleted})
    project = make_project(f"Text {mark('ro0001', 'here')}.\n", content)
    doc = open_document(project, "plan")
    assert problem in doc.read_only_reason and "plan.annotations.json" in doc.read_only_reason
    with pytest.raises(AnnotationError):
        doc.delete("ro0001")
    assert (project.dir / "plan.annotations.json").read_text() == content


def test_an_id_both_live_and_deleted_keeps_both_and_refuses_to_undelete(make_project):
    # what an older Lantide leaves when a mark of a deleted annotation is pasted back
    text = f"Text {mark('dup001', 'here')}.\n"
    stub = entry("dup001", "here", comment="", recreated=True)
    gone = entry("dup001", "here", comment="the real question")
    gone["history"].append({"at": "2026-11-30T11:00:00Z", "by": "user", "action": "deleted"})
    project = make_project(text, {"version": 1, "annotations": [stub], "deleted": [gone]})
    doc = open_document(project, "plan")
    assert doc.read_only_reason is None and doc.repairs == []
    assert [a.comment for a in doc.annotations] == [""]
    assert [a.comment for a in doc.deleted_annotations] == ["the real question"]
    with pytest.raises(AnnotationError) as err:
        doc.undelete("dup001")
    assert err.value.code == "ANNOTATION_ID_IN_USE"
    doc.delete("dup001")  # the stub goes too; both are kept
    assert [e["comment"] for e in read_sidecar(project)["deleted"]] == ["the real question", ""]
    assert disk_text(project) == "Text here.\n"
    fresh = open_document(project, "plan")
    assert fresh.read_only_reason is None and fresh.annotations == []
    back = fresh.undelete("dup001")  # the most recently deleted one
    assert back.comment == "" and back.span
    assert [e["comment"] for e in read_sidecar(project)["deleted"]] == ["the real question"]
    assert disk_text(project) == text
