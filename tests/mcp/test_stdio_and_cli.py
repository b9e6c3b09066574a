"""``lantide mcp WORKSPACE --stdio`` driven by the SDK's stdio client (a real subprocess),
and ``lantide mcp pair|list|revoke``."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from tests.conftest import REPO, cli_env
from tests.mcp.conftest import activity_lines, ledger_lines, pair


def over_stdio(workspace, token: str | None, work, extra_args=()):
    from mcp import Client, StdioServerParameters

    env = cli_env({"LANTIDE_MCP_TOKEN": token} if token else {})
    env.pop("LANTIDE_MCP_TOKEN", None) if token is None else None
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lantide", "mcp", str(workspace), "--stdio", *extra_args],
        env=env,
        cwd=str(REPO),
    )

    async def run():
        async with Client(params) as client:
            return await work(client)

    try:
        return asyncio.run(run())
    except BaseExceptionGroup as group:
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]
        raise group from None


@pytest.mark.slow
def test_stdio_lists_tools_per_mode_and_runs_a_formal_query(store, executing_workspace):
    observe = pair(store, executing_workspace, "observe")
    execute = pair(store, executing_workspace, "execute", name="Codex", kind="codex")

    async def names(client):
        return [t.name for t in (await client.list_tools()).tools]

    observed = over_stdio(executing_workspace, observe.token, names)
    assert "run_sql_tab" not in observed and "run_query" in observed

    async def work(client):
        tools = [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool(
            "run_query", {"sql": "SELECT 42 AS answer", "purpose": "the answer"}
        )
        return tools, result

    tools, result = over_stdio(executing_workspace, execute.token, work)
    assert "run_sql_tab" in tools and "set_project_status" not in tools
    assert not result.is_error, result.structured_content
    [step] = ledger_lines(executing_workspace, "mcp-codex")
    assert step["purpose"] == "the answer" and step["client"] == "codex"
    entries = activity_lines(executing_workspace, "codex")
    assert [(e["tool"], e["transport"], e["ok"]) for e in entries] == [("run_query", "stdio", True)]


@pytest.mark.slow  # the MCP server over stdio as a whole process
def test_stdio_observe_refuses_run_sql_tab_with_the_mode(store, executing_workspace):
    from mcp.shared.exceptions import MCPError

    observe = pair(store, executing_workspace, "observe")

    async def work(client):
        return await client.call_tool("run_sql_tab", {"tab": "clean_orders", "purpose": "x"})

    with pytest.raises(MCPError) as refused:
        over_stdio(executing_workspace, observe.token, work)
    assert refused.value.data["required_mode"] == "execute"


@pytest.mark.parametrize("case", ["missing", "revoked"])
def test_stdio_without_a_valid_token_serves_nothing(store, executing_workspace, run_cli, case):
    paired = pair(store, executing_workspace, "execute")
    if case == "revoked":
        store.revoke(paired.client.id)
    env = {"LANTIDE_MCP_TOKEN": paired.token} if case == "revoked" else {}
    request = (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        + "\n"
    )
    done = run_cli("mcp", executing_workspace, "--stdio", env=env, input=request, timeout=60)
    assert done.returncode == 1
    assert "LANTIDE_MCP_TOKEN" in done.stderr
    assert done.stdout == ""  # not one protocol message
    assert not (executing_workspace / ".lantide" / "activity").exists()


def test_pair_list_revoke_from_the_command_line(executing_workspace, capsys, memory_keyring):
    from lantide.cli.main import main
    from lantide.mcp.clients import ClientStore, stored_token

    assert (
        main(
            [
                "mcp",
                "pair",
                str(executing_workspace),
                "--client",
                "cursor",
                "--mode",
                "execute",
                "--expires",
                "7d",
                "--json",
            ]
        )
        == 0
    )
    paired = json.loads(capsys.readouterr().out)
    token = paired["token"]
    assert paired["client"]["mode"] == "execute" and paired["in_keyring"] is True
    assert paired["client"]["scope"] == str(executing_workspace.resolve())
    assert "token_hash" not in paired["client"]
    assert json.loads(paired["config"]["text"])["mcpServers"]["lantide"]["headers"] == {
        "Authorization": f"Bearer {token}"
    }
    store = ClientStore()
    assert stored_token(paired["client"]["id"]) == token  # kept in the keyring
    assert token not in store.path.read_text()  # only its hash in the file
    assert store.verify(token)[0].id == paired["client"]["id"]

    assert main(["mcp", "list", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)["clients"]
    assert (listed["id"], listed["status"]) == (paired["client"]["id"], "active")

    assert main(["mcp", "revoke", paired["client"]["id"]]) == 0
    capsys.readouterr()
    assert store.verify(token) == (None, "token revoked")
    assert stored_token(paired["client"]["id"]) is None
    assert main(["mcp", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["clients"][0]["status"] == "revoked"


def test_pairing_refuses_a_folder_that_is_no_workspace(tmp_path, capsys):
    from lantide.cli.main import main

    assert main(["mcp", "pair", str(tmp_path), "--mode", "observe"]) == 1
    assert "is not a Lantide workspace" in capsys.readouterr().err


def test_revoking_an_unknown_client_names_the_known_ones(store, executing_workspace, capsys):
    from lantide.cli.main import main

    pair(store, executing_workspace, "observe", name="Known one")
    assert main(["mcp", "revoke", "nobody"]) == 1
    assert "known-one" in capsys.readouterr().err


def test_stdio_beside_the_open_app_says_to_connect_over_http(store, executing_workspace, run_cli):
    from lantide.workspace.model import Workspace

    paired = pair(store, executing_workspace, "observe")
    with Workspace.open(executing_workspace):  # the desktop app holds it
        done = run_cli(
            "mcp",
            executing_workspace,
            "--stdio",
            env={"LANTIDE_MCP_TOKEN": paired.token},
            input="",
            timeout=60,
        )
    assert done.returncode == 1
    assert "WORKSPACE_LOCKED" in done.stderr and "over HTTP" in done.stderr
    assert done.stdout == ""


def test_stdio_refuses_a_workspace_outside_the_clients_scope(
    store, executing_workspace, empty_workspace, run_cli
):
    paired = pair(store, empty_workspace, "observe")
    done = run_cli(
        "mcp",
        executing_workspace,
        "--stdio",
        env={"LANTIDE_MCP_TOKEN": paired.token},
        input="",
        timeout=60,
    )
    assert done.returncode == 1 and "scope" in done.stderr
    assert not (executing_workspace / ".lantide" / "activity").exists()
