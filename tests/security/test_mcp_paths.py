"""An outside agent never reads the user's home folder or the workspace's absolute path in
what the MCP server answers: paths inside the workspace are relative to it, any other path
under the home folder is ``~/...``. Every tool an Observe, Execute and all-workspaces
client can call is called (results, tool errors and protocol errors); the analyst's own
activity log still holds what happened."""

from __future__ import annotations

import json

import pytest

import tests.mcp.conftest as mcp_fixtures
from tests.mcp.conftest import activity_lines, over_http, pair

pytestmark = pytest.mark.security

store = mcp_fixtures.store
executing_workspace = mcp_fixtures.executing_workspace
engine = mcp_fixtures.engine
http_server = mcp_fixtures.http_server


@pytest.fixture
def home(tmp_path, monkeypatch):
    """The test's folder is the user's home: the workspace lives under it, as it does for
    an analyst (~/analysis)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def _everything_said(client) -> list[str]:
    """Each answer of the client's calls, as the JSON text the agent reads."""
    from mcp import MCPError

    async def work(c):
        said: list[str] = []
        names = [t.name for t in (await c.list_tools()).tools]
        calls = [(name, {}) for name in names]
        calls += [
            ("read_schema", {"table": "customers"}),
            ("profile_columns", {"table": "customers"}),
            ("validate_query", {"sql": "SELECT * FROM customers"}),
            ("run_query", {"sql": "SELECT count(*) AS n FROM customers", "purpose": "count"}),
            ("run_query", {"sql": "SELECT * FROM read_csv('data/no_such_file.csv')"}),
            ("run_query", {"sql": "SELECT * FROM no_such_table"}),
            ("read_plan", {"project": "q3-churn"}),
            ("read_report", {"project": "q3-churn"}),
            ("list_annotations", {"project": "q3-churn", "document": "plan"}),
            (
                "create_sql_tab",
                {"name": "n_customers", "sql": "SELECT count(*) AS n FROM customers"},
            ),
            ("run_sql_tab", {"tab": "n_customers", "purpose": "count"}),
            ("source_run_sql_tab", {"tab": "n_customers", "purpose": "count"}),
            ("read_step", {"step_id": "s1"}),
            ("select_workspace", {"workspace": "no such workspace"}),
            ("select_workspace", {"workspace": "~/other"}),
            ("list_workspaces", {}),
        ]
        for name, arguments in calls:
            try:
                result = await c.call_tool(name, arguments)
            except MCPError as exc:
                said.append(
                    json.dumps({"code": exc.code, "message": exc.message, "data": exc.data})
                )
                continue
            said.append(json.dumps(result.structured_content))
            said += [block.text for block in result.content if hasattr(block, "text")]
        for resource in (await c.list_resources()).resources:
            for content in (await c.read_resource(resource.uri)).contents:
                said.append(getattr(content, "text", ""))
        return said

    return work


@pytest.mark.parametrize("mode", ["observe", "execute", "all"])
def test_no_answer_names_the_home_folder_or_the_workspace_root(
    home, http_server, store, executing_workspace, mode
):
    from lantide.workspace.model import Workspace

    Workspace.create(home / "other", name="Other place")
    if mode == "all":
        paired = store.pair("roamer", scope="all", mode="admin")
    else:
        paired = pair(store, executing_workspace, mode)
    said = over_http(http_server.url, paired.token, _everything_said(paired))
    assert len(said) > 20
    text = "\n".join(said)
    for secret in (str(home), str(executing_workspace), str(executing_workspace.resolve())):
        # JSON escapes backslashes on Windows; compare both spellings
        assert secret not in text and json.dumps(secret)[1:-1] not in text
    # and what an agent needs is still there, in its relative form
    context = json.loads(next(s for s in said if '"allowed_tools"' in s))
    assert context["workspace"]["root"] == "."
    assert context["client"]["scope"] == ("all" if mode == "all" else ".")
    if mode == "execute":
        assert "projects/q3-churn/sql/n_customers.sql" in text
    if mode == "all":
        listed = json.loads([s for s in said if '"workspaces"' in s][-1])  # after selecting
        assert {"~/sample", "~/other"} <= {w["root"] for w in listed["workspaces"]}


def test_a_client_of_all_workspaces_selects_one_by_the_path_it_was_shown(
    home, http_server, store, executing_workspace
):
    from lantide.workspace.model import Workspace

    Workspace.create(home / "other", name="Other place")
    roamer = store.pair("roamer", scope="all", mode="observe")

    async def work(c):
        away = (await c.call_tool("select_workspace", {"workspace": "~/other"})).structured_content
        listed = (await c.call_tool("list_workspaces", {})).structured_content
        [sample] = [w for w in listed["workspaces"] if w["root"] == "~/sample"]
        back = await c.call_tool("select_workspace", {"workspace": sample["root"]})
        tables = (await c.call_tool("show_tables", {})).structured_content
        return away, back.structured_content, tables

    away, back, tables = over_http(http_server.url, roamer.token, work)
    assert away["selected"] == {"name": "Other place", "root": "~/other"}
    assert back["selected"]["root"] == "~/sample"
    assert "customers" in json.dumps(tables)


def test_the_activity_log_keeps_the_paths_as_they_were(
    home, http_server, store, executing_workspace
):
    from tests.mcp.conftest import call

    paired = pair(store, executing_workspace, "observe")
    missing = executing_workspace / "data" / "gone.csv"
    result = call(
        http_server.url, paired.token, "run_query", {"sql": f"SELECT * FROM read_csv('{missing}')"}
    )
    assert str(home) not in json.dumps(result.structured_content)
    [line] = activity_lines(executing_workspace, paired.client.id)
    assert str(missing) in json.dumps(line)


def test_only_whole_folder_names_are_rewritten(tmp_path):
    from lantide.mcp.redact import PathRewriter

    home = tmp_path / "al"
    ws = home / "ws"
    rewrite = PathRewriter([ws], home=home).text
    assert rewrite(f"no file {ws}/data/x.csv here") == "no file data/x.csv here"
    assert rewrite(f"scope is {ws}, not {home}/ws2") == "scope is ., not ~/ws2"
    assert PathRewriter([], home=home).text(f"{ws}, {ws}/a") == "~/ws, ~/ws/a"
    assert rewrite(f"{tmp_path}/alice/ws/a.csv") == f"{tmp_path}/alice/ws/a.csv"  # not our home
    assert rewrite(f"'{home}'") == "'~'"


def test_stdio_refusing_a_workspace_outside_the_scope_names_it_from_home(
    home, store, executing_workspace, empty_workspace, run_cli
):
    paired = pair(store, empty_workspace, "observe")
    env = {"LANTIDE_MCP_TOKEN": paired.token, "HOME": str(home)}
    done = run_cli("mcp", executing_workspace, "--stdio", env=env, input="", timeout=60)
    assert done.returncode == 1 and "scope" in done.stderr
    assert str(home) not in done.stderr and "~/sample" in done.stderr
