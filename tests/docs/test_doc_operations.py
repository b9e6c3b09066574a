"""Reply, resolve (modes A and B), reopen, delete: text and sidecar change together."""

import json

import pytest
from docs_helpers import disk_text, mark, read_sidecar

from lantide.docs import open_document
from lantide.docs.anchoring import check_consistent
from lantide.docs.errors import AnnotationBatchError, AnnotationError, DocumentConflictError
from lantide.docs.marks import scan_marks
from lantide.workspace.atomic import atomic_write_text


def _consistent(project):
    text = disk_text(project)
    entries = read_sidecar(project)["annotations"]
    assert check_consistent(text, entries, scan_marks(text)) == []
    marks = {m.id: m for m in scan_marks(text).marks}
    for e in entries:
        if e["id"] in marks:
            assert e["anchor"]["span"] == marks[e["id"]].span
            assert e["quote"] == marks[e["id"]].inner(text)


def test_the_sample_plan_opens_consistent_with_no_repair(sample_project):
    before_text = disk_text(sample_project)
    before_sidecar = (sample_project.dir / "plan.annotations.json").read_bytes()
    doc = open_document(sample_project, "plan")
    assert doc.read_only_reason is None and doc.recovery is None
    assert doc.repairs == [] and not doc.dirty
    assert [(a.id, a.status) for a in doc.annotations] == [
        ("3f9a1c", "open"),
        ("7be204", "open"),
        ("c51d8e", "open"),
    ]
    for ann in doc.annotations:
        # span: [start, end) of the quoted inner text in the file as on disk, marks included
        assert before_text[ann.span[0] : ann.span[1]] == ann.quote
        assert list(ann.span) == ann.raw["anchor"]["span"]
    assert doc.save_repairs() is False
    assert disk_text(sample_project) == before_text
    assert (sample_project.dir / "plan.annotations.json").read_bytes() == before_sidecar


def test_reply_appends_to_history_and_leaves_the_text(sample_project):
    doc = open_document(sample_project, "plan")
    text = disk_text(sample_project)
    ann = doc.reply("c51d8e", "Checked: 12 named 'Test Account' have the flag unset.", by="agent")
    assert ann.latest_reply["by"] == "agent"
    assert disk_text(sample_project) == text
    history = read_sidecar(sample_project)["annotations"][2]["history"]
    assert [h["action"] for h in history] == ["created", "replied"]


def test_resolve_mode_a_replaces_the_marked_text(sample_project):
    doc = open_document(sample_project, "plan")
    before = disk_text(sample_project)
    m = doc.scan.mark("3f9a1c")
    change = doc.resolve(
        "3f9a1c",
        "A",
        replacement="the Q2 revenue of churned customers",
        answer="Q2 revenue, as agreed",
        by="agent",
    )
    after = disk_text(sample_project)
    assert after == before[: m.start] + "the Q2 revenue of churned customers" + before[m.end :]
    assert (
        change["text_changed"]
        and after[change["span"][0] : change["span"][1]] == "the Q2 revenue of churned customers"
    )
    entry = read_sidecar(sample_project)["annotations"][0]
    assert entry["status"] == "resolved"
    last = entry["history"][-1]
    assert (last["action"], last["mode"], last["by"], last["text"]) == (
        "resolved",
        "A",
        "agent",
        "Q2 revenue, as agreed",
    )
    _consistent(sample_project)


def test_resolve_mode_b_keeps_the_text_and_records_the_answer(sample_project):
    doc = open_document(sample_project, "plan")
    before = disk_text(sample_project)
    m = doc.scan.mark("7be204")
    doc.resolve("7be204", "B", answer="Every customer active in Q2.", by="agent")
    assert disk_text(sample_project) == before[: m.start] + m.inner(before) + before[m.end :]
    entry = read_sidecar(sample_project)["annotations"][1]
    assert (
        entry["status"] == "resolved"
        and entry["history"][-1]["text"] == "Every customer active in Q2."
    )
    _consistent(sample_project)


@pytest.mark.parametrize(
    "kwargs, code",
    [
        ({"mode": "A"}, "ANNOTATION_REPLACEMENT_MISSING"),
        ({"mode": "B", "answer": 42}, "ANNOTATION_BAD_ITEM"),
        ({"mode": "C", "answer": "x"}, "ANNOTATION_BAD_MODE"),
        (
            {"mode": "A", "replacement": 'a <mark data-annotation-id="zz">b</mark>'},
            "ANNOTATION_REPLACEMENT_HAS_MARK",
        ),
    ],
)
def test_invalid_resolves_change_nothing(sample_project, kwargs, code):
    doc = open_document(sample_project, "plan")
    before = disk_text(sample_project), read_sidecar(sample_project)
    with pytest.raises(AnnotationError) as err:
        doc.resolve("3f9a1c", **kwargs)
    assert err.value.code == code
    assert (disk_text(sample_project), read_sidecar(sample_project)) == before


