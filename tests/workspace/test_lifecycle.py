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


def test_the_analyst_withdraws_an_approval_and_the_history_keeps_it(ws):
    project = ws.project("churn")
    project.set_status("plan_review")
    approved = project.approve_plan()
    state = project.withdraw_approval()
    assert state == {"approved": False, "changed_since_approval": False}
    data = _json(ws)
    assert data["status"] == "plan_review" and "plan_approval" not in data
    last = data["history"][-1]
    assert (last["action"], last["from"], last["to"], last["by"]) == (
        "withdraw_approval",
        "executing",
        "plan_review",
        "analyst",
    )
    assert last["approved_at"] == approved["at"] and len(last["plan_sha256"]) == 64
    assert last["user"]
    with pytest.raises(StatusRefused, match="not approved"):  # executing needs it again
        project.set_status("executing")
    project.approve_plan()  # and it can be given again
    assert ws.project("churn").status == "executing"


def test_withdrawing_is_the_analysts_and_needs_an_approval(ws):
    project = ws.project("churn")
    before = (ws.root / "projects/churn/project.json").read_bytes()
    with pytest.raises(StatusRefused, match="no approval") as err:
        project.withdraw_approval()
    assert err.value.code == "NO_APPROVAL"
    project.approve_plan()
    approved = (ws.root / "projects/churn/project.json").read_bytes()
    with pytest.raises(StatusRefused, match="only the analyst"):
        project.withdraw_approval(by="agent")
    project.set_status("report_review")
    project.set_status("delivered")
    delivered = (ws.root / "projects/churn/project.json").read_bytes()
    with pytest.raises(StatusRefused, match="delivered") as err:
        project.withdraw_approval()
    assert "report_review" in err.value.hint
    assert (ws.root / "projects/churn/project.json").read_bytes() == delivered
    assert before != approved  # (the refusals above wrote nothing)


def test_approval_concerns_name_open_annotations_and_unsaved_edits():
    from lantide.workspace.lifecycle import approval_concerns

    assert approval_concerns(0, False) == []
    assert approval_concerns(1, False) == ["1 annotation is still open on the Plan"]
    both = approval_concerns(4, True)
    assert both[0] == "4 annotations are still open on the Plan" and "unsaved" in both[1]


def test_cli_withdraw_approval(ws, run_cli):
    refused = run_cli("project", ws.root, "withdraw-approval", "churn")
    assert refused.returncode == 1 and "no approval" in refused.stderr
    assert run_cli("project", ws.root, "approve-plan", "churn").returncode == 0
    done = run_cli("project", ws.root, "withdraw-approval", "churn", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)["projects"][0]
    assert listed["status"] == "plan_review"
    assert listed["plan_approval"]["approved"] is False
    assert _json(ws)["history"][-1]["action"] == "withdraw_approval"


def test_cli_approve_plan_notes_open_annotations(ws, run_cli):
    from lantide.docs.document import open_document

    doc = open_document(ws.project("churn"), "plan")
    start = doc.text.index("Count")
    doc.create_annotation(start, start + 5, "which accounts?")
    done = run_cli("project", ws.root, "approve-plan", "churn")
    assert done.returncode == 0, done.stderr
    assert "note: approved while 1 annotation is still open on the Plan" in done.stderr
