"""A save killed (SIGKILL) at every point of its sequence leaves a pair that opens consistently.

The child is a real process running the real save path (the command line, or a small
script for a text edit); ``LANTIDE_FAILPOINT`` makes it kill itself at one named point.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lantide.docs import open_document
from lantide.docs.anchoring import check_consistent
from lantide.docs.failpoints import ENV_VAR
from lantide.docs.journal import journal_path
from lantide.docs.marks import scan_marks
from lantide.workspace.atomic import atomic_write_text
from lantide.workspace.model import Project

REPO = Path(__file__).resolve().parents[2]
POINTS = [
    "save-started",
    "journal-written",
    "document-written",
    "sidecar-written",
    "journal-removed",
]
EDIT_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from lantide.docs import open_document
    from lantide.workspace.model import Project

    doc = open_document(Project.load(Path(sys.argv[1]), "q3-churn"), "plan")
    text = doc.text.replace('<mark data-annotation-id="c51d8e">test accounts</mark>',
                            "test accounts")
    doc.save_text(text.replace("## Checks", "## Checks\\n- Added by the child."), by="user")
""")

OPERATIONS = {
    "resolve-A": ["--resolve", "3f9a1c", "--replacement", "the Q2 revenue of churned customers"],
    "resolve-B": ["--resolve", "7be204", "--answer", "every customer active in Q2"],
    "create": ["--create", "{start}:{end}", "--comment", "which source?"],
    "reply": ["--reply", "c51d8e", "--text", "checked the flag"],
    "delete": ["--delete", "7be204"],
    "restore": ["--restore", "c51d8e"],
    "edit": None,  # a text save that drops a mark (re-anchored by its quote)
}
# run to completion before the operation (not killed): what it starts from
SETUP = {"restore": ["--delete", "c51d8e"]}


def _env(failpoint: str | None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), str(REPO / "tests" / "_netblock"), env.get("PYTHONPATH", "")]
    )
    env.pop(ENV_VAR, None)
    if failpoint:
        env[ENV_VAR] = failpoint
    return env


def _run(root: Path, operation: str, failpoint: str | None) -> subprocess.CompletedProcess:
    if OPERATIONS[operation] is None:
        cmd = [sys.executable, "-c", EDIT_SCRIPT, str(root)]
    else:
        plan = (root / "projects/q3-churn/plan.md").read_text()
        start = plan.index("Revenue is net revenue")
        args = [
            a.format(start=start, end=start + len("Revenue is net revenue"))
            for a in OPERATIONS[operation]
        ]
        cmd = _cli(root, args)
    return subprocess.run(
        cmd, env=_env(failpoint), capture_output=True, text=True, timeout=60, cwd=str(REPO)
    )


def _cli(root: Path, args: list[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "lantide",
        "annotations",
        str(root),
        "q3-churn",
        "plan",
        "--by",
        "child",
        *args,
    ]


def _set_up(root: Path, operation: str) -> None:
    if operation in SETUP:
        done = subprocess.run(
            _cli(root, SETUP[operation]),
            env=_env(None),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=str(REPO),
        )
        assert done.returncode == 0, done.stderr


def _state(root: Path) -> tuple[str, list]:
    """The pair on disk, without timestamps and generated ids (they differ between runs)."""
    project = root / "projects/q3-churn"
    text = (project / "plan.md").read_text()
    data = json.loads((project / "plan.annotations.json").read_text())
    ids = {e["id"]: e["id"] for e in data["annotations"]}
    for i, e in enumerate(data["annotations"]):
        if e["id"] not in ("3f9a1c", "7be204", "c51d8e"):
            ids[e["id"]] = f"new{i}"
            text = text.replace(e["id"], f"new{i}")
        e["id"] = ids[e["id"]]
    deleted = data.get("deleted", [])
    for e in data["annotations"] + deleted:
        for h in e["history"]:
            h.pop("at")
    return text, data["annotations"], deleted


@pytest.fixture(scope="module")
def expected(tmp_path_factory, _sample_template):
    """Each operation run to completion once, in its own copy: the state after a save."""
    import shutil

    out = {}
    for operation in OPERATIONS:
        root = tmp_path_factory.mktemp(f"expected-{operation}") / "ws"
        shutil.copytree(_sample_template, root)
        _set_up(root, operation)
        before = _state(root)
        done = _run(root, operation, None)
        assert done.returncode == 0, done.stderr
        out[operation] = (before, _state(root))
        assert out[operation][0] != out[operation][1]
    return out


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("point", POINTS)
def test_killed_save_opens_as_the_old_or_the_new_pair(sample_workspace, expected, operation, point):
    _set_up(sample_workspace, operation)
    done = _run(sample_workspace, operation, point)
    assert done.returncode == -signal.SIGKILL, done.stderr
    project = Project.load(sample_workspace, "q3-churn")
    journal_left = journal_path(project.plan_path).exists()
    assert journal_left == (point in ("journal-written", "document-written", "sidecar-written"))

    doc = open_document(project, "plan")
    assert doc.read_only_reason is None
    assert not journal_path(project.plan_path).exists()  # repaired, then removed
    if journal_left:
        assert doc.recovery is not None and doc.recovery.kept == []
    before, after = expected[operation]
    wanted = before if point == "save-started" else after
    assert _state(sample_workspace) == wanted
    text = project.plan_path.read_text()
    entries = json.loads((project.dir / "plan.annotations.json").read_text())["annotations"]
    assert check_consistent(text, entries, scan_marks(text)) == []
    kept = {a.id for a in doc.annotations + doc.deleted_annotations}
    assert {"3f9a1c", "7be204", "c51d8e"} <= kept  # none lost, deleted or not
    assert doc.repairs == []
    leftovers = [p.name for p in project.dir.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_an_edit_made_after_the_crash_is_never_overwritten(sample_workspace):
    done = _run(sample_workspace, "resolve-B", "journal-written")
    assert done.returncode == -signal.SIGKILL
    project = Project.load(sample_workspace, "q3-churn")
    edited = project.plan_path.read_text() + "\nTyped in another editor after the crash.\n"
    atomic_write_text(project.plan_path, edited)
    doc = open_document(project, "plan")
    assert doc.recovery.kept == ["plan.md"] and doc.recovery.rolled_forward == []
    assert doc.recovery.set_aside.exists() and doc.recovery.set_aside.name.startswith(".plan.md")
    assert project.plan_path.read_text() == edited
    assert doc.annotation("7be204").is_open  # the text still marks it: the mark is the truth
    assert doc.repairs == [] and doc.read_only_reason is None


def test_a_broken_journal_is_set_aside_and_the_pair_opens(sample_workspace):
    project = Project.load(sample_workspace, "q3-churn")
    journal = journal_path(project.plan_path)
    journal.write_text("{not json")
    doc = open_document(project, "plan")
    assert doc.recovery.problem and not journal.exists() and doc.recovery.set_aside.exists()
    assert len(doc.annotations) == 3 and doc.repairs == []
