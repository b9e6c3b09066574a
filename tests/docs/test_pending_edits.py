"""Pending edits of the Plan and the Report: hunks, accept/reject subsets, a file changed
meanwhile, annotations kept consistent, hostile edit files, the history and the setting."""

from __future__ import annotations

import json

import pytest
from docs_helpers import disk_text, read_sidecar
from hypothesis import given, settings
from hypothesis import strategies as st

from lantide.docs.edit_hunks import compute_hunks, merge, unified_diff
from lantide.docs.edit_review import EditConflictError, decide
from lantide.docs.edit_submit import submit_resolution, submit_update
from lantide.docs.pending_edits import EditError, EditNotFoundError, list_edits, load_edit
from lantide.errors import CorruptFileError
from lantide.workspace import layout
from lantide.workspace.atomic import atomic_write_text
from lantide.workspace.lifecycle import last_move
from lantide.workspace.model import Project

BASE = "# Report\n\nline one\nline two\nline three\n\nmiddle\n\nline four\nline five\n"
PROPOSAL = "# Report\n\nline ONE\nline two\nline three\n\nmiddle\n\nline four\nline FIVE\nadded\n"


@pytest.fixture
def project(make_project) -> Project:
    project = make_project("# Plan\n")
    atomic_write_text(project.report_path, BASE)
    return project


def report(project: Project) -> str:
    return project.report_path.read_text(encoding="utf-8")


def history(project: Project) -> list[dict]:
    return Project.load(project.workspace_root, project.dirname).history


def test_hunks_are_line_runs_with_stable_indices_and_apply_to_the_proposal():
    hunks = compute_hunks(BASE, PROPOSAL)
    assert [(h.index, h.old, h.new) for h in hunks] == [
        (0, ["line one\n"], ["line ONE\n"]),
        (1, ["line five\n"], ["line FIVE\n", "added\n"]),
    ]
    both = merge(BASE, [], hunks, BASE)
    assert both.text == PROPOSAL and both.applied == [0, 1] and not both.conflicts
    assert merge(BASE, [], hunks[1:], BASE).text == BASE.replace(
        "line five\n", "line FIVE\nadded\n"
    )
    diff = unified_diff(BASE, hunks, label="report.md")
    assert "-line one\n+line ONE\n" in diff and "@@ " in diff and "hunk 1 (pending)" in diff


def test_an_edit_waits_and_the_file_holds_only_accepted_text(project):
    result = submit_update(project, "report", PROPOSAL, conversation="c1")
    assert result["pending_review"] is True and report(project) == BASE
    edit_id = result["edit_id"]
    assert [h["index"] for h in result["hunks"]] == [0, 1]
    stored = json.loads(layout.edit_path(project.workspace_root, "p", edit_id).read_text())
    assert stored["document"] == "projects/p/report.md" and stored["by"] == "agent"
    assert stored["base_sha256"] and stored["at"] and len(stored["hunks"]) == 2

    decision = decide(project, edit_id, "accept", [1])
    assert decision.hunks == [1] and not decision.closed
    assert report(project) == BASE.replace("line five\n", "line FIVE\nadded\n")
    decision = decide(project, edit_id, "reject", [0])
    assert decision.closed and report(project) == BASE.replace("line five\n", "line FIVE\nadded\n")
    assert list_edits(project) == ([], [])
    entries = [h for h in history(project) if h["action"].endswith("_edit")]
    assert [(h["action"], h["hunks"], h["by"], h["edit"]) for h in entries] == [
        ("accept_edit", [1], "analyst", edit_id),
        ("reject_edit", [0], "analyst", edit_id),
    ]
    assert entries[0]["user"] and entries[0]["at"] and entries[1]["seq"] == entries[0]["seq"] + 1
    assert entries[0]["conversation"] == "c1"


