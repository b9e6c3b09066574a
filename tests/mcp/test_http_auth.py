"""Every HTTP request needs a valid, unexpired, unrevoked token; the server binds loopback
only. A refused request reaches nothing: no tool runs, no file is written."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.mcp.conftest import activity_lines, call, ledger_lines, pair, tool_names

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "run_query",
        "arguments": {"sql": "SELECT 1 AS x", "purpose": "should not run", "result_label": "leak"},
    },
}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def _expire(store, client_id: str) -> None:
    data = json.loads(store.path.read_text())
    for entry in data["clients"]:
        if entry["id"] == client_id:
            entry["expires_at"] = (datetime.now(UTC) - timedelta(minutes=1)).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            )
    store.path.write_text(json.dumps(data))


def _token(case: str, store, workspace) -> str | None:
    if case == "missing":
        return None
    if case == "wrong":
        pair(store, workspace, "execute")
        return "ltd_" + "A" * 43
    paired = pair(store, workspace, "execute")
    if case == "expired":
        _expire(store, paired.client.id)
    elif case == "revoked":
        store.revoke(paired.client.id)
    return paired.token


def _post(
    url: str,
    token: str | None,
    scheme: str = "Bearer",
    session: str | None = None,
    body: dict | None = None,
):
    import httpx2

    headers = dict(HEADERS)
    if token is not None:
        headers["Authorization"] = f"{scheme} {token}"
    if session:
        headers["Mcp-Session-Id"] = session
    return httpx2.post(url, headers=headers, json=body or CALL, timeout=30)


def _session(url: str, token: str) -> str:
    """An initialized MCP session, opened with a valid token."""
    init = _post(
        url,
        token,
        body={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
    )
    assert init.status_code == 200, init.text
    session = init.headers["mcp-session-id"]
    done = _post(
        url, token, session=session, body={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert done.status_code in (200, 202), done.text
    return session


@pytest.mark.parametrize("case", ["missing", "wrong", "expired", "revoked"])
def test_a_bad_token_gets_401_and_nothing_runs(http_server, store, executing_workspace, case):
    # even inside a session a valid client opened, the bad token reaches nothing
    opener = pair(store, executing_workspace, "observe", name="opener")
    session = _session(http_server.url, opener.token)
    token = _token(case, store, executing_workspace)
    response = _post(http_server.url, token, session=session)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert not (executing_workspace / ".lantide" / "activity").exists()
    assert not list((executing_workspace / ".lantide" / "ledger").glob("mcp-*"))
    assert not list((executing_workspace / ".lantide" / "conversations").glob("mcp-*"))


def test_the_same_request_with_a_valid_token_runs(http_server, store, executing_workspace):
    """The control of the test above: the request is one that does run."""
    paired = pair(store, executing_workspace, "execute")
    response = _post(http_server.url, paired.token, session=_session(http_server.url, paired.token))
    assert response.status_code == 200, response.text
    assert "result" in response.json(), response.json()
    assert response.json()["result"]["isError"] is False
    assert [s["purpose"] for s in ledger_lines(executing_workspace, f"mcp-{paired.client.id}")] == [
        "should not run"
    ]
    assert len(activity_lines(executing_workspace, paired.client.id)) == 1


def test_a_token_under_another_scheme_is_refused(http_server, store, executing_workspace):
    paired = pair(store, executing_workspace, "execute")
    assert _post(http_server.url, paired.token, scheme="Basic").status_code == 401


def test_the_sdk_client_cannot_connect_without_a_valid_token(
    http_server, store, executing_workspace
):
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    paired = pair(store, executing_workspace, "observe")
    store.revoke(paired.client.id)
    statuses = []

    async def record(response):
        statuses.append(response.status_code)

    async def connect():
        async with (
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {paired.token}"},
                event_hooks={"response": [record]},
            ) as http,
            Client(streamable_http_client(http_server.url, http_client=http)) as c,
        ):
            await c.list_tools()

    with pytest.raises((MCPError, BaseExceptionGroup)):
        asyncio.run(connect())
    assert statuses and set(statuses) == {401}


def test_revoking_stops_a_client_at_its_next_request(http_server, store, executing_workspace):
    paired = pair(store, executing_workspace, "observe")
    assert tool_names(http_server.url, paired.token)
    store.revoke(paired.client.id)
    assert _post(http_server.url, paired.token).status_code == 401


def test_a_client_scoped_to_another_workspace_never_sees_the_served_one(
    http_server, store, tmp_path
):
    from lantide.workspace.model import Workspace

    other = tmp_path / "other"
    Workspace.create(other)
    paired = store.pair("elsewhere", scope=str(other), mode="observe")
    from tests.mcp.conftest import call

    # the other workspace opens in this server (nothing else holds it); its calls stay there
    result = call(http_server.url, paired.token, "show_tables")
    assert not result.is_error
    assert "customers" not in json.dumps(result.structured_content)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.org"])
def test_the_server_refuses_a_non_loopback_address(engine, host):
    from lantide.mcp.server import HttpServer, NotLoopbackError

    with pytest.raises(NotLoopbackError):
        HttpServer(engine, host=host, port=0)


def test_the_command_refuses_a_non_loopback_address(run_cli, executing_workspace):
    done = run_cli(
        "mcp", executing_workspace, "--http", "--host", "0.0.0.0", "--port", "0", timeout=60
    )
    assert done.returncode == 1
    assert "only the loopback address" in done.stderr
    assert "NOT_LOOPBACK" in done.stderr


def test_a_request_from_a_rebound_host_name_is_refused(http_server, store, executing_workspace):
    """DNS rebinding: a web page whose name resolves to 127.0.0.1 must not reach the
    server, even carrying a valid token."""
    import httpx2

    paired = pair(store, executing_workspace, "execute")
    session = _session(http_server.url, paired.token)
    headers = {
        **HEADERS,
        "Authorization": f"Bearer {paired.token}",
        "Mcp-Session-Id": session,
        "Host": "attacker.example",
        "Origin": "http://attacker.example",
    }
    response = httpx2.post(http_server.url, headers=headers, json=CALL, timeout=30)
    assert response.status_code in (400, 403, 421), response.text
    assert ledger_lines(executing_workspace, f"mcp-{paired.client.id}") == []


def test_stopping_the_server_ends_its_engine_threads(engine, store, executing_workspace):
    import threading

    from lantide.mcp.server import HttpServer

    paired = pair(store, executing_workspace, "observe")
    server = HttpServer(engine, port=0).start()
    try:
        assert tool_names(server.url, paired.token)
        call(server.url, paired.token, "show_tables")  # runs on an engine thread
        assert any(t.name.startswith("lantide-mcp_") for t in threading.enumerate())
    finally:
        server.stop()
    alive = [t for t in threading.enumerate() if t.name.startswith("lantide-mcp_")]
    for t in alive:
        t.join(5)
    assert [t.name for t in alive if t.is_alive()] == []