def test_mode_b_without_an_answer_resolves_and_records_no_text(sample_project):
    doc = open_document(sample_project, "plan")
    doc.resolve("c51d8e", "B")
    entry = read_sidecar(sample_project)["annotations"][2]
    assert entry["status"] == "resolved" and "text" not in entry["history"][-1]


def test_resolving_twice_and_unknown_ids_are_refused(sample_project):
    doc = open_document(sample_project, "plan")
    doc.resolve("3f9a1c", "B", answer="ok")
    with pytest.raises(AnnotationError) as err:
        doc.resolve("3f9a1c", "B", answer="again")
    assert err.value.code == "ANNOTATION_ALREADY_RESOLVED"
    with pytest.raises(AnnotationError) as err:
        doc.reply("nope00", "hi")
    assert err.value.code == "ANNOTATION_UNKNOWN_ID" and "3f9a1c" in err.value.hint


def test_a_replacement_that_would_swallow_later_marks_is_refused(make_project):
    text = f"A {mark('aa0001', 'first')} then {mark('bb0002', 'second')} and a `tick.\n"
    project = make_project(
        text,
        {
            "version": 1,
            "annotations": [
                {"id": "aa0001", "status": "open", "quote": "first", "comment": "c"},
                {"id": "bb0002", "status": "open", "quote": "second", "comment": "c"},
            ],
        },
    )
    doc = open_document(project, "plan")
    with pytest.raises(AnnotationError) as err:
        doc.resolve("aa0001", "A", replacement="an `unbalanced")
    assert err.value.code == "ANNOTATION_WOULD_BREAK_MARKS" and "bb0002" in err.value.message
    assert disk_text(project) == text


def test_reopen_marks_the_kept_text_again_after_mode_b(sample_project):
    doc = open_document(sample_project, "plan")
    original = disk_text(sample_project)
    doc.resolve("7be204", "B", answer="fine")
    ann = doc.reopen("7be204", by="team lead")
    assert ann.is_open and not ann.detached
    assert disk_text(sample_project) == original
    assert [h["action"] for h in ann.history][-2:] == ["resolved", "reopened"]
    _consistent(sample_project)


def test_reopen_after_mode_a_marks_the_replacement(sample_project):
    doc = open_document(sample_project, "plan")
    doc.resolve("3f9a1c", "A", replacement="the Q2 revenue of churned customers")
    ann = doc.reopen("3f9a1c")
    assert ann.quote == "the Q2 revenue of churned customers" and ann.span
    _consistent(sample_project)


def test_reopen_when_the_text_is_gone_leaves_it_open_and_detached(sample_project):
    doc = open_document(sample_project, "plan")
    doc.resolve("c51d8e", "B", answer="fine")
    doc.save_text(doc.text.replace("test accounts", "internal accounts"))
    ann = doc.reopen("c51d8e")
    assert ann.is_open and ann.detached and ann.span is None
    assert "no longer in the text" in ann.history[-1]["text"]
    _consistent(sample_project)
    with pytest.raises(AnnotationError) as err:
        doc.resolve("c51d8e", "A", replacement="x")
    assert err.value.code == "ANNOTATION_DETACHED"
    doc.resolve("c51d8e", "B", answer="no longer relevant")
    assert doc.annotation("c51d8e").status == "resolved"


def test_reattach_gives_a_detached_annotation_a_new_mark(sample_project):
    doc = open_document(sample_project, "plan")
    doc.save_text(
        doc.text.replace(mark("c51d8e", "test accounts"), "internal accounts").replace(
            "test accounts", "x"
        )
    )
    assert doc.annotation("c51d8e").detached
    start = doc.text.index("internal accounts")
    ann = doc.reattach("c51d8e", start, start + len("internal accounts"))
    assert not ann.detached and ann.quote == "internal accounts"
    _consistent(sample_project)


