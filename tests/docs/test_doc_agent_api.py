"""The agent's backends: read_plan / read_report, resolve_annotations, update_plan."""

import json

import pytest
from docs_helpers import disk_text, entry, mark, read_sidecar

from lantide.docs import agent_view, open_document, resolve_annotations, update_document
from lantide.docs.errors import AnnotationBatchError


def test_agent_view_of_the_sample_plan(sample_project):
    view = agent_view(sample_project, "plan")
    assert view["document"] == "plan" and view["path"] == "projects/q3-churn/plan.md"
    assert view["text"] == disk_text(sample_project)
    assert view["open_annotation_count"] == 3
    assert [a["id"] for a in view["annotation_summary"]] == ["3f9a1c", "7be204", "c51d8e"]
    first = view["annotation_summary"][0]
    assert first["quote"] == "how much revenue left with them"
    assert first["comment"].startswith("Q2 revenue of the churned customers")
    for ann in view["annotations"]:
        start, end = ann["span"]
        assert view["text"][start:end] == ann["quote"]
    guidance = view["patch_guidance"]
    assert "Mode A" in guidance and "Mode B" in guidance and "resolve_annotations" in guidance
    assert "both tags" in guidance
    assert view["read_only_reason"] is None and "repairs" not in view
    json.dumps(view)  # a tool result: plain JSON


def test_agent_view_is_compact_and_leaves_stale_spans_out(make_project):
    long_quote = " ".join(["churn"] * 80)
    text = f"{mark('lq0001', long_quote)}\n\nResolved text stays.\n"
    project = make_project(
        text,
        {
            "version": 1,
            "annotations": [
                entry(
                    "lq0001",
                    long_quote,
                    comment="x" * 2000,
                    history=[
                        {"at": "t", "by": "lead", "action": "created", "text": "c"},
                        {"at": "t", "by": "agent", "action": "replied", "text": "first"},
                        {"at": "t", "by": "lead", "action": "replied", "text": "latest"},
                    ],
                ),
                entry(
                    "rs0001",
                    "Resolved text",
                    status="resolved",
                    history=[
                        {
                            "at": "t",
                            "by": "agent",
                            "action": "resolved",
                            "mode": "B",
                            "text": "fine",
                        }
                    ],
                ),
            ],
        },
    )
    view = agent_view(project, "plan")
    long_ann, resolved = view["annotations"]
    assert long_ann["quote"].endswith("chars]") and len(long_ann["quote"]) < 200
    assert "… [+" in long_ann["comment"] and len(long_ann["comment"]) < 700
    assert long_ann["replies"] == 2 and long_ann["latest_reply"]["text"] == "latest"
    assert "span" not in resolved  # no mark: its stored span is stale
    assert resolved["resolution"] == {"mode": "B", "by": "agent", "at": "t", "text": "fine"}
    assert view["annotation_summary"][0]["latest_reply"]["by"] == "lead"
    assert view["open_annotation_count"] == 1


def test_resolve_annotations_applies_a_batch_and_reports_each_change(sample_project):
    result = resolve_annotations(
        sample_project,
        "plan",
        [
            {"id": "3f9a1c", "mode": "A", "replacement": "the Q2 revenue of churned customers"},
            {"id": "c51d8e", "mode": "B", "answer": "The flag is reliable; names are noise."},
            {
                "id": "7be204",
                "mode": "a",
                "replacement": "Churned: active in Q2, not in Q3.",
                "answer": "shorter",
            },
        ],
    )
    text = disk_text(sample_project)
    assert result["open_annotation_count"] == 0 and result["text_changed"]
    changes = result["changes"]
    assert list(changes) == ["3f9a1c", "c51d8e", "7be204"]
    assert text[slice(*changes["3f9a1c"]["span"])] == "the Q2 revenue of churned customers"
    assert text[slice(*changes["c51d8e"]["span"])] == "test accounts"
    assert text[slice(*changes["7be204"]["span"])] == "Churned: active in Q2, not in Q3."
    assert "<mark" not in text
    for e in read_sidecar(sample_project)["annotations"]:
        assert e["status"] == "resolved" and e["history"][-1]["by"] == "agent"


def test_a_batch_with_bad_items_names_every_one_and_changes_nothing(sample_project):
    before = disk_text(sample_project), read_sidecar(sample_project)
    resolve_annotations(sample_project, "plan", [{"id": "c51d8e", "mode": "B", "answer": "ok"}])
    before = disk_text(sample_project), read_sidecar(sample_project)
    with pytest.raises(AnnotationBatchError) as err:
        resolve_annotations(
            sample_project,
            "plan",
            [
                {"id": "3f9a1c", "mode": "B", "answer": "fine"},  # valid, but not applied
                {"id": "nope00", "mode": "B", "answer": "x"},
                {"id": "c51d8e", "mode": "B", "answer": "again"},
                {"id": "7be204", "mode": "A"},
            ],
        )
    codes = [(p["id"], p["code"]) for p in err.value.problems]
    assert codes == [
        ("nope00", "ANNOTATION_UNKNOWN_ID"),
        ("c51d8e", "ANNOTATION_ALREADY_RESOLVED"),
        ("7be204", "ANNOTATION_REPLACEMENT_MISSING"),
    ]
    assert err.value.code == "ANNOTATION_BATCH_INVALID"
    for name in ("nope00", "c51d8e", "7be204"):
        assert name in err.value.message
    assert (disk_text(sample_project), read_sidecar(sample_project)) == before
    with pytest.raises(AnnotationBatchError) as err:
        resolve_annotations(sample_project, "plan", [{"id": "zz", "mode": "B", "answer": "x"}])
    assert err.value.code == "ANNOTATION_UNKNOWN_ID"


def test_update_document_keeps_marks_and_reports_what_it_had_to_do(sample_project):
    doc = open_document(sample_project, "plan")
    text = doc.text
    new = (
        text.replace(
            mark("c51d8e", "test accounts"), "test accounts"
        ).replace(  # dropped: reanchored
            mark("7be204", "Churned: active in Q2 2025, not active in Q3 2025."),
            "Churned: no orders in Q3 2025.",
        )  # dropped with its quote: detached
        + f"\nA {mark('ab12cd', 'made-up')} mark.\n"
    )
    result = update_document(sample_project, "plan", new, by="agent")
    assert result["kept"] == ["3f9a1c"] and result["reanchored"] == ["c51d8e"]
    assert result["detached"] == ["7be204"] and result["unknown_marks"] == ["ab12cd"]
    assert result["text_adjusted"] and result["text_changed"]
    assert len(result["warnings"]) == 3 and result["open_annotation_count"] == 4
    saved = disk_text(sample_project)
    assert mark("c51d8e", "test accounts") in saved and "Churned: no orders in Q3 2025." in saved
    entries = {e["id"]: e for e in read_sidecar(sample_project)["annotations"]}
    assert entries["7be204"]["detached"] is True and entries["7be204"]["status"] == "open"
    assert entries["ab12cd"]["recreated"] is True


def test_update_document_with_an_unchanged_text_writes_nothing(sample_project):
    before = (sample_project.dir / "plan.annotations.json").stat().st_mtime_ns
    result = update_document(sample_project, "plan", disk_text(sample_project))
    assert not result["text_changed"] and result["repairs"] == []
    assert (sample_project.dir / "plan.annotations.json").stat().st_mtime_ns == before
