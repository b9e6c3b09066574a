"""A corpus of broken workspace files (not data files: those are in
test_broken_data_files.py): each gives a clear error or warning naming the file, never a
traceback; the file stays byte for byte as it was; and what does not need the broken file
keeps working (one bad file is a problem for itself only).

Every case runs the same commands through ``lantide`` in a subprocess, as a user would.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.security, pytest.mark.slow]

PROJECT = "q3-churn"
PLAN_SIDECAR = f"projects/{PROJECT}/plan.annotations.json"

# the commands, and which of them may fail with a clear error for a given broken file
COMMANDS = {
    "tables": ["tables", "{ws}"],
    "sql": ["sql", "{ws}", "SELECT count(*) AS n FROM customers"],
    "projects": ["project", "list", "{ws}"],
    "tabs": ["tab", "list", "{ws}", PROJECT],
    "source_run": ["tab", "source-run", "{ws}", PROJECT, "q3_churn_by_region"],
    "annotations": ["annotations", "{ws}", PROJECT, "plan"],
    "knowledge": ["knowledge", "{ws}"],
    "prompt": ["prompt", "{ws}"],
    "ledger": ["ledger", "{ws}"],
}

LEDGER = ".lantide/ledger/c1.jsonl"
CONVERSATION = ".lantide/conversations/c1.jsonl"
SESSION = ".lantide/session.json"

# commands that work in the project (the agent's prompt and the project's knowledge too)
IN_PROJECT = {"tabs", "source_run", "annotations", "knowledge", "prompt"}

# (file, content, commands allowed to fail with exit code 1 and a message naming the file)
CASES = [
    (f"projects/{PROJECT}/project.json", b"{not json", IN_PROJECT),
    (f"projects/{PROJECT}/project.json", b"", IN_PROJECT),
    (f"projects/{PROJECT}/project.json", b"\xff\xfe\x00{", IN_PROJECT),
    (f"projects/{PROJECT}/project.json", b'{"name": 3, "status": "weird"}', IN_PROJECT),
    (PLAN_SIDECAR, b"{not json", {"annotations"}),
    (PLAN_SIDECAR, b'{"version": 1, "annotations": "x"}', {"annotations"}),
    (PLAN_SIDECAR, b'{"version": 99, "annotations": []}', {"annotations"}),
    (f"projects/{PROJECT}/plan.md", b"\xff\xfe\x00bad", {"annotations"}),
    (f"projects/{PROJECT}/knowledge.md", b"\xff\xfe\x00bad", {"knowledge"}),
    (f"projects/{PROJECT}/sql/clean_orders.sql", b"\xff\xfe select 1", {"source_run"}),
    (f"projects/{PROJECT}/sql/clean_orders.sql", b"", {"source_run"}),
    (SESSION, b"{not json", set()),
    (SESSION, b'{"focused_project": 7, "open_tabs": "x", "active_tab": [1]}', set()),
    (LEDGER, b'{"step_id": "s1", "tool": "run_query"}\n\xff\xfe\n{"step_id": 3}\n', set()),
    (
        CONVERSATION,
        b'{"type": "message", "turn": "x", "message": {"role": "system"}}\n\xff\n',
        set(),
    ),
    (".lantide/workspace.json", b'{"version": 1, "name": "w", "connections": "x"}', set()),
    (
        ".lantide/workspace.json",
        b'{"version": 1, "name": "w", "connections": [3, {"name": 4}]}',
        set(),
    ),
]


def _digest(path: Path) -> str:
    # session.json is Lantide's own scratch: a broken one is set aside (kept) as
    # session.json.broken by the process that holds the workspace, never rewritten
    if not path.exists() and path.name == "session.json":
        path = path.with_suffix(".json.broken")
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    from lantide.workspace.sample import create_sample

    root = tmp_path_factory.mktemp("broken-ws") / "template"
    create_sample(root)
    return root


@pytest.mark.parametrize(
    "relative, content, may_fail",
    CASES,
    ids=[f"{c[0].rsplit('/', 1)[-1]}-{i}" for i, c in enumerate(CASES)],
)
def test_a_broken_workspace_file_is_a_problem_for_itself_only(
    template, tmp_path, run_cli, relative, content, may_fail
):
    ws = tmp_path / "ws"
    shutil.copytree(template, ws)
    broken = ws / relative
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_bytes(content)
    before = _digest(broken)
    for name, command in COMMANDS.items():
        proc = run_cli(*[part.format(ws=ws) for part in command])
        shown = f"{name}: rc={proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, shown
        if name in may_fail and proc.returncode == 1:
            # a clear error naming the broken file (or the tab it holds)
            assert Path(relative).stem in proc.stderr, shown
        else:
            assert proc.returncode == 0, shown
        assert _digest(broken) == before, f"{name} changed {relative}"


def test_a_broken_focused_project_does_not_stop_queries_on_the_data(template, tmp_path, run_cli):
    ws = tmp_path / "ws"
    shutil.copytree(template, ws)
    (ws / ".lantide").mkdir(exist_ok=True)
    (ws / SESSION).write_text(json.dumps({"focused_project": PROJECT}))
    (ws / f"projects/{PROJECT}/project.json").write_bytes(b"{not json")
    proc = run_cli("sql", ws, "SELECT count(*) AS n FROM customers", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["preview"] == [[2000]]
    assert any(
        "cannot be read" in w and "outside any project" in str(w) for w in result["warnings"]
    )
    # a script (or the app) tells this warning by its code, not its sentence
    assert result["warning_codes"][-1] == "PROJECT_UNREADABLE"
    assert len(result["warning_codes"]) == len(result["warnings"])
