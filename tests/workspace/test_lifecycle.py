"""The project lifecycle: statuses, the analyst's Plan approval, history, older files."""

import json

import pytest

from lantide.errors import LantideError
from lantide.workspace.lifecycle import StatusRefused
from lantide.workspace.model import Workspace


@pytest.fixture
def ws(empty_workspace):
    ws = Workspace.open(empty_workspace, lock=False)
    ws.create_project("churn", plan_text="# Plan\n\n1. Count churned accounts.\n")
    return ws


def _json(ws):
    return json.loads((ws.root / "projects/churn/project.json").read_text())


def test_the_review_statuses_are_recorded_with_who_and_when(ws):
    project = ws.project("churn")
    project.set_status("plan_review", by="agent")
    project.approve_plan()
    project.set_status("report_review", by="agent")
    project.set_status("delivered")
    data = _json(ws)
    assert data["status"] == "delivered"
    moves = [(h["action"], h["from"], h["to"], h["by"]) for h in data["history"]]
    assert moves == [
        ("status", "planning", "plan_review", "agent"),
        ("approve_plan", "plan_review", "executing", "analyst"),
        ("status", "executing", "report_review", "agent"),
        ("status", "report_review", "delivered", "analyst"),
    ]
    assert all(h["at"].endswith("Z") for h in data["history"])
    assert data["history"][1]["user"]  # the analyst's login name
    assert "user" not in data["history"][0]


def test_executing_needs_an_approved_plan_for_the_analyst_too(ws):
    project = ws.project("churn")
    before = (ws.root / "projects/churn/project.json").read_bytes()
    with pytest.raises(StatusRefused, match="not approved") as err:
        project.set_status("executing")
    assert "approve-plan" in err.value.hint
    assert (ws.root / "projects/churn/project.json").read_bytes() == before


def test_the_agent_never_delivers_or_archives(ws):
    project = ws.project("churn")
    project.approve_plan()
    for status in ("delivered", "archived"):
        with pytest.raises(StatusRefused, match="only the analyst"):
            project.set_status(status, by="agent")
    assert ws.project("churn").status == "executing"


def test_a_plan_edited_after_approval_is_changed_and_needs_a_new_approval(ws):
    project = ws.project("churn")
    project.approve_plan()
    assert project.approval() == {
        **project.approval(),
        "approved": True,
        "changed_since_approval": False,
    }
    plan = ws.root / "projects/churn/plan.md"
    # an annotation mark is not a change of the Plan
    plan.write_text('# Plan\n\n1. Count <mark data-annotation-id="a1">churned</mark> accounts.\n')
    assert ws.project("churn").approval()["changed_since_approval"] is False
    plan.write_text("# Plan\n\n1. Count churned accounts, test accounts excluded.\n")
    assert ws.project("churn").approval()["changed_since_approval"] is True
    project = ws.project("churn")
    project.set_status("report_review", by="agent")
    with pytest.raises(StatusRefused, match="changed since it was approved"):
        project.set_status("executing", by="agent")
    project.approve_plan()
    assert ws.project("churn").approval()["changed_since_approval"] is False


def test_an_older_project_json_saying_done_reads_as_delivered(ws):
    path = ws.root / "projects/churn/project.json"
    data = _json(ws)
    data["status"] = "done"
    path.write_text(json.dumps(data))
    project = ws.project("churn")
    assert project.status == "delivered"
    assert project.to_dict()["status"] == "delivered"
    assert json.loads(path.read_text())["status"] == "done"  # read, not rewritten
    project.set_status("planning")
    assert _json(ws)["history"][-1]["from"] == "delivered"


def test_an_older_executing_project_without_approval_keeps_its_status(ws):
    path = ws.root / "projects/churn/project.json"
    data = _json(ws)
    data["status"] = "executing"
    path.write_text(json.dumps(data))
    project = ws.project("churn")
    assert project.status == "executing"
    assert project.approval()["approved"] is False
    project.set_status("report_review", by="agent")  # moving on works
    with pytest.raises(StatusRefused):  # coming back needs the approval it never had
        project.set_status("executing", by="agent")


def test_cli_approve_plan_and_status(ws, run_cli):
    refused = run_cli("project", ws.root, "status", "churn", "executing")
    assert refused.returncode == 1
    assert "approve-plan" in refused.stderr
    done = run_cli("project", "approve-plan", ws.root, "churn", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)["projects"][0]
    assert listed["status"] == "executing"
    assert listed["plan_approval"]["approved"] is True
    text = run_cli("project", ws.root, "list")
    assert "executing" in text.stdout and "Plan approved" in text.stdout


def test_approving_a_plan_that_changed_since_it_was_shown_approves_nothing(ws):
    project = ws.project("churn")
    shown = project.plan_text()
    (ws.root / "projects/churn/plan.md").write_text("# Plan\n\n1. Count all accounts.\n")
    before = (ws.root / "projects/churn/project.json").read_bytes()
    with pytest.raises(LantideError, match="changed since it was shown") as err:
        project.approve_plan(seen_text=shown)
    assert err.value.code == "PLAN_CHANGED"
    assert (ws.root / "projects/churn/project.json").read_bytes() == before
    project.approve_plan(seen_text=project.plan_text())
    assert ws.project("churn").status == "executing"


def test_hand_edited_history_and_approval_fields_do_not_break_loading(ws):
    path = ws.root / "projects/churn/project.json"
    data = _json(ws)
    data.update({"history": "moved on Monday", "plan_approval": 5})
    path.write_text(json.dumps(data))
    project = ws.project("churn")
    assert project.history == [] and project.approval()["approved"] is False
    project.set_status("plan_review", by="agent")
    assert _json(ws)["history"][-1]["to"] == "plan_review"
