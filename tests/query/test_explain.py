"""EXPLAIN / EXPLAIN ANALYZE as a plan tree from real DuckDB, under the QEM's rules (EXPLAIN
ANALYZE runs the statement, so what a run refuses, it refuses), cancellable."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from lantide.query.errors import QueryError
from lantide.query.explain import parse_plan

SLOW = "SELECT count(*) FROM range(5000000000) a WHERE a.range % 7 = 3"


@pytest.fixture
def shop(empty_workspace: Path, open_service):
    data = empty_workspace / "data"
    lines = ["id,customer,amount"] + [f"{i},{i % 50},{i * 1.5}" for i in range(3000)]
    (data / "orders.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data / "customers.csv").write_text(
        "id,name\n" + "".join(f"{i},c{i}\n" for i in range(50)), encoding="utf-8"
    )
    return open_service(empty_workspace)


JOIN = (
    "SELECT c.name, sum(o.amount) AS total FROM orders o JOIN customers c ON o.customer = c.id "
    "WHERE o.amount > 10 GROUP BY c.name ORDER BY total DESC"
)


def test_explain_gives_the_operator_tree_without_running(shop):
    plan = shop.explain_query(JOIN)
    assert not plan.analyzed and plan.total_seconds is None
    names = [n.operator for n in plan.nodes()]
    assert "HASH_JOIN" in names and "ORDER_BY" in names
    assert "RESULT_COLLECTOR" not in names and "EXPLAIN_ANALYZE" not in names
    join = next(n for n in plan.nodes() if n.operator == "HASH_JOIN")
    assert len(join.children) == 2
    assert "Conditions" in join.extra_info
    assert all(n.seconds is None and n.rows is None for n in plan.nodes())
    assert any(n.estimated_rows for n in plan.nodes())  # the optimizer's estimates
    json.dumps(plan.to_dict())  # plain data for the command line and the agent


def test_explain_analyze_has_rows_and_timings(shop):
    plan = shop.explain_query(JOIN, analyze=True)
    assert plan.analyzed and plan.total_seconds and plan.total_seconds > 0
    nodes = plan.nodes()
    assert all(n.seconds is not None and n.rows is not None for n in nodes)
    top = plan.roots[0]
    assert top.rows == 50  # one row per customer: every customer has an order over 10
    scanned = [n for n in nodes if n.operator in ("TABLE_SCAN", "READ_CSV", "SEQ_SCAN")]
    assert scanned, [n.operator for n in nodes]
    slowest = plan.slowest(3)
    assert slowest and [n.seconds for n in slowest] == sorted(
        (n.seconds for n in slowest), reverse=True
    )
    assert slowest[0].seconds == max(n.seconds or 0 for n in nodes)
    hotspots = plan.hotspots()
    assert hotspots and hotspots[0] is slowest[0]
    assert all(plan.share(n) >= 0.10 for n in hotspots)
    assert all(n in slowest for n in hotspots)


@pytest.mark.parametrize(
    "sql, code",
    [
        ("CREATE TABLE made_by_explain AS SELECT 1 AS x", "QUERY_REFUSED_DDL"),
        ("DELETE FROM orders", "QUERY_REFUSED_DML"),
        ("COPY (SELECT 1) TO 'out.csv'", "QUERY_REFUSED_COPY"),
        ("SELECT * FROM read_csv('/etc/passwd')", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
        ("SELECT getenv('HOME')", "QUERY_REFUSED_FUNCTION"),
        ("SELECT 1; SELECT 2", "QUERY_REFUSED_MULTIPLE_STATEMENTS"),
        ("EXPLAIN ANALYZE SELECT 1", "QUERY_REFUSED_NOT_SELECT"),
    ],
)
def test_explain_analyze_is_refused_what_a_run_is_refused(shop, empty_workspace, sql, code):
    with pytest.raises(QueryError) as info:
        shop.explain_query(sql, analyze=True)
    assert info.value.code == code
    assert not (empty_workspace / "out.csv").exists()
    tables = shop.engine.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'made_by_explain'"
    )
    assert tables[0][0] == 0


def test_a_tab_cannot_explain_a_read_of_its_own_result(shop):
    with pytest.raises(QueryError) as info:
        shop.explain_query("SELECT * FROM totals", analyze=True, tab="totals")
    assert info.value.code == "QUERY_READS_OWN_RESULT"


def test_a_syntax_error_has_its_position_in_the_users_text(shop):
    with pytest.raises(QueryError) as info:
        shop.explain_query("SELECT id\nFROM orders\nWHERE amount >", analyze=True)
    assert info.value.position is not None and info.value.position[0] == 3


def test_explain_analyze_can_be_cancelled(shop):
    outcome = {}

    def body():
        try:
            outcome["plan"] = shop.explain_query(SLOW, analyze=True)
        except QueryError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    deadline = time.monotonic() + 20
    while not shop.engine.busy:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert shop.interrupt() == 1
    thread.join(20)
    assert outcome["error"].code == "QUERY_CANCELLED"


def test_plans_of_duckdb_1x_read_the_same():
    # DuckDB 1.x named the keys operator_name / operator_timing / operator_cardinality
    text = json.dumps(
        {
            "latency": 0.5,
            "children": [
                {
                    "operator_name": "EXPLAIN_ANALYZE",
                    "operator_timing": 0.0,
                    "operator_cardinality": 0,
                    "children": [
                        {
                            "operator_name": "HASH_GROUP_BY",
                            "operator_timing": 0.25,
                            "operator_cardinality": 7,
                            "extra_info": {"Groups": "#0", "Estimated Cardinality": "~9"},
                            "children": [],
                        }
                    ],
                }
            ],
        }
    )
    plan = parse_plan(text, analyzed=True)
    (root,) = plan.roots
    assert (root.operator, root.rows, root.seconds, root.estimated_rows) == (
        "HASH_GROUP_BY",
        7,
        0.25,
        9,
    )
    assert plan.total_seconds == 0.5


def test_hotspots_are_the_slowest_that_take_a_real_share():
    def op(name, seconds, *children):
        return {"name": name, "timing": seconds, "intermediate_rows": 1, "children": list(children)}

    text = json.dumps(
        {"query": {"total_time": 1.0}, "operator": [op("A", 0.01, op("B", 0.6, op("C", 0.3)))]}
    )
    plan = parse_plan(text, analyzed=True)
    assert [n.operator for n in plan.slowest(3)] == ["B", "C", "A"]
    assert [n.operator for n in plan.hotspots()] == ["B", "C"]  # A took 1 %
    assert plan.to_dict()["hotspots"] == ["B", "C"]


def test_a_statement_duckdb_cannot_profile_says_so(shop):
    assert shop.explain_query("VALUES (1), (2)").nodes()  # its plan is there
    with pytest.raises(QueryError) as info:
        shop.explain_query("VALUES (1), (2)", analyze=True)
    assert info.value.code == "EXPLAIN_UNREADABLE" and "profile" in info.value.message


def test_a_plan_that_is_not_json_is_an_error_not_a_crash():
    with pytest.raises(QueryError) as info:
        parse_plan("┌───────┐ ascii art", analyzed=False)
    assert info.value.code == "EXPLAIN_UNREADABLE"


def test_a_remote_tab_is_not_explained_locally(shop):
    with pytest.raises(QueryError) as info:
        shop.explain_query("-- lantide: connection=dw\nSELECT * FROM orders", analyze=True)
    assert info.value.code == "EXPLAIN_REMOTE"
