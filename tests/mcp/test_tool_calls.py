"""``tools/call`` at the 2026-07-28 protocol is served by Lantide's lean entry
(:mod:`lantide.mcp.tool_calls`); every answer, refusals included, is the one the SDK's own
entry gives for the same request, byte for byte."""

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
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": PROTOCOL,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "run_query",
}


def _body(tool="run_query", arguments=None, **changes):
    params = {"name": tool, "arguments": arguments or {"sql": "SELECT 42 AS answer"}}
    params["_meta"] = META
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}
    body.update(changes)
    return body


def _raw(method="tools/call", request_id=5, **params):
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _halves():
    text = json.dumps(_body()).encode()
    return iter([text[:40], text[40:]])


# (label, headers to change (None removes), body: dict, bytes or a generator factory)
CASES = [
    ("a result", {}, _body()),
    ("a tool error", {}, _body(arguments={"sql": "DROP TABLE customers"})),
    ("a mode refused", {"Mcp-Name": "create_sql_tab"}, _body("create_sql_tab", {"name": "t"})),
    ("an unknown tool", {"Mcp-Name": "nope"}, _body("nope")),
    ("arguments not an object", {}, _raw(name="run_query", arguments=[1], _meta=META)),
    ("no name", {}, _raw(_meta=META)),
    ("a header naming another tool", {"Mcp-Name": "read_plan"}, _body()),
    ("a header naming another method", {"Mcp-Method": "tools/list"}, _body()),
    ("no routing headers", {"Mcp-Method": None, "Mcp-Name": None}, _body()),
    ("no _meta", {}, _raw(name="run_query", arguments={"sql": "SELECT 1"})),
    ("an unknown version", {"MCP-Protocol-Version": "2099-01-01"}, _body()),
    ("a rebound host", {"Host": "evil.example:80"}, _body()),
    ("a foreign origin", {"Origin": "http://evil.example"}, _body()),
    ("no JSON accepted", {"Accept": "text/event-stream"}, _body()),
    ("not JSON content", {"Content-Type": "text/plain"}, _body()),
    ("broken JSON", {}, b'{"jsonrpc": "2.0", "id": 5, "method": "tools/c'),
    ("a batch", {}, [_body()]),
    ("a notification", {}, {"jsonrpc": "2.0", "method": "tools/call", "params": {"_meta": META}}),
    ("a string id", {}, _body(id="abc")),
    ("a null id", {}, _body(id=None)),
    ("tools/list", {"Mcp-Method": "tools/list", "Mcp-Name": None}, _raw("tools/list", _meta=META)),
    ("a body too large", {}, _body(arguments={"sql": "SELECT '" + "x" * 5_000_000 + "'"})),
    ("a streamed body too large", {}, lambda: (b"x" * 65536 for _ in range(100))),
    ("a streamed call", {}, _halves),
]  # fmt: skip


def _send(url: str, token: str, changes: dict, body):
    import httpx2

    headers = {**HEADERS, "Authorization": f"Bearer {token}"}
    for name, value in changes.items():
        headers.pop(name, None)
        if value is not None:
            headers[name] = value
    if callable(body):
        content = body()
    elif isinstance(body, bytes):
        content = body
    else:
        content = json.dumps(body).encode()
    answer = httpx2.post(url, headers=headers, content=content, timeout=60)
    kept = {k: answer.headers.get(k) for k in ("content-type", "content-length", "allow")}
    return answer.status_code, kept, answer.content


@pytest.fixture
def sdk_server(engine):
    """The same engine served by the SDK's own entry only."""
    from lantide.mcp.server import HttpServer

    server = HttpServer(engine, port=0, fast_tool_calls=False).start()
    yield server
    server.stop()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_answer_is_the_sdks_own(http_server, sdk_server, store, executing_workspace, case):
    _label, changes, body = case
    observe = pair(store, executing_workspace, "observe")
    lean = _send(http_server.url, observe.token, changes, body)
    sdk = _send(sdk_server.url, observe.token, changes, body)
    assert lean == sdk


def test_a_call_that_passes_every_check_does_not_reach_the_sdks_entry(
    http_server, store, executing_workspace, monkeypatch
):
    import mcp.server.streamable_http_manager as manager

    entered: list[str] = []
    real = manager.handle_modern_request

    async def counted(app, security, json_response, state, scope, receive, send):
        entered.append(scope["path"])
        await real(app, security, json_response, state, scope, receive, send)

    monkeypatch.setattr(manager, "handle_modern_request", counted)
    observe = pair(store, executing_workspace, "observe")
    status, _headers, content = _send(http_server.url, observe.token, {}, _body())
    assert status == 200 and json.loads(content)["result"]["structuredContent"]["rows"] == [[42]]
    assert entered == []
    status, _headers, _content = _send(
        http_server.url, observe.token, {"Mcp-Name": "read_plan"}, _body()
    )
    assert status == 400 and entered == ["/mcp"]


def test_the_lean_entry_checks_the_token_and_records_the_call(
    http_server, store, executing_workspace
):
    from tests.mcp.conftest import activity_lines

    assert _send(http_server.url, "ltd_" + "A" * 43, {}, _body())[0] == 401
    observe = pair(store, executing_workspace, "observe")
    store.revoke(observe.client.id)
    assert _send(http_server.url, observe.token, {}, _body())[0] == 401
    execute = pair(store, executing_workspace, "execute")
    assert _send(http_server.url, execute.token, {}, _body())[0] == 200
    [line] = activity_lines(executing_workspace, execute.client.id)
    assert line["tool"] == "run_query" and line["transport"] == "http"


def test_a_malformed_content_length_is_left_to_the_sdk(engine):
    """The lean entry never parses what the SDK's own limit check parses its own way."""
    from lantide.mcp.server import http_app

    app = http_app(engine)
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"content-length", b"12x"), (b"mcp-protocol-version", PROTOCOL.encode())],
    }
    assert app.mcp._eligible(scope) is False
    scope["headers"][0] = (b"content-length", b"12")
    assert app.mcp._eligible(scope) is True
