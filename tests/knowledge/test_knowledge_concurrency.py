"""Knowledge edits from several processes at once (issue 11, item 3).

Every process is real (``subprocess``). An entry a process reported as added must be in
the file afterwards; a process that lost a race must say so with an error, never "Added".
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from lantide.knowledge import KnowledgeBase
from lantide.knowledge.parser import parse_knowledge
from tests.conftest import REPO, cli_env

KNOWLEDGE = "projects/q3-churn/knowledge.md"

# Each worker adds its entries as fast as it can and prints one JSON line per attempt.
_WORKER = textwrap.dedent("""
    import json, sys
    from lantide.errors import LantideError
    from lantide.knowledge import KnowledgeBase
    user, project, worker, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sys.stdin.readline()  # start together
    for i in range(count):
        text = f"Entry {worker}-{i} is kept."
        try:
            KnowledgeBase(user, project, project_name="p").add(text)
            print(json.dumps({"text": text, "ok": True}), flush=True)
        except LantideError as exc:
            print(json.dumps({"text": text, "ok": False, "error": exc.message}), flush=True)
""")


def _entries(path) -> list[str]:
    return [
        e.text for e in parse_knowledge(path.read_text(encoding="utf-8"), scope="project").entries
    ]


@pytest.mark.slow
def test_adds_from_many_processes_are_all_kept_or_refused(tmp_path):
    user = tmp_path / "user" / "knowledge.md"
    project = tmp_path / "p" / "knowledge.md"
    project.parent.mkdir()
    project.write_text("# Project knowledge\n\n## Rules\n- First rule.\n\n## Info\n")
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(user), str(project), str(w), "12"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
            cwd=str(REPO),
        )
        for w in range(5)
    ]
    for w in workers:
        w.stdin.write("go\n")
        w.stdin.flush()
    results = []
    for w in workers:
        out, err = w.communicate(timeout=240)
        assert w.returncode == 0, err
        results += [json.loads(line) for line in out.splitlines()]

    assert len(results) == 60
    on_disk = _entries(project)
    added = [r["text"] for r in results if r["ok"]]
    assert added, results
    missing = [t for t in added if t not in on_disk]
    assert missing == [], f"reported as added but lost: {missing}"
    assert on_disk[0] == "First rule."
    # nothing appears that nobody reported as added
    assert sorted(on_disk[1:]) == sorted(added)
    for r in results:
        if not r["ok"]:
            assert "changed on disk" in r["error"], r


@pytest.mark.slow  # the command line as whole processes (not through run_cli)
def test_cli_adds_at_once_never_claim_a_lost_entry(sample_workspace):
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lantide",
                "knowledge",
                str(sample_workspace),
                "--add",
                f"Concurrent rule number {i}.",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
            cwd=str(REPO),
        )
        for i in range(10)
    ]
    outcomes = []
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=240)
        outcomes.append((i, p.returncode, out, err))
    on_disk = _entries(sample_workspace / KNOWLEDGE)
    for i, rc, out, err in outcomes:
        text = f"Concurrent rule number {i}."
        if rc == 0:
            assert f": {text}" in out.splitlines()[0] and out.startswith("Added ")
            assert text in on_disk, f"process {i} said Added, but its entry is missing"
        else:
            assert rc == 1 and "Added" not in out and err.strip(), (rc, out, err)
            assert "Traceback" not in err
            assert text not in on_disk
    assert any(rc == 0 for _i, rc, _o, _e in outcomes)


def test_an_edit_from_the_command_line_does_not_undo_an_add_from_the_app(sample_workspace, run_cli):
    """The app keeps the workspace lock; the command line edits beside it. A document the
    command line read before the app's add must not be written back over it."""
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace)  # the app holds the workspace
    try:
        kb = KnowledgeBase.for_project(ws.project("q3-churn"))
        stale = kb.file("project").load()
        kb.add("Added by the app while the command line worked.")
        # a writer holding the stale document is refused
        import pytest

        from lantide.knowledge.model import KnowledgeConflictError

        with pytest.raises(KnowledgeConflictError):
            kb.file("project").write(stale, stale.text + "- overwrite\n")
        out = run_cli("knowledge", sample_workspace, "--approve", "3")
        assert out.returncode == 0, out.stderr
        on_disk = _entries(sample_workspace / KNOWLEDGE)
        assert "Added by the app while the command line worked." in on_disk
        assert "overwrite" not in on_disk
    finally:
        ws.close()
