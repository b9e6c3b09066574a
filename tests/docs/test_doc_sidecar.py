"""Broken or foreign sidecars: read-only for annotations, never overwritten."""

import pytest
from docs_helpers import disk_text, mark

from lantide.docs import agent_view, open_document
from lantide.docs.errors import AnnotationsReadOnlyError

TEXT = f"# Plan\n\nSome {mark('ro0001', 'marked')} text.\n"


@pytest.mark.parametrize(
    "content, problem",
    [
        ('{"version": 1, "annotations": [', "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"version": 7, "annotations": []}', "newer than this Lantide reads"),
        ('{"version": 1, "annotations": {"a": 1}}', "'annotations' must be a list"),
        ('{"version": 1, "annotations": [{"id": "ro0001", "status": "done"}]}', "'status' must be"),
        ('{"version": 1, "annotations": [{"id": "bad id", "status": "open"}]}', "'id' must be"),
        (
            '{"version": 1, "annotations": [{"id": "a", "status": "open"}, '
            '{"id": "a", "status": "open"}]}',
            "share the id",
        ),
        (
            '{"version": 1, "annotations": '
            '[{"id": "a", "status": "open", "anchor": {"span": "x"}}]}',
            "anchor.span",
        ),
    ],
)
def test_a_broken_sidecar_makes_annotations_read_only_and_is_kept(make_project, content, problem):
    project = make_project(TEXT, content)
    sidecar = project.dir / "plan.annotations.json"
    doc = open_document(project, "plan")
    assert doc.read_only_reason is not None
    assert "plan.annotations.json" in doc.read_only_reason and problem in doc.read_only_reason
    with pytest.raises(AnnotationsReadOnlyError) as err:
        doc.reply("ro0001", "hello")
    assert err.value.hint and "plan.annotations.json" in err.value.message
    with pytest.raises(AnnotationsReadOnlyError):
        doc.create_annotation(0, 3, "x")
    # the text can still be edited; the broken sidecar stays exactly as it was
    report = doc.save_text(TEXT + "\nMore.\n")
    assert report.warnings and "read-only" in report.warnings[0]
    assert disk_text(project) == TEXT + "\nMore.\n"
    assert sidecar.read_text() == content
    view = agent_view(project, "plan")
    assert view["read_only_reason"] == doc.read_only_reason
    assert view["annotations"] == [] and view["open_annotation_count"] == 0


def test_a_sidecar_that_is_not_utf8_is_read_only(make_project):
    project = make_project(TEXT)
    sidecar = project.dir / "plan.annotations.json"
    sidecar.write_bytes(b'{"version": 1, "annotations": [], "x": "\xff"}')
    doc = open_document(project, "plan")
    assert "not UTF-8" in doc.read_only_reason
    assert sidecar.read_bytes() == b'{"version": 1, "annotations": [], "x": "\xff"}'
