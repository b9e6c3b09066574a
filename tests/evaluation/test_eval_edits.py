"""An eval's case runs with the agent's edits written at once (nobody reviews them, and the
score reads the Report the model wrote), unless the set's own workspace says otherwise."""

from __future__ import annotations

import shutil

from lantide.docs.pending_edits import edit_mode
from lantide.evaluation.question_set import Case, QuestionSet
from lantide.evaluation.runner import prepare_workspace
from tests.conftest import set_agent_edits


def test_a_case_workspace_applies_the_agents_edits(tmp_path, sample_workspace):
    case = Case(id="c1", messages=["hi"], expect={}, state={"project": "q3-churn"})
    sample = QuestionSet("s", tmp_path / "set.json", "sample", [case])
    root = prepare_workspace(sample, case, tmp_path / "runs", template=sample_workspace)
    assert edit_mode(root) == "apply" and edit_mode(sample_workspace) == "review"

    own = tmp_path / "own-set"
    shutil.copytree(sample_workspace, own / "ws")
    set_agent_edits(own / "ws", "review")  # the set's workspace chose review: kept
    mine = QuestionSet("m", own / "set.json", "ws", [case])
    root = prepare_workspace(mine, case, tmp_path / "runs2")
    assert edit_mode(root) == "review"
