import json

from lantide.workspace.model import Workspace


def test_help_lists_the_commands(run_cli):
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("gui", "init", "project"):
        assert command in result.stdout


def test_bad_usage_exits_2(run_cli):
    result = run_cli("init")
    assert result.returncode == 2
    assert "usage:" in result.stderr


def test_init_sample_and_project_commands(tmp_path, run_cli):
    root = tmp_path / "w"
    result = run_cli("init", root, "--sample")
    assert result.returncode == 0, result.stderr
    assert Workspace.is_workspace(root)
    result = run_cli("project", root, "list", "--json")
    data = json.loads(result.stdout)
    assert [p["dir"] for p in data["projects"]] == ["q3-churn"] and data["focused"] == "q3-churn"
    assert run_cli("project", root, "create", "pricing").returncode == 0
    # executing needs the analyst's approval of the Plan (issue 16)
    refused = run_cli("project", root, "status", "pricing", "executing")
    assert refused.returncode == 1 and "approve-plan" in refused.stderr
    assert run_cli("project", root, "approve-plan", "pricing").returncode == 0
    # ACTION WORKSPACE works too, as in `lantide tab run WORKSPACE ...`
    assert run_cli("project", "focus", root, "pricing").returncode == 0
    bogus = run_cli("project", root, "bogus")
    assert bogus.returncode == 2 and "unknown project action 'bogus'" in bogus.stderr
    data = json.loads(run_cli("project", root, "list", "--json").stdout)
    assert {p["dir"]: p["status"] for p in data["projects"]} == {
        "pricing": "executing",
        "q3-churn": "planning",
    }
    assert data["focused"] == "pricing"


def test_user_errors_exit_1_with_message_and_no_traceback(tmp_path, run_cli):
    (tmp_path / "plain").mkdir()
    result = run_cli("project", tmp_path / "plain", "list")
    assert result.returncode == 1
    assert f"{tmp_path / 'plain'} is not a Lantide workspace" in result.stderr
    assert "lantide init" in result.stderr and "Traceback" not in result.stderr
    result = run_cli("project", tmp_path / "plain", "list", "--debug")
    assert "Traceback" in result.stderr


def test_init_on_an_existing_workspace_is_refused(tmp_path, run_cli):
    root = tmp_path / "w"
    assert run_cli("init", root).returncode == 0
    result = run_cli("init", root)
    assert result.returncode == 1 and "already a Lantide workspace" in result.stderr


def test_json_errors_are_one_object_on_stdout_with_the_exit_code(run_cli, sample_workspace):
    """DESIGN section 3: with --json an error is {"error": {code, message, hint}} on stdout,
    with the same exit code; without it the code follows the message on stderr."""
    import json

    three_ctes = "WITH a AS (SELECT 1), b AS (SELECT 2), c AS (SELECT 3) SELECT * FROM a, b, c"
    proc = run_cli("sql", sample_workspace, three_ctes, "--json")
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "COMPLEXITY_SPLIT_RECOMMENDED"
    assert "3 CTEs" in error["message"] and "split" in error["hint"].lower()

    proc = run_cli("sql", sample_workspace, three_ctes)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "code: COMPLEXITY_SPLIT_RECOMMENDED" in proc.stderr

    proc = run_cli("tables", sample_workspace / "missing", "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["message"]

    proc = run_cli("sql", sample_workspace, "--json", "--no-such-option", "SELECT 1")
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "USAGE"


_OPEN_THE_APP = r"""
import sys
import lantide.cli.app_commands as app_commands

def opened(args):  # stands in for the window: what the command line imported to get here
    loaded = sorted(m for m in sys.modules if m.startswith("lantide.cli.") and
                    m.endswith("_commands"))
    print(" ".join(loaded))
    return 0

app_commands.run_gui = opened
app_commands.run_default_gui = opened
from lantide.cli.main import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_opening_the_app_imports_only_the_commands_it_needs(tmp_path):
    """``lantide gui WS`` parses with the app's own commands: every other command module
    (the query, agent, MCP ... commands) would be imported before the window's first
    paint for nothing."""
    import subprocess
    import sys

    from tests.conftest import REPO, cli_env

    for argv in (["gui", str(tmp_path)], ["--debug", "gui"]):
        done = subprocess.run(
            [sys.executable, "-c", _OPEN_THE_APP, *argv],
            capture_output=True,
            text=True,
            env=cli_env(),
            cwd=str(REPO),
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["lantide.cli.app_commands"], argv