def test_edit_decisions_are_no_lifecycle_moves(project):
    project.set_status("plan_review", by="agent")
    before = last_move(history(project))
    edit_id = submit_update(project, "report", PROPOSAL, conversation=None)["edit_id"]
    decide(project, edit_id, "accept")
    assert last_move(history(project)) == before  # consent bound to moves is not ended
    project.set_status("planning", by="agent")
    seqs = [h["seq"] for h in history(project)]
    assert seqs == sorted(set(seqs))  # one number per entry, moves and decisions alike


def test_the_analyst_changed_the_file_meanwhile(project):
    edit_id = submit_update(project, "report", PROPOSAL, conversation=None)["edit_id"]
    # the analyst rewrites line five (hunk 1's line) and adds a line at the top
    mine = "Analyst's note\n" + BASE.replace("line five\n", "line 5 (mine)\n")
    atomic_write_text(project.report_path, mine)
    with pytest.raises(EditConflictError) as err:
        decide(project, edit_id, "accept")
    assert "projects/p/report.md" in err.value.message and "hunk 1" in err.value.message
    assert "hunk 0 went in" in err.value.message
    # hunk 0 went in below the analyst's new line; what the analyst wrote is all there
    assert report(project) == mine.replace("line one\n", "line ONE\n")
    edit = load_edit(project, edit_id)
    assert edit.hunk_indices("accepted") == [0] and edit.hunk_indices("pending") == [1]
    decide(project, edit_id, "reject", [1])
    assert "line 5 (mine)" in report(project) and list_edits(project) == ([], [])


def test_a_change_elsewhere_lets_every_hunk_in(project):
    edit_id = submit_update(project, "report", PROPOSAL, conversation=None)["edit_id"]
    atomic_write_text(project.report_path, BASE.replace("middle\n", "middle, edited\n"))
    decide(project, edit_id, "accept")
    assert report(project) == PROPOSAL.replace("middle\n", "middle, edited\n")


def test_unknown_ids_and_hunks_are_clear_errors(project):
    edit_id = submit_update(project, "report", PROPOSAL, conversation=None)["edit_id"]
    with pytest.raises(EditNotFoundError):
        decide(project, "e00000000", "accept")
    with pytest.raises(EditNotFoundError):
        decide(project, "../../project", "accept")
    with pytest.raises(EditError) as err:
        decide(project, edit_id, "accept", [7])
    assert err.value.code == "EDIT_UNKNOWN_HUNK" and "hunks 0-1" in err.value.message
    decide(project, edit_id, "reject", [0])
    with pytest.raises(EditError) as err:
        decide(project, edit_id, "accept", [0])
    assert err.value.code == "EDIT_HUNK_DECIDED"
    assert report(project) == BASE


def test_hostile_edit_files_are_kept_as_they_are(project):
    edit_id = submit_update(project, "report", PROPOSAL, conversation=None)["edit_id"]
    path = layout.edit_path(project.workspace_root, "p", edit_id)
    good = json.loads(path.read_text())
    cases = {
        "{not json": "not valid JSON",
        "[]": "expected a JSON object",
        json.dumps({**good, "base_text": "changed"}): "base_sha256",
        json.dumps({**good, "hunks": [{**good["hunks"][0], "old_start": 999}]}): "past the end",
        json.dumps({**good, "hunks": [good["hunks"][1], good["hunks"][0]]}): "index",
        json.dumps({**good, "hunks": [good["hunks"][0], {**good["hunks"][0], "index": 1}]}): (
            "overlap"
        ),
        json.dumps({**good, "hunks": [{**good["hunks"][0], "status": "maybe"}]}): "status",
        json.dumps({**good, "id": "e11111111"}): "file name",
    }
    for text, problem in cases.items():
        path.write_text(text)
        with pytest.raises(CorruptFileError) as err:
            decide(project, edit_id, "accept")
        assert str(path) in err.value.message
        assert any(p in err.value.message for p in problem.split("|")), err.value.message
        assert path.read_text() == text and report(project) == BASE  # nothing rewritten
        edits, problems = list_edits(project)
        assert edits == [] and [p.path for p in problems] == [path]


