"""A hand-edited or damaged ``mcp_clients.json``: a client entry with a field of the wrong
type is reported (the file, the client, the field, a hint) by ``lantide mcp list``, by the
stdio server and by the HTTP server (401 with the reason, never a 500), is kept in the file
as it is, and every other client keeps working. A file whose whole shape is wrong is
reported as such, and no request gets a server error."""

from __future__ import annotations

import json

import pytest

import tests.mcp.conftest as mcp_fixtures
from tests.mcp.conftest import activity_lines, pair

pytestmark = pytest.mark.security

store = mcp_fixtures.store
executing_workspace = mcp_fixtures.executing_workspace
engine = mcp_fixtures.engine
http_server = mcp_fixtures.http_server

# (field, a wrong value)
WRONG = [
    ("expires_at", 5),
    ("expires_at", "next tuesday"),
    ("scope", 5),
    ("name", None),
    ("id", ["a"]),
    ("mode", 7),
    ("mode", "root"),
    ("revoked_at", {"at": "now"}),
    ("token_hash", 12),
    ("created_at", True),
    ("last_used_at", 1.5),
]


def _break(store, client_id: str, field: str, value) -> dict:
    data = json.loads(store.path.read_text())
    [entry] = [c for c in data["clients"] if c["id"] == client_id]
    entry[field] = value
    store.path.write_text(json.dumps(data, indent=2))
    return entry


def _post(url: str, token: str):
    import httpx2

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "run_query",
            "arguments": {"sql": "SELECT 42 AS answer"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "run_query",
    }
    return httpx2.post(url, headers=headers, content=json.dumps(body), timeout=60)


@pytest.mark.parametrize("field,value", WRONG, ids=[f"{f}={v!r}" for f, v in WRONG])
def test_a_wrongly_typed_field_costs_only_its_own_client(
    http_server, store, executing_workspace, run_cli, field, value, monkeypatch
):
    monkeypatch.setenv("HOME", str(store.path.parent.parent))  # the config folder in home
    good = pair(store, executing_workspace, "observe", name="Good")
    bad = pair(store, executing_workspace, "observe", name="Bad")
    broken = _break(store, bad.client.id, field, value)

    # over HTTP: the good client works, the broken one is refused with the reason
    answer = _post(http_server.url, good.token)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"]["rows"] == [[42]]
    refused = _post(http_server.url, bad.token)
    assert refused.status_code == 401, refused.text
    if field != "token_hash":  # without its hash no token leads to the entry
        reason = refused.json()["message"]
        assert field in reason and "mcp_clients.json" in reason
        assert str(store.path) not in reason  # the file named from ~, not the home folder

    # the command line lists the good one and names the file, the field and what to do
    listed = run_cli("mcp", "list", timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "Good" in listed.stdout and "Traceback" not in listed.stderr
    assert "mcp_clients.json" in listed.stderr and repr(field) in listed.stderr
    assert "Hint:" in listed.stderr
    as_json = run_cli("mcp", "list", "--json", timeout=60)
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert [c["id"] for c in report["clients"]] == [good.client.id]
    [problem] = report["problems"]
    assert problem["field"] == field and problem["hint"]

    # pairing another client keeps the broken entry as the analyst left it, in its place
    pair(store, executing_workspace, "execute", name="Third")
    entries = json.loads(store.path.read_text())["clients"]
    assert entries[1] == broken
    assert [e["name"] for e in entries if e is not entries[1]] == ["Good", "Third"]
    assert [e["tool"] for e in activity_lines(executing_workspace, good.client.id)] == ["run_query"]


def test_stdio_serves_the_good_client_and_names_the_broken_entry(
    store, executing_workspace, run_cli
):
    from tests.mcp.test_stdio_and_cli import over_stdio

    good = pair(store, executing_workspace, "observe", name="Good")
    bad = pair(store, executing_workspace, "observe", name="Bad")
    _break(store, bad.client.id, "expires_at", 5)

    async def work(client):
        return await client.call_tool("run_query", {"sql": "SELECT 42 AS answer"})

    result = over_stdio(executing_workspace, good.token, work)
    assert not result.is_error and result.structured_content["rows"] == [[42]]
    done = run_cli(
        "mcp", executing_workspace, "--stdio", env={"LANTIDE_MCP_TOKEN": bad.token}, timeout=60
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "Traceback" not in done.stderr
    assert "mcp_clients.json" in done.stderr and "'expires_at'" in done.stderr


@pytest.mark.parametrize(
    "text",
    ['{"version": 1, "clients": {"a": 1}}', '{"version": 1, "clients": "none"}', "[1, 2]", "{"],
)
def test_a_file_of_the_wrong_shape_is_reported_and_refuses_without_a_server_error(
    http_server, store, executing_workspace, run_cli, text
):
    paired = pair(store, executing_workspace, "observe")
    store.path.write_text(text)
    answer = _post(http_server.url, paired.token)
    assert answer.status_code == 401, answer.text
    assert "mcp_clients.json" in answer.json()["message"]
    listed = run_cli("mcp", "list", timeout=60)
    assert listed.returncode == 1
    assert "mcp_clients.json" in listed.stderr and "Traceback" not in listed.stderr
    assert store.path.read_text() == text  # never rewritten
