"""The MCP server over Streamable HTTP, driven by the official SDK's client."""

from __future__ import annotations

import json
import threading

import pytest

from tests.mcp.conftest import activity_lines, call, ledger_lines, over_http, pair, tool_names
from tests.mcp.test_http_auth import _post

OBSERVE_TOOLS = [
    "get_analysis_context",
    "show_tables",
    "read_schema",
    "profile_columns",
    "validate_query",
    "run_query",
    "read_plan",
    "read_report",
    "list_annotations",
    "read_step",
]
EXECUTE_ADDS = ["resolve_annotations", "create_sql_tab", "run_sql_tab", "source_run_sql_tab"]


def test_tools_are_listed_per_mode(http_server, store, executing_workspace):
    observe = pair(store, executing_workspace, "observe")
    execute = pair(store, executing_workspace, "execute")
    admin = pair(store, executing_workspace, "admin")
    assert tool_names(http_server.url, observe.token) == OBSERVE_TOOLS
    assert tool_names(http_server.url, execute.token) == OBSERVE_TOOLS + EXECUTE_ADDS
    assert tool_names(http_server.url, admin.token) == OBSERVE_TOOLS + EXECUTE_ADDS + [
        "set_project_status"
    ]


def test_a_scope_of_all_workspaces_adds_the_workspace_tools(
    http_server, store, executing_workspace
):
    everywhere = store.pair("roamer", scope="all", mode="observe")
    names = tool_names(http_server.url, everywhere.token)
    assert names[:3] == ["get_analysis_context", "list_workspaces", "select_workspace"]
    listed = call(http_server.url, everywhere.token, "list_workspaces").structured_content
    assert listed["workspaces"] == [
        {"name": "Sample workspace", "root": str(executing_workspace.resolve()), "selected": True}
    ]


@pytest.mark.parametrize(
    "tool,arguments",
    [
        ("run_sql_tab", {"tab": "clean_orders", "purpose": "clean orders"}),
        (
            "resolve_annotations",
            {"document": "plan", "items": [{"id": "x", "mode": "B", "answer": "yes"}]},
        ),
    ],
)
def test_observe_refuses_what_needs_execute_with_the_mode_named(
    http_server, store, executing_workspace, tool, arguments
):
    from mcp.shared.exceptions import MCPError

    from lantide.mcp.server import MODE_REQUIRED_CODE

    observe = pair(store, executing_workspace, "observe")
    plan_before = (executing_workspace / "projects/q3-churn/plan.md").read_bytes()
    with pytest.raises(MCPError) as refused:
        call(http_server.url, observe.token, tool, arguments)
    assert refused.value.code == MODE_REQUIRED_CODE
    assert refused.value.data["error"] == "MODE_REQUIRED"
    assert refused.value.data["required_mode"] == "execute"
    assert refused.value.data["mode"] == "observe"
    assert "Execute" in refused.value.message
    # nothing ran: no step, the Plan untouched; the refusal itself is in the activity log
    assert ledger_lines(executing_workspace, f"mcp-{observe.client.id}") == []
    assert (executing_workspace / "projects/q3-churn/plan.md").read_bytes() == plan_before
    [entry] = activity_lines(executing_workspace, observe.client.id)
    assert (entry["tool"], entry["ok"], entry["error"]["required_mode"]) == (tool, False, "execute")


def test_observe_run_query_previews_without_caching_or_a_step(
    http_server, store, executing_workspace
):
    observe = pair(store, executing_workspace, "observe")
    result = call(
        http_server.url,
        observe.token,
        "run_query",
        {"sql": "SELECT count(*) AS n FROM customers", "result_label": "n_customers"},
    )
    assert not result.is_error
    assert result.structured_content["rows"] == [[2000]]
    assert result.structured_content["materialized"] is False
    assert ledger_lines(executing_workspace, f"mcp-{observe.client.id}") == []
    tables = call(
        http_server.url, observe.token, "show_tables", {"name": "n_customers"}
    ).structured_content
    assert tables["tables"] == []


