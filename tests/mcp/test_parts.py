"""The MCP layer's parts on their own: descriptions as prompt files, the activity log's
secret removal, the paired clients file."""

from __future__ import annotations

import json

import pytest


def test_every_mcp_tool_is_described_by_a_prompt_file():
    from lantide.mcp import access
    from lantide.mcp.extra_tools import description, playbook_text
    from lantide.templates import list_templates

    files = sorted(t for t in list_templates() if t.startswith("mcp/tools/"))
    assert files == sorted(f"mcp/tools/{t.name}.md.j2" for t in access.TOOLS)
    for tool in access.TOOLS:
        text = description(tool.name)
        assert 20 < len(text) < 700 and "{" not in text, tool.name
    playbook = playbook_text()
    for mode in ("Observe", "Execute", "Admin"):
        assert mode in playbook
    assert "at most 40 characters" in playbook


def test_the_activity_log_removes_secrets_and_tokens(tmp_path):
    from lantide.workspace.activity import REDACTED, record_call

    token = "ltd_" + "x" * 43
    other = "ltd_" + "Y" * 43
    record_call(
        tmp_path,
        client_id="c",
        client_name="C",
        mode="execute",
        transport="http",
        tool="run_query",
        token=token,
        ok=True,
        arguments={
            "sql": f"SELECT '{token}', '{other}'",
            "api_key": "sk-123",
            "nested": {"password": "hunter2", "items": [token]},
            "purpose": "kept",
        },
    )
    text = (tmp_path / ".lantide" / "activity" / "c.jsonl").read_text()
    for secret in (token, other, "sk-123", "hunter2"):
        assert secret not in text
    entry = json.loads(text)
    assert entry["arguments"]["purpose"] == "kept"
    assert entry["arguments"]["api_key"] == REDACTED
    assert entry["arguments"]["nested"] == {"password": REDACTED, "items": [REDACTED]}


def test_a_client_id_cannot_escape_the_activity_folder(tmp_path):
    from lantide.workspace.activity import activity_path

    path = activity_path(tmp_path, "../../etc/passwd")
    assert path.parent == tmp_path / ".lantide" / "activity"


def test_a_damaged_clients_file_is_reported_and_kept(store, tmp_path):
    from lantide.errors import CorruptFileError

    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_bytes(b'{"clients": [{"id": "x"}]')
    with pytest.raises(CorruptFileError):
        store.pair("late", mode="observe")
    assert store.path.read_bytes() == b'{"clients": [{"id": "x"}]'
    client, why = store.verify("ltd_" + "a" * 43)
    assert client is None and why.startswith("the paired clients file cannot be read")


def test_an_expiry_is_read_in_days_hours_or_never():
    from lantide.errors import LantideError
    from lantide.mcp.clients import parse_expiry

    assert parse_expiry("30d") == 30 and parse_expiry("12h") == 0.5
    assert parse_expiry("never") is None and parse_expiry("7") == 7
    with pytest.raises(LantideError):
        parse_expiry("next tuesday")


def test_two_pairings_under_one_name_get_distinct_ids_and_tokens(store, empty_workspace):
    first = store.pair("Claude Code", scope=str(empty_workspace), mode="observe")
    second = store.pair("Claude Code", scope=str(empty_workspace), mode="execute")
    assert first.client.id == "claude-code" and second.client.id.startswith("claude-code-")
    assert first.token != second.token
    assert store.verify(second.token)[0].mode == "execute"


def test_a_change_to_the_clients_file_is_seen_at_the_next_check(store, empty_workspace):
    """Tokens are checked against a cached parse of the file: any change, even a hand
    edit in place of the same size, must reach the next request."""
    import os
    import time

    paired = store.pair("Codex", scope=str(empty_workspace), mode="observe")
    old = time.time() - 60
    os.utime(store.path, (old, old))  # an old file: cached from now on
    assert store.verify(paired.token)[1] == "ok"
    assert store.verify(paired.token)[1] == "ok"
    text = store.path.read_text()
    expired = json.loads(text)
    expired["clients"][0]["expires_at"] = "2000-01-01T00:00:00Z"
    edited = json.dumps(expired)
    with open(store.path, "w", encoding="utf-8") as fh:  # a hand edit, in place
        fh.write(edited)
    assert store.verify(paired.token) == (None, "token expired")
    store.path.write_text(text)
    assert store.verify(paired.token)[1] == "ok"
    store.revoke(paired.client.id)
    assert store.verify(paired.token) == (None, "token revoked")


def test_each_clients_configuration_parses_in_its_own_format():
    import shlex
    import tomllib

    from lantide.mcp.client_config import client_config

    token, url = "ltd_" + "t" * 43, "http://127.0.0.1:47615/mcp"
    cursor = json.loads(client_config("cursor", token, url).text)
    assert cursor["mcpServers"]["lantide"] == {
        "url": url,
        "headers": {"Authorization": f"Bearer {token}"},
    }
    codex = tomllib.loads(client_config("codex", token, url).text)
    assert codex["mcp_servers"]["lantide"] == {
        "url": url,
        "http_headers": {"Authorization": f"Bearer {token}"},
    }
    claude = shlex.split(client_config("claude-code", token, url).text)
    assert claude[:2] == ["claude", "mcp"] and url in claude
    assert claude[claude.index("--header") + 1] == f"Authorization: Bearer {token}"
    other = json.loads(client_config("other", token, url, "/data/ws").text)["mcpServers"]
    assert other["lantide-stdio"]["args"] == ["mcp", "/data/ws", "--stdio"]
    assert other["lantide-stdio"]["env"] == {"LANTIDE_MCP_TOKEN": token}


def test_a_verified_client_is_the_callers_own_copy(store, empty_workspace):
    """Every request's check reads a shared, cached parse of the clients file: what it
    hands out must not be that cached entry, or one request could change the next."""
    import os
    import time

    paired = store.pair("Codex", scope=str(empty_workspace), mode="observe")
    old = time.time() - 60
    os.utime(store.path, (old, old))  # cached from now on
    first, why = store.verify(paired.token)
    assert why == "ok" and first is not None
    first.mode = "admin"
    first.extra["changed"] = True
    second, _ = store.verify(paired.token)
    assert second is not None and second is not first
    assert (second.mode, second.extra) == ("observe", {})
