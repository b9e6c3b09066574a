"""Names Windows cannot hold are refused on every platform, since workspaces move between
machines (issue 11, item 15, and its neighbours: project names)."""

from __future__ import annotations

import json

import pytest

from lantide.errors import LantideError
from lantide.query.tabs import validate_tab_name
from lantide.workspace.model import Workspace, validate_project_name

RESERVED = [
    "con",
    "CON",
    "Nul",
    "aux",
    "prn",
    "com1",
    "COM9",
    "lpt1",
    "lpt9",
    "con.backup",
    "aux .old",
    "com\u00b9",
    "conin$",
]
NOT_PORTABLE = ["report.", "a:b", "what?", "a|b", "x<y", 'say "hi"', "star*"]
FINE = ["console", "aux_orders", "com10", "lpt", "nul_count", "q3 churn", "con_", "Ünïcode"]


@pytest.mark.parametrize("name", RESERVED + NOT_PORTABLE)
def test_tab_names_windows_cannot_hold_are_refused(name):
    with pytest.raises(LantideError) as info:
        validate_tab_name(name)
    assert info.value.code == "BAD_TAB_NAME"
    assert "Windows" in info.value.message or "Windows" in (info.value.hint or "")


@pytest.mark.parametrize("name", RESERVED + NOT_PORTABLE)
def test_project_names_windows_cannot_hold_are_refused(name):
    with pytest.raises(LantideError) as info:
        validate_project_name(name)
    assert info.value.code == "BAD_PROJECT_NAME"
    assert "Windows" in info.value.message


@pytest.mark.parametrize("name", FINE)
def test_ordinary_names_stay_allowed(name):
    assert validate_tab_name(name) == name
    assert validate_project_name(name) == name


def test_cli_refuses_a_reserved_tab_name_and_writes_nothing(sample_workspace, run_cli):
    sql_dir = sample_workspace / "projects" / "q3-churn" / "sql"
    before = sorted(p.name for p in sql_dir.iterdir())
    for name in ("con", "NUL", "com1"):
        out = run_cli("tab", "create", sample_workspace, "q3-churn", name, "SELECT 1 AS x")
        assert out.returncode == 1, out.stdout
        assert "reserved by Windows" in out.stderr and "Traceback" not in out.stderr
    out = run_cli("tab", "rename", sample_workspace, "q3-churn", "clean_orders", "aux")
    assert out.returncode == 1 and "reserved by Windows" in out.stderr
    assert sorted(p.name for p in sql_dir.iterdir()) == before


def test_a_tab_made_elsewhere_with_a_reserved_name_can_still_be_renamed(sample_workspace, run_cli):
    """Refusing the name must not strand a file that already has it (made on Linux by an
    older version): it is listed, and can be renamed to a portable name."""
    sql_dir = sample_workspace / "projects" / "q3-churn" / "sql"
    (sql_dir / "con.sql").write_text("SELECT 1 AS x\n")
    listed = json.loads(run_cli("tab", "list", sample_workspace, "q3-churn", "--json").stdout)
    assert "con" in [t["tab"] for t in listed["tabs"]]
    out = run_cli("tab", "rename", sample_workspace, "q3-churn", "con", "constant_one")
    assert out.returncode == 0, out.stderr
    assert (sql_dir / "constant_one.sql").read_text() == "SELECT 1 AS x\n"
    assert not (sql_dir / "con.sql").exists()


def test_cli_refuses_a_reserved_project_name(sample_workspace, run_cli):
    for name in ("aux", "lpt1", "Q4 plan."):
        out = run_cli("project", sample_workspace, "create", name)
        assert out.returncode == 1, out.stdout
        assert "Windows" in out.stderr
    out = run_cli("project", sample_workspace, "rename", "q3-churn", "prn")
    assert out.returncode == 1 and "Windows" in out.stderr
    assert sorted(p.name for p in (sample_workspace / "projects").iterdir()) == ["q3-churn"]


def test_a_project_folder_with_a_reserved_name_can_still_be_renamed(empty_workspace):
    ws = Workspace.open(empty_workspace, lock=False)
    ws.create_project("fine")
    (ws.projects_dir / "fine").rename(ws.projects_dir / "con")  # made elsewhere
    assert [p.dirname for p in ws.list_projects()] == ["con"]
    assert ws.rename_project("con", "console").dirname == "console"


def test_project_names_that_differ_only_in_case_are_refused(empty_workspace):
    """On Windows and macOS disks "Pricing" and "pricing" are one folder: the second would
    merge into (or be lost beside) the first when the workspace moves there."""
    ws = Workspace.open(empty_workspace, lock=False)
    ws.create_project("pricing")
    ws.create_project("churn")
    with pytest.raises(LantideError) as info:
        ws.create_project("Pricing")
    assert info.value.code == "PROJECT_EXISTS"
    with pytest.raises(LantideError) as info:
        ws.rename_project("churn", "PRICING")
    assert info.value.code == "PROJECT_EXISTS"
    assert ws.rename_project("churn", "Churn").dirname == "Churn"  # its own name, respelled
    assert sorted(ws.project_dirnames()) == ["Churn", "pricing"]


def test_a_tab_that_appears_after_the_check_is_never_overwritten(sample_workspace, monkeypatch):
    """Between the name check and the write another process may create the tab (a second
    window, the agent): create and rename then refuse instead of replacing it."""
    from lantide.query import tabs
    from lantide.workspace.model import Project

    project = Project.load(sample_workspace, "q3-churn")
    theirs = project.sql_dir / "late.sql"
    theirs.write_text("SELECT 'theirs' AS who\n")
    real_names = tabs.tab_names
    monkeypatch.setattr(tabs, "tab_names", lambda p: [n for n in real_names(p) if n != "late"])
    with pytest.raises(LantideError) as info:
        tabs.write_new_tab(project, "late", "SELECT 'mine' AS who")
    assert info.value.code == "TAB_EXISTS"
    with pytest.raises(LantideError) as info:
        tabs.rename_tab_file(project, "clean_orders", "late")
    assert info.value.code == "TAB_EXISTS"
    assert theirs.read_text() == "SELECT 'theirs' AS who\n"
    assert (project.sql_dir / "clean_orders.sql").exists()