def test_execute_runs_a_formal_query_into_the_ledger_and_the_activity_log(
    http_server, store, executing_workspace
):
    client = pair(store, executing_workspace, "execute", name="Claude Code")
    result = call(
        http_server.url,
        client.token,
        "run_query",
        {"sql": "SELECT count(*) AS n FROM customers", "purpose": "customer count"},
    )
    assert not result.is_error, result.structured_content
    out = result.structured_content
    assert out["preview"] == [[2000]] and out["row_count"] == 1
    [step] = ledger_lines(executing_workspace, "mcp-claude-code")
    assert step["step_id"] == out["step_id"]
    assert step["purpose"] == "customer count" and step["conversation_id"] == "mcp-claude-code"
    assert step["client"] == "claude-code" and step["materialized"] is True  # executing
    assert step["sql"] == "SELECT count(*) AS n FROM customers"
    assert step["summary_status"] == "external"  # no [[QUERY_STEP]] line will come
    # the conversation carries the client's name, so the ledger panel lists it as such
    from lantide.agent.conversation import list_conversations

    titles = {
        c.id: c.title
        for c in list_conversations(executing_workspace / ".lantide" / "conversations")
    }
    assert titles["mcp-claude-code"] == "Claude Code (MCP)"
    [entry] = activity_lines(executing_workspace, "claude-code")
    assert entry["tool"] == "run_query" and entry["ok"] is True
    assert entry["mode"] == "execute" and entry["client"] == "claude-code"
    assert entry["step_ids"] == [out["step_id"]]
    assert entry["arguments"]["purpose"] == "customer count"


def test_a_formal_query_without_purpose_is_refused_by_the_qem(
    http_server, store, executing_workspace
):
    client = pair(store, executing_workspace, "execute")
    result = call(http_server.url, client.token, "run_query", {"sql": "SELECT 1 AS x"})
    assert result.is_error and result.structured_content["error"] == "PURPOSE_REQUIRED"


def test_a_drop_is_refused_exactly_as_in_the_app(http_server, store, executing_workspace):
    from lantide.agent.tools import default_registry

    client = pair(store, executing_workspace, "execute")
    sql = "DROP TABLE customers"
    result = call(http_server.url, client.token, "run_query", {"sql": sql, "purpose": "x"})
    assert result.is_error
    # the in-app agent's tool on the same engine answers the same error object
    handle = http_server.engine.open_workspace(executing_workspace)
    ctx = _app_context(handle)
    in_app = default_registry().call("run_query", {"sql": sql, "purpose": "x"}, ctx)
    assert not in_app.ok
    assert result.structured_content == in_app.result
    assert result.structured_content["error"] == "QUERY_REFUSED_DDL"
    assert (executing_workspace / "data" / "customers.csv").exists()


def _app_context(handle):
    from lantide.agent.app_state import SessionFileAppState
    from lantide.agent.cancel import CancelToken
    from lantide.agent.conversation import Conversation
    from lantide.agent.ledger import Ledger
    from lantide.agent.tools.context import ToolContext

    ws = handle.workspace
    conv = Conversation.create(ws.conversations_dir)
    return ToolContext(
        workspace=ws,
        settings=handle.settings,
        conversation=conv,
        ledger=Ledger(ws.ledger_dir, conv.id),
        app=SessionFileAppState(ws),
        services=handle.services,
        cancel=CancelToken(),
        state="executing",
        turn=1,
    )


def test_admin_changes_status_but_never_approves_a_plan(http_server, store, executing_workspace):
    from lantide.workspace.model import Project

    admin = pair(store, executing_workspace, "admin")
    review = call(
        http_server.url,
        admin.token,
        "set_project_status",
        {"status": "plan_review", "project": "q3-churn"},
    )
    assert not review.is_error, review.structured_content
    assert Project.load(executing_workspace, "q3-churn").status == "plan_review"
    call(
        http_server.url,
        admin.token,
        "set_project_status",
        {"status": "planning", "project": "q3-churn"},
    )
    approve = call(
        http_server.url,
        admin.token,
        "set_project_status",
        {"status": "executing", "project": "q3-churn"},
    )
    assert approve.is_error
    assert approve.structured_content["error"] == "APPROVAL_IS_THE_ANALYSTS"
    assert Project.load(executing_workspace, "q3-churn").status == "planning"


