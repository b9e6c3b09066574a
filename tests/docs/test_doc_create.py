"""Creating annotations from character ranges, and the ranges that are refused."""

import pytest
from docs_helpers import disk_text, mark, read_sidecar

from lantide.docs import open_document
from lantide.docs.errors import AnnotationRangeError
from lantide.docs.marks import scan_marks

PLAN = (
    "# Plan\n\n"
    "Churn is measured per quarter. Revenue is net revenue.\n\n"
    "| region | rate |\n|---|---|\n| EU | 3% |\n\n"
    "```sql\nSELECT churn FROM t\n```\n\n"
    "Use `clean_orders` for everything.\n\n"
    "Second paragraph with [a link](https://example.org/path).\n"
)


def _range(text, needle, extra=0):
    start = text.index(needle)
    return start, start + len(needle) + extra


def test_create_wraps_the_range_and_writes_text_and_sidecar(make_project):
    project = make_project(PLAN)
    doc = open_document(project, "plan")
    start, end = _range(PLAN, "Revenue is net revenue")
    ann_id = doc.create_annotation(start, end, "gross or net?", by="team lead")
    text = disk_text(project)
    assert text == PLAN[:start] + mark(ann_id, "Revenue is net revenue") + PLAN[end:]
    saved = read_sidecar(project)["annotations"]
    assert [a["id"] for a in saved] == [ann_id]
    (entry,) = saved
    assert entry["status"] == "open" and entry["quote"] == "Revenue is net revenue"
    assert entry["comment"] == "gross or net?"
    span = entry["anchor"]["span"]
    assert text[span[0] : span[1]] == "Revenue is net revenue"
    assert entry["history"][0]["action"] == "created" and entry["history"][0]["by"] == "team lead"


def test_surrounding_whitespace_is_trimmed(make_project):
    project = make_project(PLAN)
    doc = open_document(project, "plan")
    start, end = _range(PLAN, " Revenue is net revenue.\n")
    ann_id = doc.create_annotation(start, end, "c")
    assert doc.annotation(ann_id).quote == "Revenue is net revenue."


@pytest.mark.parametrize(
    "needle, reason",
    [
        ("revenue.\n\n| region", "crosses a table cell boundary"),
        ("EU | 3%", "crosses a table cell boundary"),
        ("SELECT churn", "inside a code block"),
        ("everything.\n\nSecond", "crosses a block boundary"),
        ("clean_or", "inside inline code"),
        ("`clean_orders` for", None),  # the whole code span: allowed
        ("Use `clean", "cuts through inline code"),
        (
            "quarter. Revenue is net revenue.\n\n| region | rate |\n|---|---|\n"
            "| EU | 3% |\n\n```sql",
            "crosses",
        ),
        ("example.org", None),  # inside a link target: widened to the whole link (placement)
    ],
)
def test_ranges_across_structure_are_refused_with_the_reason(make_project, needle, reason):
    project = make_project(PLAN)
    doc = open_document(project, "plan")
    start, end = _range(PLAN, needle)
    if reason is None:
        doc.create_annotation(start, end, "fine")
        assert len(doc.annotations) == 1
        return
    with pytest.raises(AnnotationRangeError) as err:
        doc.create_annotation(start, end, "no")
    assert reason in err.value.message
    assert err.value.code == "ANNOTATION_RANGE" and err.value.hint
    assert disk_text(project) == PLAN  # nothing written
    assert not (project.dir / "plan.annotations.json").exists()


def test_overlapping_or_nested_ranges_are_refused(sample_project):
    doc = open_document(sample_project, "plan")
    m = doc.scan.mark("c51d8e")
    text = doc.text
    with pytest.raises(AnnotationRangeError, match="overlaps the mark of annotation c51d8e"):
        doc.create_annotation(m.start - 10, m.inner_start + 3, "x")
    with pytest.raises(AnnotationRangeError, match="inside the mark of annotation c51d8e"):
        doc.create_annotation(m.inner_start, m.inner_start + 4, "x")
    with pytest.raises(AnnotationRangeError, match="overlaps"):
        doc.create_annotation(m.start - 5, m.end + 2, "x")  # containing the whole mark
    assert doc.text == text


def test_bad_ranges_and_empty_comments(make_project):
    project = make_project(PLAN)
    doc = open_document(project, "plan")
    for start, end in ((5, 5), (10, 3), (-1, 4), (0, len(PLAN) + 1)):
        with pytest.raises(AnnotationRangeError):
            doc.create_annotation(start, end, "c")
    start, end = _range(PLAN, "\n\nChurn")
    with pytest.raises(AnnotationRangeError):
        doc.create_annotation(start, start + 2, "c")  # only whitespace
    with pytest.raises(Exception) as err:
        doc.create_annotation(*_range(PLAN, "Churn"), "   ")
    assert err.value.code == "ANNOTATION_COMMENT_MISSING"


def test_new_ids_are_unique_and_marks_are_found_by_the_parser(make_project):
    project = make_project(PLAN)
    doc = open_document(project, "plan")
    ids = []
    for word in ("Churn", "measured", "quarter", "region", "EU", "Second", "paragraph"):
        start, end = _range(doc.text, word)
        ids.append(doc.create_annotation(start, end, f"about {word}"))
    assert len(set(ids)) == len(ids)
    scan = scan_marks(disk_text(project))
    assert sorted(m.id for m in scan.marks) == sorted(ids)
    assert [a.quote for a in doc.annotations] == [
        "Churn",
        "measured",
        "quarter",
        "region",
        "EU",
        "Second",
        "paragraph",
    ]


def test_annotations_read_in_text_order_whatever_order_they_were_made(make_project):
    """The annotation list follows the document: a comment made later on an earlier
    passage comes first; one whose text is gone comes last."""
    project = make_project(PLAN)
    doc = open_document(project, "plan")
    late = doc.create_annotation(*_range(doc.text, "Second paragraph"), "later in the text")
    early = doc.create_annotation(*_range(doc.text, "Churn is measured"), "earlier")
    middle = doc.create_annotation(*_range(doc.text, "Revenue is net"), "middle")
    assert [a.id for a in doc.annotations] == [late, early, middle]  # the sidecar's order
    assert [a.id for a in doc.annotations_in_text_order()] == [early, middle, late]
    # a passage deleted from the text: its annotation goes to the end
    text = doc.text
    gone = text.index(mark(early, "Churn is measured"))
    doc.save_text(text[:gone] + text[gone + len(mark(early, "Churn is measured")) :])
    assert [a.id for a in doc.annotations_in_text_order()] == [middle, late, early]
