"""Deeply nested SQL through every way in (issue 28, item 8): the agent's tools and the
command line answer with a clear ``SQL_TOO_DEEP`` refusal, never "TOOL_FAILED … This is a
Lantide bug" or a bare "maximum recursion depth exceeded"."""

from __future__ import annotations

import json

import pytest

from tests.agent.scripted_model import reply

pytestmark = pytest.mark.security


def parens(n: int) -> str:
    return "SELECT " + "(" * n + "1" + ")" * n


def subqueries(n: int) -> str:
    return "SELECT * FROM (" * n + "SELECT 1" + "".join(f") t{i}" for i in range(n))


def cases(n: int) -> dict[str, str]:
    return {
        "parentheses": parens(n),
        "subqueries": subqueries(n // 4),
        "negations": "SELECT " + "NOT " * n + "true",
        "case": "SELECT " + "CASE WHEN true THEN " * (n // 2) + "1" + " END" * (n // 2),
        "function calls": "SELECT " + "abs(" * n + "1" + ")" * n,
        "in lists": "SELECT 1 WHERE 1 IN (" * (n // 2) + "1" + ")" * (n // 2),
        "unions": "SELECT 1" + " UNION ALL SELECT 1" * (n * 3),
    }


DEEP = cases(3000)


@pytest.mark.parametrize("tool", ["run_query", "validate_query"])
@pytest.mark.parametrize("shape", sorted(DEEP))
@pytest.mark.slow
def test_the_agents_tools_refuse_deep_sql_clearly(session_factory, scripted, tool, shape):
    scripted.add(reply("", (tool, {"sql": DEEP[shape]})))
    scripted.add(reply("I will write it flatter."))
    s = session_factory()
    events = list(s.run_turn("run it"))
    (result,) = [e.result for e in events if e.name == "tool_returned"]
    assert result.get("error") != "TOOL_FAILED", result
    assert "Lantide bug" not in str(result)
    if "error" in result:  # a statement too deep to read is refused as such
        assert result["error"] == "SQL_TOO_DEEP", result
        assert "recursion" not in result["message"]
        assert "nested" in result["message"] and result.get("hint")


@pytest.mark.parametrize("shape", ["parentheses", "subqueries", "negations"])
def test_the_command_line_refuses_deep_sql_clearly(sample_workspace, run_cli, shape):
    done = run_cli("sql", sample_workspace, DEEP[shape], "--json")
    assert "Traceback" not in done.stderr
    if done.returncode != 0:
        assert "SQL_TOO_DEEP" in done.stdout, done.stdout[-500:]


def test_every_deep_shape_is_refused_as_too_deep_by_the_guard():
    from lantide.query.errors import QueryRefused
    from lantide.query.guard import check

    for shape, sql in DEEP.items():
        if shape == "unions":  # a long chain, not a deep one: sqlglot reads it
            continue
        with pytest.raises(QueryRefused) as err:
            check(sql)
        assert err.value.code == "SQL_TOO_DEEP", (shape, err.value.message)


def test_nesting_an_analysis_needs_still_runs(session_factory, scripted):
    from lantide.query.guard import MAX_NESTING

    sql = parens(MAX_NESTING - 2)
    scripted.add(reply("", ("run_query", {"sql": sql}), ("run_query", {"sql": parens(200)})))
    scripted.add(reply("Done."))
    events = list(session_factory().run_turn("run it"))
    ran, refused = [e.result for e in events if e.name == "tool_returned"]
    assert ran.get("row_count") == 1, ran
    assert refused["error"] == "SQL_TOO_DEEP" and "200 levels" in refused["message"]


@pytest.mark.parametrize("shape", ["parentheses", "negations", "subqueries"])
def test_an_outside_agent_gets_the_same_refusal_over_mcp(shape, sample_workspace):
    from lantide.mcp.clients import ClientStore
    from lantide.mcp.engine import McpEngine
    from lantide.mcp.server import HttpServer
    from lantide.workspace.model import Project
    from tests.mcp.conftest import call, pair

    Project.load(sample_workspace, "q3-churn").approve_plan()
    store = ClientStore()
    engine = McpEngine(store=store, transport="http")
    engine.open_workspace(sample_workspace)
    server = HttpServer(engine, port=0).start()
    try:
        client = pair(store, sample_workspace, "execute")
        result = call(server.url, client.token, "run_query", {"sql": DEEP[shape], "purpose": "d"})
    finally:
        server.stop()
        engine.close()
    assert result.is_error
    text = json.dumps([c.model_dump() for c in result.content]) + json.dumps(
        result.structured_content or {}
    )
    assert "SQL_TOO_DEEP" in text and "Lantide bug" not in text, text[:500]