def test_delete_removes_the_entry_and_the_tags_but_not_the_text(sample_project):
    doc = open_document(sample_project, "plan")
    before = disk_text(sample_project)
    doc.delete("c51d8e")
    assert disk_text(sample_project) == before.replace(
        mark("c51d8e", "test accounts"), "test accounts"
    )
    assert [a["id"] for a in read_sidecar(sample_project)["annotations"]] == ["3f9a1c", "7be204"]


def test_a_file_changed_on_disk_is_never_overwritten(sample_project):
    doc = open_document(sample_project, "plan")
    edited = disk_text(sample_project) + "\nAdded in another editor.\n"
    atomic_write_text(sample_project.plan_path, edited)
    with pytest.raises(DocumentConflictError) as err:
        doc.resolve("3f9a1c", "B", answer="x")
    assert "plan.md" in err.value.message and err.value.hint
    assert disk_text(sample_project) == edited
    doc.reload()
    doc.resolve("3f9a1c", "B", answer="x")
    assert "Added in another editor." in disk_text(sample_project)


def test_crlf_documents_keep_their_line_endings(make_project):
    text = f"# Plan\r\n\r\nWe count {mark('cr0001', 'active customers')} only.\r\n"
    project = make_project(
        text,
        {
            "version": 1,
            "annotations": [
                {"id": "cr0001", "status": "open", "quote": "active customers", "comment": "which?"}
            ],
        },
    )
    doc = open_document(project, "plan")
    assert doc.repairs == []
    doc.resolve("cr0001", "B", answer="Q2 actives")
    assert disk_text(project) == "# Plan\r\n\r\nWe count active customers only.\r\n"


def test_unknown_fields_are_kept_on_rewrite(make_project):
    text = f"Text {mark('uf0001', 'here')}.\n"
    project = make_project(
        text,
        {
            "version": 1,
            "producer": {"tool": "other", "v": 3},
            "annotations": [
                {
                    "id": "uf0001",
                    "status": "open",
                    "quote": "here",
                    "comment": "c",
                    "color": "yellow",
                    "anchor": {"span": [0, 0], "para": 2},
                    "history": [{"at": "x", "by": "u", "action": "created", "emoji": ":)"}],
                }
            ],
        },
    )
    open_document(project, "plan").reply("uf0001", "noted")
    data = read_sidecar(project)
    assert data["producer"] == {"tool": "other", "v": 3}
    entry = data["annotations"][0]
    assert entry["color"] == "yellow" and entry["anchor"]["para"] == 2
    assert entry["anchor"]["span"] == [text.index("here"), text.index("here") + 4]
    assert entry["history"][0]["emoji"] == ":)"


def test_a_sidecar_without_version_is_migrated_on_write(make_project):
    text = f"Text {mark('mv0001', 'here')}.\n"
    project = make_project(
        text, {"annotations": [{"id": "mv0001", "status": "open", "quote": "here", "comment": "c"}]}
    )
    doc = open_document(project, "plan")
    assert doc.read_only_reason is None and doc.dirty
    doc.save_repairs()
    assert read_sidecar(project)["version"] == 1
    assert read_sidecar(project)["annotations"][0]["history"] == []


def test_a_report_without_sidecar_gets_one_with_its_first_annotation(make_project):
    project = make_project("# Plan\n")
    doc = open_document(project, "report")
    assert doc.annotations == [] and not (project.dir / "report.annotations.json").exists()
    doc.save_text("# Report\n\nChurn rose to 4%.\n")
    assert not (project.dir / "report.annotations.json").exists()
    start = doc.text.index("4%")
    ann_id = doc.create_annotation(start, start + 2, "source?")
    data = json.loads((project.dir / "report.annotations.json").read_text())
    assert [a["id"] for a in data["annotations"]] == [ann_id]


@pytest.mark.parametrize("bad_id", [["3f9a1c"], {"id": "3f9a1c"}, 3])
def test_an_item_whose_id_is_not_a_string_is_named_in_the_batch_error(sample_project, bad_id):
    # a list or object id used to escape as TypeError (unhashable) instead of the batch error
    doc = open_document(sample_project, "plan")
    before = disk_text(sample_project), read_sidecar(sample_project)
    with pytest.raises(AnnotationBatchError) as err:
        doc.resolve_many([{"id": bad_id, "mode": "B"}, {"id": "c51d8e", "mode": "B"}])
    assert err.value.problems == [
        {
            "index": 0,
            "id": bad_id,
            "code": "ANNOTATION_BAD_ITEM",
            "message": f"'id' must be a string, found {bad_id!r}",
        }
    ]
    assert (disk_text(sample_project), read_sidecar(sample_project)) == before
