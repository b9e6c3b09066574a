"""An eval question set names its workspace inside its own folder (or the shipped
``sample``), never another workspace (issue 28 item 2, DESIGN.md section 9). A set naming
``../other``, an absolute path, or a folder holding a link out of it is refused with a
clear error before anything is copied: otherwise every case copied the other workspace's
tables and knowledge and sent them to the model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lantide.evaluation.question_set import (
    Case,
    QuestionSet,
    QuestionSetError,
    load_question_set,
)
from lantide.evaluation.runner import prepare_workspace

SECRET = "Churn is defined as the private formula of another client"


@pytest.fixture
def other_workspace(tmp_path) -> Path:
    """Another analyst's workspace, beside the folder of the question set."""
    from lantide.workspace.model import Workspace

    root = tmp_path / "other"
    Workspace.create(root).close()
    (root / "knowledge.md").write_text(f"# Rules\n\n- {SECRET}\n", encoding="utf-8")
    return root


def _set_file(folder: Path, workspace: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    case = {"id": "c", "messages": ["How many customers?"], "expect": {"values": [{"value": 1}]}}
    path = folder / "set.json"
    path.write_text(json.dumps({"name": "s", "workspace": workspace, "cases": [case]}))
    return path


def _in_the_set_folder(tmp_path: Path) -> Path:
    from lantide.workspace.model import Workspace

    Workspace.create(tmp_path / "sets" / "ws").close()
    return tmp_path / "sets" / "ws"


def _refused(path: Path, workspace: str) -> QuestionSetError:
    with pytest.raises(QuestionSetError) as caught:
        load_question_set(path)
    err = caught.value
    assert err.code == "EVAL_WORKSPACE_OUTSIDE"
    assert str(path) in err.message and repr(workspace) in err.message
    assert "sample" in (err.hint or "")
    return err


def test_a_workspace_up_and_out_of_the_set_folder_is_refused(tmp_path, other_workspace):
    path = _set_file(tmp_path / "sets", "../other")
    err = _refused(path, "../other")
    assert "outside the set's folder" in err.message


def test_an_absolute_workspace_path_is_refused(tmp_path, other_workspace):
    path = _set_file(tmp_path / "sets", str(other_workspace))
    err = _refused(path, str(other_workspace))
    assert "absolute path" in err.message


def test_a_folder_inside_that_links_out_is_refused(tmp_path, other_workspace):
    (tmp_path / "sets").mkdir()
    os.symlink(other_workspace, tmp_path / "sets" / "linked", target_is_directory=True)
    _refused(_set_file(tmp_path / "sets", "linked"), "linked")


def test_a_workspace_holding_a_link_out_is_refused(tmp_path, other_workspace):
    ws = _in_the_set_folder(tmp_path)
    os.symlink(other_workspace / "knowledge.md", ws / "borrowed.md")
    err = _refused(_set_file(tmp_path / "sets", "ws"), "ws")
    assert "link out of it" in err.message


def test_the_runner_checks_before_copying_anything(tmp_path, other_workspace):
    """A set built without the loader (or whose folder changed since) is checked again."""
    qs = QuestionSet("s", tmp_path / "sets" / "set.json", "../other", [Case("c", ["q"], {})])
    parent = tmp_path / "cases"
    parent.mkdir()
    with pytest.raises(QuestionSetError, match="outside the set's folder"):
        prepare_workspace(qs, qs.cases[0], parent)
    assert list(parent.iterdir()) == []  # nothing copied, no sample made either


def test_a_workspace_inside_the_set_folder_is_copied_for_a_case(tmp_path):
    ws = _in_the_set_folder(tmp_path)
    (ws / "knowledge.md").write_text("# Rules\n\n- Own rule.\n", encoding="utf-8")
    qs = load_question_set(_set_file(tmp_path / "sets", "ws"))
    assert qs.workspace_source() == ws.resolve()
    root = prepare_workspace(qs, qs.cases[0], tmp_path)
    assert (root / "knowledge.md").read_text(encoding="utf-8") == "# Rules\n\n- Own rule.\n"


def test_lantide_eval_refuses_the_set_and_says_why(tmp_path, other_workspace, run_cli):
    path = _set_file(tmp_path / "sets", "../other")
    proc = run_cli("eval", str(path))
    assert proc.returncode == 1
    assert "outside the set's folder" in proc.stderr and "sample" in proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
