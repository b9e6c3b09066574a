"""Statistical analysis is gated for outside agents too, in every mode and on every path
that runs SQL (a query, a tab, the upstream tabs of a Source Run, a step run again), and the
refusal says what the analyst does in the app (an outside agent has no ask_user).
Driven by the official SDK's client over HTTP."""

from __future__ import annotations

import pytest

from tests.mcp.conftest import call, ledger_lines, pair

CORR = "SELECT corr(quantity, unit_price) AS r FROM orders"
REGR = "SELECT regr_slope(quantity, unit_price) AS slope FROM orders"
AGENT_ONLY_TOOLS = ("ask_user", "activate_analysis")


def _refused_in_the_app_only(result):
    out = result.structured_content
    assert result.is_error, out
    assert out["error"] == "STATISTICS_IN_THE_APP_ONLY", out
    # it tells what the analyst does, and names no tool this client lacks
    assert "in Lantide" in out["hint"] and "chat panel" in out["hint"]
    assert not any(t in out["hint"] + out["message"] for t in AGENT_ONLY_TOOLS)
    return out


@pytest.mark.parametrize("mode", ["observe", "execute", "admin"])
@pytest.mark.parametrize("sql", [CORR, REGR])
def test_a_statistical_query_is_refused_in_every_mode(
    http_server, store, executing_workspace, mode, sql
):
    """The issue's case: an Observe client ran corr and regr_slope with no consent."""
    client = pair(store, executing_workspace, mode)
    result = call(http_server.url, client.token, "run_query", {"sql": sql, "purpose": "fit"})
    out = _refused_in_the_app_only(result)
    assert "corr()" in out["message"] or "regr_slope()" in out["message"]
    assert ledger_lines(executing_workspace, f"mcp-{client.client.id}") == []
    # a descriptive query still runs
    ok = call(
        http_server.url,
        client.token,
        "run_query",
        {"sql": "SELECT avg(unit_price) AS p FROM orders", "purpose": "mean price"},
    )
    assert not ok.is_error, ok.structured_content


def test_tabs_and_their_upstream_tabs_are_inspected(http_server, store, executing_workspace):
    client = pair(store, executing_workspace, "execute")
    for name, sql in (
        ("price_fit", REGR),
        ("fit_report", "SELECT slope * 100 AS slope_pct FROM price_fit"),
    ):
        made = call(http_server.url, client.token, "create_sql_tab", {"name": name, "sql": sql})
        assert not made.is_error, made.structured_content
    _refused_in_the_app_only(
        call(http_server.url, client.token, "run_sql_tab", {"tab": "price_fit", "purpose": "x"})
    )
    # Source Run of the downstream tab: only the upstream tab computes regr_slope()
    run = call(
        http_server.url,
        client.token,
        "source_run_sql_tab",
        {"tab": "fit_report", "purpose": "fit report"},
    )
    out = run.structured_content
    tabs = {t["tab"]: t for t in out["tabs"]}
    assert tabs["price_fit"]["status"] == "failed"
    assert tabs["price_fit"]["error"]["error"] == "STATISTICS_IN_THE_APP_ONLY"
    assert "chat panel" in tabs["price_fit"]["error"]["hint"]
    assert tabs["fit_report"]["status"] == "not_run"
    assert ledger_lines(executing_workspace, f"mcp-{client.client.id}") == []
