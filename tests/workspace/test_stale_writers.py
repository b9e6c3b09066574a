"""A writer holding an old copy of project.json or workspace.json never undoes a change
made since it read the file (issue 11, item 3's neighbours)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from lantide.workspace.model import Project, Workspace
from tests.conftest import REPO, cli_env


def test_a_stale_project_object_does_not_undo_a_status_change(empty_workspace):
    ws = Workspace.open(empty_workspace, lock=False)
    ws.create_project("p")
    window = ws.project("p")  # e.g. the project panel
    agent = ws.project("p")  # e.g. the agent's tool, loaded separately
    agent.approve_plan()
    window.archive_file("notes.md")
    on_disk = json.loads((empty_workspace / "projects" / "p" / "project.json").read_text())
    assert on_disk["status"] == "executing"
    assert on_disk["archived"] == ["notes.md"]
    assert window.status == "executing"  # the writer sees the file as it is now


def test_a_hand_edit_of_project_json_survives_an_archive(empty_workspace):
    ws = Workspace.open(empty_workspace, lock=False)
    project = ws.create_project("p")
    path = project.json_path
    data = json.loads(path.read_text())
    data["owner"] = "lena"  # added in a text editor while the app is open
    path.write_text(json.dumps(data))
    ws.archive_project("p")
    after = json.loads(path.read_text())
    assert after["owner"] == "lena" and after["archived_at"]


def test_connection_edits_keep_a_change_made_since_the_workspace_was_opened(empty_workspace):
    from lantide.query.connections import add_connection, remove_connection

    app = Workspace.open(empty_workspace, lock=False)
    other = Workspace.open(empty_workspace, lock=False)
    add_connection(other, "dw", "Driver={X};Server=dw", dialect="tsql")
    add_connection(app, "shop", "Driver={X};Server=shop", dialect="postgres")
    names = [
        c["name"]
        for c in json.loads((empty_workspace / ".lantide" / "workspace.json").read_text())[
            "connections"
        ]
    ]
    assert sorted(names) == ["dw", "shop"]
    remove_connection(app, "dw")
    names = [c["name"] for c in Workspace.open(empty_workspace, lock=False).connections]
    assert names == ["shop"]


_WORKER = textwrap.dedent("""
    import sys
    from lantide.workspace.model import Project
    root, worker = sys.argv[1], sys.argv[2]
    project = Project.load(__import__("pathlib").Path(root), "p")  # loaded once: goes stale
    sys.stdin.readline()
    for i in range(15):
        project.archive_file(f"w{worker}-{i}.md")
""")


def test_archive_marks_from_many_processes_are_all_kept(empty_workspace):
    Workspace.open(empty_workspace, lock=False).create_project("p")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(empty_workspace), str(w)],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
            cwd=str(REPO),
        )
        for w in range(4)
    ]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    archived = Project.load(empty_workspace, "p").archived
    assert sorted(archived) == sorted(f"w{w}-{i}.md" for w in range(4) for i in range(15))


def test_removing_a_connection_edited_on_disk_meanwhile_removes_it(empty_workspace):
    from lantide.query.connections import add_connection, remove_connection

    app = Workspace.open(empty_workspace, lock=False)
    add_connection(app, "dw", "Driver={X};Server=dw", dialect="tsql")
    other = Workspace.open(empty_workspace, lock=False)
    add_connection(other, "dw", "Driver={X};Server=dw2", dialect="tsql")  # edited elsewhere
    remove_connection(app, "dw")  # app's copy still says Server=dw
    assert Workspace.open(empty_workspace, lock=False).connections == []