def test_a_newer_whole_text_supersedes_the_pending_one(project):
    first = submit_update(project, "report", PROPOSAL, conversation=None)["edit_id"]
    second = submit_update(project, "report", BASE + "more\n", conversation=None)["edit_id"]
    edits, _ = list_edits(project)
    assert [e.id for e in edits] == [second]
    superseded = [h for h in history(project) if h["action"] == "supersede_edit"]
    assert superseded[0]["edit"] == first and superseded[0]["newer"] == second
    assert superseded[0]["by"] == "agent"


def test_the_same_text_makes_no_edit(project):
    result = submit_update(project, "report", BASE, conversation=None)
    assert result["pending_review"] is False and list_edits(project) == ([], [])


def test_the_apply_setting_writes_at_once_and_records_it(project):
    ws_settings = layout.settings_path(project.workspace_root)
    data = json.loads(ws_settings.read_text())
    atomic_write_text(ws_settings, json.dumps({**data, "agent_edits": "apply"}))
    result = submit_update(project, "report", PROPOSAL, conversation=None)
    assert "pending_review" not in result and report(project) == PROPOSAL
    entry = [h for h in history(project) if h["action"] == "accept_edit"][-1]
    assert entry["by"] == "setting" and entry["hunks"] == [0, 1]
    assert list_edits(project) == ([], [])


def test_a_resolution_waits_and_is_decided_whole(sample_project):
    project = sample_project
    plan_before, sidecar_before = disk_text(project), read_sidecar(project)
    result = submit_resolution(
        project,
        "plan",
        [
            {"id": "3f9a1c", "mode": "A", "replacement": "Q2 revenue of churned customers"},
            {"id": "c51d8e", "mode": "B", "answer": "kept"},
        ],
        conversation=None,
    )
    assert result["pending_review"] is True and result["open_annotation_count"] == 1
    assert disk_text(project) == plan_before and read_sidecar(project) == sidecar_before
    edit_id = result["edit_id"]
    assert len(load_edit(project, edit_id).hunks) == 2
    for action in ("accept", "reject"):
        with pytest.raises(EditError) as err:
            decide(project, edit_id, action, [0])
        assert err.value.code == "EDIT_WHOLE_ONLY"
    decide(project, edit_id, "accept")
    sidecar = read_sidecar(project)
    status = {a["id"]: a["status"] for a in sidecar["annotations"]}
    assert status["3f9a1c"] == status["c51d8e"] == "resolved" and status["7be204"] == "open"
    assert "3f9a1c" not in disk_text(project) and "c51d8e" not in disk_text(project)
    assert "Q2 revenue of churned customers" in disk_text(project)


def test_a_rejected_resolution_leaves_text_and_sidecar(sample_project):
    project = sample_project
    plan_before, sidecar_before = disk_text(project), read_sidecar(project)
    edit_id = submit_resolution(
        project, "plan", [{"id": "7be204", "mode": "B", "answer": "kept"}], conversation=None
    )["edit_id"]
    decide(project, edit_id, "reject")
    assert disk_text(project) == plan_before and read_sidecar(project) == sidecar_before


def test_accepting_part_of_an_update_keeps_marks_and_sidecar_consistent(sample_project):
    project = sample_project
    text = disk_text(project)
    # the agent rewords the line around a mark (keeping the mark) and adds a closing line
    start = text.index('<mark data-annotation-id="3f9a1c">')
    line_start = text.rindex("\n", 0, start) + 1
    proposal = text[:line_start] + "Reworded: " + text[line_start:] + "\nA new closing line.\n"
    edit_id = submit_update(project, "plan", proposal, conversation=None)["edit_id"]
    edit = load_edit(project, edit_id)
    assert len(edit.hunks) == 2
    decide(project, edit_id, "accept", [0])
    decide(project, edit_id, "reject", [1])
    after = disk_text(project)
    assert after == text[:line_start] + "Reworded: " + text[line_start:]
    sidecar = read_sidecar(project)
    ann = next(a for a in sidecar["annotations"] if a["id"] == "3f9a1c")
    assert ann["status"] == "open"
    begin, end = ann["anchor"]["span"]
    assert after[begin:end] == ann["quote"]  # the anchor follows the accepted text


_LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "d"]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(base=_LINES, proposal=_LINES, data=st.data())
def test_hunks_accepted_in_any_split_give_the_same_text(base, proposal, data):
    base_text, proposal_text = "".join(base), "".join(proposal)
    hunks = compute_hunks(base_text, proposal_text)
    assert merge(base_text, [], hunks, base_text).text == proposal_text
    chosen = data.draw(st.sets(st.sampled_from(range(len(hunks))))) if hunks else set()
    first = [h for h in hunks if h.index in chosen]
    rest = [h for h in hunks if h.index not in chosen]
    once = merge(base_text, [], first, base_text)
    assert once.applied == sorted(chosen) and not once.conflicts
    # the second decision, on the file the first one wrote, lands every other hunk too
    twice = merge(base_text, first, rest, once.text)
    assert twice.text == proposal_text and not twice.conflicts


@settings(max_examples=200, deadline=None)
@given(base=_LINES, proposal=_LINES, data=st.data())
def test_what_the_analyst_wrote_meanwhile_is_never_lost(base, proposal, data):
    lines = [line if line.endswith("\n") else line + "\n" for line in base]
    base_text, proposal_text = "".join(lines), "".join(proposal)
    hunks = compute_hunks(base_text, proposal_text)
    at = data.draw(st.integers(0, len(lines)))
    mine = "".join(lines[:at] + ["MINE\n"] + lines[at:])
    result = merge(base_text, [], hunks, mine)
    assert sorted(result.applied + result.conflicts) == [h.index for h in hunks]
    assert result.text.count("MINE\n") == 1  # the analyst's line is there, once
    if not result.conflicts:  # every hunk went in: the proposal around the analyst's line
        assert result.text.replace("MINE\n", "", 1) == proposal_text


def test_the_setting_reads_anything_but_apply_as_review(project):
    from lantide.docs.pending_edits import edit_mode, set_edit_mode
    from lantide.workspace.model import Workspace

    ws = Workspace.open(project.workspace_root, lock=False)
    set_edit_mode(ws, "apply")
    assert edit_mode(project.workspace_root) == "apply"
    with pytest.raises(EditError):
        set_edit_mode(ws, "yes")
    ws.update_settings(lambda data: data.__setitem__("agent_edits", ["apply"]))
    assert edit_mode(project.workspace_root) == "review"  # a hand edit gone wrong: review
    layout.settings_path(project.workspace_root).write_text("{broken", encoding="utf-8")
    assert edit_mode(project.workspace_root) == "review"


def test_what_became_of_a_conversations_edits(project):
    from lantide.docs.edit_review import edit_states

    def propose_report(text, conversation="c1"):
        return submit_update(project, "report", text, conversation=conversation)["edit_id"]

    whole = propose_report(PROPOSAL)
    decide(project, whole, "accept")
    part = propose_report(BASE.replace("line one", "one").replace("line five", "five"))
    decide(project, part, "accept", [0])
    assert edit_states(Project.load(project.workspace_root, "p"), "c1") == {
        whole: "accepted",
        part: "pending",
    }
    decide(project, part, "reject", [1])
    other = propose_report(BASE + "x\n", conversation="c2")
    decide(project, other, "reject")
    fresh = Project.load(project.workspace_root, "p")
    assert edit_states(fresh, "c1") == {whole: "accepted", part: "partly accepted"}
    assert edit_states(fresh, "c2") == {other: "rejected"}
