"""``lantide edits``: list the agent's pending edits as unified diffs, accept or reject
hunks, clear errors for unknown ids and hunks and for a broken edit file."""

from __future__ import annotations

import json

import pytest

from lantide.docs.edit_submit import submit_update
from lantide.workspace import layout
from lantide.workspace.atomic import atomic_write_text
from lantide.workspace.model import Project

BASE = "# Report\n\nfirst line\n\nsecond\n\nthird\n\nfourth line\n"
PROPOSAL = "# Report\n\nfirst line, reworded\n\nsecond\n\nthird\n\nfourth line, reworded\n"


@pytest.fixture
def pending(sample_workspace) -> tuple[Project, str]:
    project = Project.load(sample_workspace, "q3-churn")
    atomic_write_text(project.report_path, BASE)
    edit_id = submit_update(project, "report", PROPOSAL, conversation=None)["edit_id"]
    return project, edit_id


def report(project: Project) -> str:
    return project.report_path.read_text(encoding="utf-8")


def test_list_shows_each_hunk_as_a_unified_diff(run_cli, sample_workspace, pending):
    project, edit_id = pending
    out = run_cli("edits", sample_workspace, "q3-churn")
    assert out.returncode == 0, out.stderr
    assert f"edit {edit_id}  projects/q3-churn/report.md  update_report by agent" in out.stdout
    assert "2 of 2 hunks pending" in out.stdout
    assert "--- a/projects/q3-churn/report.md" in out.stdout
    assert "-first line\n+first line, reworded\n" in out.stdout
    assert "hunk 0 (pending)" in out.stdout and "hunk 1 (pending)" in out.stdout
    as_json = run_cli("edits", sample_workspace, "q3-churn", "--json")
    data = json.loads(as_json.stdout)
    (edit,) = data["edits"]
    assert edit["id"] == edit_id and edit["base_sha256"] and data["problems"] == []
    assert [h["lines"] for h in edit["hunks"]] == ["3", "9"]
    assert edit["hunks"][1]["diff"].count("@@") == 2


def test_accept_one_hunk_and_reject_the_other(run_cli, sample_workspace, pending):
    project, edit_id = pending
    out = run_cli("edits", sample_workspace, "q3-churn", "accept", edit_id, "1")
    assert out.returncode == 0, out.stderr
    assert "accepted 1 of edit" in out.stdout and "still pending" in out.stdout
    assert report(project) == BASE.replace("fourth line\n", "fourth line, reworded\n")
    out = run_cli("edits", sample_workspace, "q3-churn", "reject", edit_id, "--json")
    assert out.returncode == 0, out.stderr
    decision = json.loads(out.stdout)
    assert decision["hunks"] == [0] and decision["closed"] is True
    assert report(project) == BASE.replace("fourth line\n", "fourth line, reworded\n")
    listed = run_cli("edits", sample_workspace, "q3-churn")
    assert listed.stdout.strip() == "no pending edits in q3-churn"
    history = Project.load(sample_workspace, "q3-churn").history
    assert [(h["action"], h["hunks"]) for h in history[-2:]] == [
        ("accept_edit", [1]),
        ("reject_edit", [0]),
    ]


def test_unknown_ids_and_hunks(run_cli, sample_workspace, pending):
    project, edit_id = pending
    out = run_cli("edits", sample_workspace, "q3-churn", "accept", "e12345678")
    assert out.returncode == 1 and "no pending edit 'e12345678'" in out.stderr
    assert "lantide edits" in out.stderr  # the hint
    out = run_cli("edits", sample_workspace, "q3-churn", "accept", edit_id, "5", "--json")
    assert out.returncode == 1
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "EDIT_UNKNOWN_HUNK" and "no hunk 5" in error["message"]
    out = run_cli("edits", sample_workspace, "q3-churn", "accept")
    assert out.returncode == 2 and "needs the edit's id" in out.stderr
    out = run_cli("edits", sample_workspace, "q3-churn", "accept", edit_id, "x")
    assert out.returncode == 2  # argparse: a hunk is a number
    assert report(project) == BASE


def test_a_broken_edit_file_is_named_and_kept(run_cli, sample_workspace, pending):
    project, edit_id = pending
    path = layout.edit_path(sample_workspace, "q3-churn", edit_id)
    path.write_text('{"id": "' + edit_id + '", "hunks": ', encoding="utf-8")
    out = run_cli("edits", sample_workspace, "q3-churn")
    assert out.returncode == 1 and str(path) in out.stderr and "not valid JSON" in out.stderr
    out = run_cli("edits", sample_workspace, "q3-churn", "accept", edit_id)
    assert out.returncode == 1 and str(path) in out.stderr
    assert path.read_text(encoding="utf-8").endswith('"hunks": ') and report(project) == BASE
