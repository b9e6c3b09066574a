"""External edits of Plans and sidecars are re-read, re-anchored and reported."""

import json
import queue

from docs_helpers import mark

from lantide.docs import DocumentMonitor, open_document
from lantide.workspace.watcher import ANNOTATIONS, DOCUMENT, FileChange, WorkspaceWatcher


def _edit(path, old, new):
    """Another editor: a plain write, not Lantide's atomic save."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_an_external_edit_is_reanchored_and_reported(sample_workspace, sample_project):
    monitor = DocumentMonitor(sample_workspace)
    doc = open_document(sample_project, "plan")
    monitor.remember(doc)
    _edit(sample_project.plan_path, mark("c51d8e", "test accounts"), "test accounts")
    (change,) = monitor.handle(
        [FileChange(DOCUMENT, sample_project.plan_path, "modified", "q3-churn")]
    )
    assert (change.project, change.kind, change.event) == ("q3-churn", "plan", "modified")
    assert change.text_changed and change.files == ["plan.md"]
    assert [r["action"] for r in change.repairs] == ["reanchored"]
    assert change.document.scan.mark("c51d8e") is not None  # the tab can reload this
    assert json.dumps(change.to_dict())
    # the same state again (a second event for the same write) is not reported twice
    assert (
        monitor.handle([FileChange(DOCUMENT, sample_project.plan_path, "modified", "q3-churn")])
        == []
    )


def test_a_sidecar_changed_by_another_program_reports_status_changes(
    sample_workspace, sample_project
):
    monitor = DocumentMonitor(sample_workspace)
    monitor.remember(open_document(sample_project, "plan"))
    other = open_document(sample_project, "plan")  # e.g. the command line, in another process
    other.resolve("7be204", "B", answer="done elsewhere", by="colleague")
    changes = monitor.handle(
        [
            FileChange(DOCUMENT, sample_project.plan_path, "modified", "q3-churn"),
            FileChange(
                ANNOTATIONS, sample_project.dir / "plan.annotations.json", "modified", "q3-churn"
            ),
        ]
    )
    (change,) = changes  # one report per document, not per file
    assert change.files == ["plan.annotations.json", "plan.md"]
    assert change.status_changed == {"7be204": "resolved"} and change.annotations_changed
    assert change.added == [] and change.removed == []


def test_deleted_and_unrelated_files(sample_workspace, sample_project):
    monitor = DocumentMonitor(sample_workspace)
    monitor.remember(open_document(sample_project, "report"))
    notes = sample_project.dir / "notes.md"
    notes.write_text("not a plan")
    assert monitor.handle([FileChange(DOCUMENT, notes, "created", "q3-churn")]) == []
    sample_project.report_path.unlink()
    (change,) = monitor.handle(
        [FileChange(DOCUMENT, sample_project.report_path, "deleted", "q3-churn")]
    )
    assert change.event == "deleted" and change.kind == "report" and change.document is None


def test_a_broken_sidecar_written_outside_is_reported_read_only(sample_workspace, sample_project):
    monitor = DocumentMonitor(sample_workspace)
    monitor.remember(open_document(sample_project, "plan"))
    sidecar = sample_project.dir / "plan.annotations.json"
    sidecar.write_text("{broken")
    (change,) = monitor.handle([FileChange(ANNOTATIONS, sidecar, "modified", "q3-churn")])
    assert "not valid JSON" in change.read_only_reason and change.annotations_changed
    assert sidecar.read_text() == "{broken"


def test_with_the_real_watcher_external_edits_arrive_and_own_saves_do_not(
    sample_workspace, sample_project
):
    monitor = DocumentMonitor(sample_workspace)
    doc = open_document(sample_project, "plan")
    monitor.remember(doc)
    reports: queue.Queue = queue.Queue()
    watcher = WorkspaceWatcher(
        sample_workspace,
        lambda batch: [reports.put(c) for c in monitor.handle(batch)],
        debounce=0.15,
    )
    report = sample_project.report_path

    def reports_until_the_report_changes() -> list:
        got = []
        while not got or got[-1].kind != "report":
            got.append(reports.get(timeout=20))
        return got

    with watcher:
        # the watcher is watching once another program's edit of the Report is reported
        report.write_text(report.read_text() + "\nFirst look.\n")
        reports_until_the_report_changes()
        doc.resolve("3f9a1c", "B", answer="ours")  # Lantide's own pair save
        monitor.remember(doc)
        # a later edit by another program is reported after the pair save was dealt with
        # (the watcher reports paths in the order they went quiet)
        report.write_text(report.read_text() + "\nSecond look.\n")
        assert [c.kind for c in reports_until_the_report_changes()] == ["report"]
        _edit(sample_project.plan_path, "## Checks", "## Checks\n- Added in vim.")
        change = reports.get(timeout=5)
    assert change.kind == "plan" and change.text_changed and not change.annotations_changed
    assert "Added in vim." in change.document.text