def test_two_clients_at_once_on_one_workspace(http_server, store, executing_workspace):
    first = pair(store, executing_workspace, "execute", name="Codex", kind="codex")
    second = pair(store, executing_workspace, "execute", name="Cursor", kind="cursor")
    results: dict[str, list] = {}
    errors: list[BaseException] = []

    def work(p, n):
        try:
            results[p.client.id] = [
                call(
                    http_server.url,
                    p.token,
                    "run_query",
                    {
                        "sql": f"SELECT count(*) AS n FROM orders WHERE quantity > {i}",
                        "purpose": f"orders over {i}",
                    },
                )
                for i in range(n)
            ]
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(p, 4)) for p in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    for p in (first, second):
        assert all(not r.is_error for r in results[p.client.id])
        steps = ledger_lines(executing_workspace, f"mcp-{p.client.id}")
        assert [s["purpose"] for s in steps] == [f"orders over {i}" for i in range(4)]
        assert {s["client"] for s in steps} == {p.client.id}
        assert len(activity_lines(executing_workspace, p.client.id)) == 4


def test_resources_are_the_plan_the_report_and_the_playbook(
    http_server, store, executing_workspace
):
    client = pair(store, executing_workspace, "observe")

    async def work(c):
        listed = await c.list_resources()
        uris = [str(r.uri) for r in listed.resources]
        plan = await c.read_resource("lantide://project/q3-churn/plan")
        playbook = await c.read_resource("lantide://playbook")
        return uris, plan.contents[0].text, playbook.contents[0].text

    uris, plan, playbook = over_http(http_server.url, client.token, work)
    assert uris == [
        "lantide://playbook",
        "lantide://project/q3-churn/plan",
        "lantide://project/q3-churn/report",
    ]
    assert plan == (executing_workspace / "projects/q3-churn/plan.md").read_text()
    assert "get_analysis_context" in playbook and "purpose" in playbook


def test_the_token_appears_in_no_file(http_server, store, executing_workspace, tmp_path):
    import os

    client = pair(store, executing_workspace, "execute")
    call(
        http_server.url,
        client.token,
        "run_query",
        {"sql": f"SELECT '{client.token}' AS pasted", "purpose": "echo"},
    )
    call(http_server.url, client.token, "get_analysis_context", {"token": client.token})
    found = []
    for base in (
        executing_workspace,
        os.environ["LANTIDE_CONFIG_DIR"],
        os.environ["LANTIDE_DATA_DIR"],
    ):
        for path in __import__("pathlib").Path(base).rglob("*"):
            if path.is_file() and client.token.encode() in path.read_bytes():
                found.append(path)
    # the SQL itself is the analyst's evidence (ledger, cache); everything Lantide writes
    # about the client must be free of it
    assert not [p for p in found if "activity" in p.parts or p.name == "mcp_clients.json"]
    clients_file = json.loads(store.path.read_text())
    assert clients_file["clients"][0]["token_hash"] != client.token
    assert client.token not in store.path.read_text()


def test_the_token_never_reaches_the_activity_log_or_config(
    http_server, store, executing_workspace
):
    import os
    from pathlib import Path

    client = pair(store, executing_workspace, "observe")
    call(http_server.url, client.token, "validate_query", {"sql": "SELECT 1"})
    call(http_server.url, client.token, "get_analysis_context", {})
    for base in (executing_workspace, Path(os.environ["LANTIDE_CONFIG_DIR"])):
        for path in base.rglob("*"):
            if path.is_file():
                assert client.token.encode() not in path.read_bytes(), path
    assert activity_lines(executing_workspace, client.client.id)


def test_execute_lists_and_resolves_annotations_as_the_agent_does(
    http_server, store, executing_workspace
):
    client = pair(store, executing_workspace, "execute")
    listed = call(
        http_server.url,
        client.token,
        "list_annotations",
        {"document": "plan", "project": "q3-churn"},
    ).structured_content
    [plan] = listed["documents"]
    assert plan["open_annotation_count"] == len(plan["annotations"]) > 0
    first = plan["annotations"][0]
    resolved = call(
        http_server.url,
        client.token,
        "resolve_annotations",
        {
            "document": "plan",
            "project": "q3-churn",
            "items": [{"id": first["id"], "mode": "B", "answer": "Checked."}],
        },
    )
    assert not resolved.is_error, resolved.structured_content
    # an outside agent's resolution waits for the analyst's review, as the agent's does
    pending = resolved.structured_content
    assert pending["pending_review"] is True
    sidecar_path = executing_workspace / "projects/q3-churn/plan.annotations.json"
    statuses = {a["id"]: a["status"] for a in json.loads(sidecar_path.read_text())["annotations"]}
    assert statuses[first["id"]] == "open"
    from lantide.docs.edit_review import decide
    from lantide.workspace.model import Project

    decide(Project.load(executing_workspace, "q3-churn"), pending["edit_id"], "accept")
    sidecar = json.loads(sidecar_path.read_text())
    entry = next(a for a in sidecar["annotations"] if a["id"] == first["id"])
    assert entry["status"] == "resolved"
    assert entry["history"][-1]["by"] == "agent"
    after = call(
        http_server.url,
        client.token,
        "list_annotations",
        {"document": "plan", "project": "q3-churn"},
    ).structured_content
    assert after["documents"][0]["open_annotation_count"] == plan["open_annotation_count"] - 1


