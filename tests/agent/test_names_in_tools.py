"""The agent's tools name tabs by the workspace's one rule for names
(lantide.workspace.names): a name with spaces is accepted as in the app, a refused one says
why and suggests a name (the tool's schema no longer has a stricter pattern of its own)."""

from __future__ import annotations


def test_the_agents_tools_follow_the_same_rule(session_factory):
    from lantide.agent.tools import default_registry

    registry = default_registry()
    ctx = session_factory().tool_context()
    made = registry.call(
        "create_sql_tab", {"name": "orders by region", "sql": "SELECT 1 AS one"}, ctx
    )
    assert made.ok, made.result
    assert made.result["tab"] == "orders by region"
    refused = registry.call("create_sql_tab", {"name": "orders.v2", "sql": "SELECT 1"}, ctx)
    assert not refused.ok
    text = str(refused.result)
    assert "'.' is not allowed in a name" in text and "orders_v2" in text
