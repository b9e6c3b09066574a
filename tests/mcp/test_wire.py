"""What a client not built on the Python SDK sees on the wire: one JSON-RPC POST at the
2026-07-28 protocol (no session), as Claude Code, Codex or Cursor send it."""

from __future__ import annotations

import json

import pytest

from tests.mcp.conftest import pair

PROTOCOL = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _call(url: str, token: str, tool: str, arguments: dict, headers: dict | None = None):
    import httpx2

    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": META},
    }
    sent = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
        **(headers or {}),
    }
    return httpx2.post(url, headers=sent, content=json.dumps(body), timeout=30)


def test_a_tool_result_is_its_json_as_text_and_as_structured_content(
    http_server, store, executing_workspace
):
    paired = pair(store, executing_workspace, "observe")
    answer = _call(http_server.url, paired.token, "run_query", {"sql": "SELECT 42 AS answer"})
    assert answer.status_code == 200, answer.text
    reply = answer.json()
    assert reply["id"] == 7 and reply["jsonrpc"] == "2.0"
    result = reply["result"]
    assert result["isError"] is False
    assert result["resultType"] == "complete"
    [content] = result["content"]
    assert content["type"] == "text"
    assert json.loads(content["text"]) == result["structuredContent"]
    assert result["structuredContent"]["rows"] == [[42]]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "lantide"


def test_a_refused_query_is_a_tool_error_with_the_same_two_forms(
    http_server, store, executing_workspace
):
    paired = pair(store, executing_workspace, "observe")
    answer = _call(http_server.url, paired.token, "run_query", {"sql": "DROP TABLE customers"})
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["structuredContent"]["error"] == "QUERY_REFUSED_DDL"


def test_a_call_outside_the_mode_is_the_protocol_error_naming_the_mode(
    http_server, store, executing_workspace
):
    paired = pair(store, executing_workspace, "observe")
    answer = _call(
        http_server.url, paired.token, "create_sql_tab", {"name": "t", "sql": "SELECT 1"}
    )
    error = answer.json()["error"]
    assert error["code"] == -32003
    assert "execute" in json.dumps(error["data"])


def test_a_header_naming_another_tool_than_the_body_is_refused(
    http_server, store, executing_workspace
):
    paired = pair(store, executing_workspace, "observe")
    answer = _call(
        http_server.url, paired.token, "run_query", {"sql": "SELECT 1"}, {"Mcp-Name": "read_plan"}
    )
    assert answer.status_code == 400
    assert "error" in answer.json()


def test_only_a_schema_declaring_a_header_is_given_to_the_sdks_header_check(monkeypatch):
    """The SDK compares ``Mcp-Param-*`` headers with the arguments a schema declares in
    ``x-mcp-header``; a schema declaring none is not handed over (nothing to compare)."""
    from lantide.mcp import extra_tools, server

    server.header_schema_of.cache_clear()
    assert server.header_schema_of("run_query") is None
    assert server.header_schema_of("no_such_tool") is None
    declared = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    }
    monkeypatch.setattr(extra_tools, "schema_of", lambda name: declared)
    server.header_schema_of.cache_clear()
    try:
        assert server.header_schema_of("run_query") is declared
    finally:
        server.header_schema_of.cache_clear()


@pytest.mark.parametrize("path", ["/elsewhere", "/mcp/extra"])
def test_other_paths_still_need_a_token_and_serve_nothing(
    http_server, store, executing_workspace, path
):
    import httpx2

    base = http_server.url.removesuffix("/mcp")
    assert httpx2.post(base + path, timeout=30).status_code == 401
    paired = pair(store, executing_workspace, "observe")
    answer = httpx2.post(
        base + path, headers={"Authorization": f"Bearer {paired.token}"}, timeout=30
    )
    assert answer.status_code in (404, 405, 307)
