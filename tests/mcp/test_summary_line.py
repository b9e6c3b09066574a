"""The in-app agent's Context Summary says when an outside agent works in the workspace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.mcp.conftest import pair


def test_the_prompt_names_an_outside_agent_that_just_queried(store, executing_workspace, run_cli):
    from lantide.mcp.engine import McpEngine

    quiet = run_cli("prompt", executing_workspace)
    assert quiet.returncode == 0, quiet.stderr
    assert "Outside agents" not in quiet.stdout  # a line only when there were some

    client = pair(store, executing_workspace, "execute", name="Claude Code")
    engine = McpEngine(store=store, transport="http")
    engine.open_workspace(executing_workspace)
    try:
        done = engine.call(
            client.client, "run_query", {"sql": "SELECT 1 AS one", "purpose": "a first look"}
        )
        assert done.ok, done.result
        engine.call(client.client, "show_tables", {})
    finally:
        engine.close()
    busy = run_cli("prompt", executing_workspace)
    assert busy.returncode == 0, busy.stderr
    assert (
        "- Outside agents (MCP): Claude Code (execute; 2 calls, 1 queries; last 0 min "
        "ago). They work in this workspace too"
    ) in busy.stdout


def test_only_the_last_hour_counts(tmp_path):
    from lantide.workspace.activity import connected_clients, record_call

    record_call(
        tmp_path,
        client_id="codex",
        client_name="Codex",
        mode="observe",
        transport="stdio",
        tool="show_tables",
        arguments={},
        ok=True,
    )
    now = datetime.now(UTC)
    assert [c["name"] for c in connected_clients(tmp_path, 60, now=now)] == ["Codex"]
    assert connected_clients(tmp_path, 60, now=now + timedelta(minutes=61)) == []


def test_a_hand_edited_line_whose_step_ids_is_no_list_counts_no_query(tmp_path):
    # len(5) made the Context Summary's client list fail on one damaged activity line
    import json

    from lantide.workspace.activity import activity_path, connected_clients, record_call

    for client_id in ("codex", "cursor"):
        record_call(
            tmp_path,
            client_id=client_id,
            client_name=client_id.title(),
            mode="observe",
            transport="stdio",
            tool="run_query",
            arguments={},
            ok=True,
            step_ids=["s1", "s2"],
        )
    path = activity_path(tmp_path, "codex")
    line = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**line, "step_ids": 5}) + "\n", encoding="utf-8")
    now = datetime.now(UTC)
    counted = {c["name"]: c["queries"] for c in connected_clients(tmp_path, 60, now=now)}
    assert counted == {"Codex": 0, "Cursor": 2}
