"""Hostile and malformed JSON-RPC to the MCP server, over stdio (a real ``lantide mcp
--stdio`` process) and over Streamable HTTP (a real server on 127.0.0.1): each gets the
answer the MCP specification and JSON-RPC 2.0 give it, the same on both transports, and the
server goes on serving.

- a line or body that is not JSON: ``-32700`` (parse error), ``id`` null;
- JSON that is not a request (no ``method``, a batch): ``-32600``, ``id`` null;
- a pagination cursor the server never handed out: ``-32602`` (invalid params);
- a tool that does not exist: ``-32602`` naming it (the specification's tools/call error
  handling), recorded in the activity log like any refused call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

import tests.mcp.conftest as mcp_fixtures
from tests.conftest import REPO, cli_env
from tests.mcp.conftest import activity_lines, pair

# the MCP tests' fixtures: a paired-clients store, the sample workspace executing, the
# engine over it and a real HTTP server on 127.0.0.1
store = mcp_fixtures.store
executing_workspace = mcp_fixtures.executing_workspace
engine = mcp_fixtures.engine
http_server = mcp_fixtures.http_server

pytestmark = pytest.mark.security

PROTOCOL = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _request(request_id, method, **params):
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": META},
    }


UNKNOWN = "drop_everything"

# (label, what is sent, expected error code, expected id)
CASES = [
    ("not JSON", b'{"jsonrpc": "2.0", "id": 3, "method": "tools/l', -32700, None),
    ("no method", json.dumps({"jsonrpc": "2.0", "id": 4, "params": {"_meta": META}}), -32600, None),
    ("a method that is no string", json.dumps(_request(9, "x") | {"method": 5}), -32600, None),
    ("a batch", json.dumps([_request(10, "tools/list")]), -32600, None),
    ("a forged tools cursor", json.dumps(_request(5, "tools/list", cursor="b2Zmc2V0")), -32602, 5),
    ("a forged resources cursor", json.dumps(_request(8, "resources/list", cursor="x")), -32602, 8),
    ("an unknown tool", json.dumps(_request(6, "tools/call", name=UNKNOWN)), -32602, 6),
]  # fmt: skip

GOOD = _request(7, "tools/call", name="run_query", arguments={"sql": "SELECT 42 AS answer"})


class StdioClient:
    """``lantide mcp WS --stdio`` in its own process; one line out, one line back."""

    def __init__(self, workspace, token: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lantide", "mcp", str(workspace), "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env({"LANTIDE_MCP_TOKEN": token}),
            cwd=str(REPO),
        )

    def send(self, payload: str | bytes) -> dict | None:
        data = payload if isinstance(payload, bytes) else payload.encode()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(self.proc.stdout.readline()))
        reader.start()
        reader.join(60)
        if not got or not got[0]:
            return None  # no answer within a minute
        return json.loads(got[0])

    def close(self) -> str:
        try:
            _out, err = self.proc.communicate(timeout=60)  # closes stdin: the server ends
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _out, err = self.proc.communicate()
        return err.decode(errors="replace")


def _http_send(url: str, token: str, payload: str | bytes) -> tuple[int, dict]:
    import httpx2

    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL,
    }
    try:
        body = json.loads(payload)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("method"), str):
        headers["Mcp-Method"] = body["method"]
        if body["method"] == "tools/call":
            headers["Mcp-Name"] = body["params"]["name"]
    answer = httpx2.post(url, headers=headers, content=payload, timeout=60)
    return answer.status_code, answer.json()


def _check(reply: dict | None, code: int, request_id) -> None:
    assert reply is not None, "no answer"
    assert reply.get("jsonrpc") == "2.0"
    assert "result" not in reply, reply
    assert reply["error"]["code"] == code, reply
    assert reply["id"] == request_id, reply


@pytest.mark.slow
def test_stdio_answers_every_malformed_message_as_json_rpc_says(store, executing_workspace):
    paired = pair(store, executing_workspace, "observe")
    client = StdioClient(executing_workspace, paired.token)
    try:
        for label, payload, code, request_id in CASES:
            reply = client.send(payload)
            _check(reply, code, request_id)
            if label == "an unknown tool":
                assert UNKNOWN in reply["error"]["message"]
        good = client.send(json.dumps(GOOD))
    finally:
        stderr = client.close()
    assert good is not None and good["id"] == 7, stderr
    assert good["result"]["structuredContent"]["rows"] == [[42]]
    assert "Traceback" not in stderr
    tools = [e["tool"] for e in activity_lines(executing_workspace, paired.client.id)]
    assert tools == [UNKNOWN, "run_query"]


def test_http_answers_the_same_as_stdio(http_server, store, executing_workspace):
    paired = pair(store, executing_workspace, "observe")
    for label, payload, code, request_id in CASES:
        status, reply = _http_send(http_server.url, paired.token, payload)
        _check(reply, code, request_id)
        if label == "an unknown tool":
            assert UNKNOWN in reply["error"]["message"]
            assert reply["error"]["data"]["error"] == "UNKNOWN_TOOL"
        assert status in (200, 400), (label, status)
    status, good = _http_send(http_server.url, paired.token, json.dumps(GOOD))
    assert status == 200 and good["result"]["structuredContent"]["rows"] == [[42]]
    [refused, ran] = activity_lines(executing_workspace, paired.client.id)
    assert (refused["tool"], refused["ok"]) == (UNKNOWN, False)
    assert (ran["tool"], ran["ok"]) == ("run_query", True)


def test_the_sdk_client_sees_an_unknown_tool_as_a_protocol_error(
    http_server, store, executing_workspace
):
    from mcp import MCPError

    from tests.mcp.conftest import call

    paired = pair(store, executing_workspace, "observe")
    with pytest.raises(MCPError) as refused:
        call(http_server.url, paired.token, "no_such_tool", {})
    assert refused.value.code == -32602
    assert "no_such_tool" in refused.value.message


def test_an_unknown_tool_of_200_kb_is_not_repeated_whole(http_server, store, executing_workspace):
    from mcp import MCPError

    from tests.mcp.conftest import call

    paired = pair(store, executing_workspace, "observe")
    name = "x" * 200_000
    with pytest.raises(MCPError) as refused:
        call(http_server.url, paired.token, name, {})
    assert refused.value.code == -32602
    assert len(json.dumps([refused.value.message, refused.value.data])) < 2_000