def test_read_step_reads_a_step_the_client_ran(http_server, store, executing_workspace):
    client = pair(store, executing_workspace, "execute")
    ran = call(
        http_server.url, client.token, "run_query", {"sql": "SELECT 7 AS seven", "purpose": "seven"}
    ).structured_content
    step = call(
        http_server.url, client.token, "read_step", {"step_id": ran["step_id"], "rows": 5}
    ).structured_content
    assert step["step"]["sql"] == "SELECT 7 AS seven"
    assert step["rows"]["rows"] in ([[7]], [{"seven": 7}])


def test_a_client_of_all_workspaces_selects_another_one(
    http_server, store, executing_workspace, tmp_path
):
    from lantide.workspace.model import Workspace

    other = tmp_path / "other"
    Workspace.create(other, name="Other place")
    (other / "data").mkdir(exist_ok=True)
    (other / "data" / "elsewhere.csv").write_text("a\n1\n")
    roamer = store.pair("roamer", scope="all", mode="observe")

    async def work(c):
        before = (await c.call_tool("show_tables", {})).structured_content
        chosen = await c.call_tool("select_workspace", {"workspace": str(other)})
        after = (await c.call_tool("show_tables", {})).structured_content
        listed = (await c.call_tool("list_workspaces", {})).structured_content
        return before, chosen, after, listed

    before, chosen, after, listed = over_http(http_server.url, roamer.token, work)
    assert "customers" in json.dumps(before) and "elsewhere" not in json.dumps(before)
    assert chosen.structured_content["selected"]["name"] == "Other place"
    assert "elsewhere" in json.dumps(after) and "customers" not in json.dumps(after)
    assert [w["selected"] for w in listed["workspaces"] if w["name"] == "Other place"] == [True]
    # a client scoped to one workspace has no such tools
    single = pair(store, executing_workspace, "observe")
    assert "select_workspace" not in tool_names(http_server.url, single.token)


def test_a_long_call_does_not_hold_up_another_clients_request(
    http_server, engine, store, executing_workspace
):
    """Engine calls run off the server's event loop: while one client's call is still
    running, another client is served (and a bad token still refused)."""
    first = pair(store, executing_workspace, "observe", name="Codex", kind="codex")
    second = pair(store, executing_workspace, "observe", name="Cursor", kind="cursor")
    started, release = threading.Event(), threading.Event()
    real_call = engine.call

    def call_that_waits(client, tool, arguments, token=None):
        if client.id == first.client.id and tool == "show_tables":
            started.set()
            release.wait(60)
        return real_call(client, tool, arguments, token)

    engine.call = call_that_waits
    outcome: list = []
    slow = threading.Thread(
        target=lambda: outcome.append(call(http_server.url, first.token, "show_tables"))
    )
    slow.start()
    try:
        assert started.wait(60)
        names = tool_names(http_server.url, second.token)  # served while the first waits
        other = call(http_server.url, second.token, "get_analysis_context")
        assert "show_tables" in names and not other.is_error
        assert _post(http_server.url, "ltd_" + "x" * 43).status_code == 401
        assert slow.is_alive() and outcome == []
    finally:
        release.set()
        slow.join(60)
    [result] = outcome
    assert not result.is_error


def test_requests_are_parsed_by_httptools(http_server):
    """The C parser (a dependency) rather than h11's pure Python: 0.4-0.5 ms of CPU less
    per request (benchmarks/README.md, ## mcp)."""
    protocol = http_server._server.config.http_protocol_class
    assert protocol.__module__ == "uvicorn.protocols.http.httptools_impl"
