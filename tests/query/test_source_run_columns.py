"""A join tab of Source Run knows its input tabs' columns from their own runs (issue 33):
the tab that just ran read its columns with DESCRIBE, and the fan-out analysis of the
join downstream takes them from there instead of describing each input again."""

from __future__ import annotations

import pytest

P = "shop"
# unqualified names: only the inputs' columns tell which side each one reads
JOIN = (
    'SELECT "Segment Name", sum(credit) AS credit FROM cust '
    "JOIN ords USING (customer_id) GROUP BY 1\n"
)


@pytest.fixture
def shop(empty_workspace):
    """20 customers with 3 orders each; tabs cust and ords, and seg_counts joining them."""
    from lantide.workspace.model import Workspace

    data = empty_workspace / "data"
    customers = ["customer_id,segment"] + [f"{i},{'ab'[i % 2]}" for i in range(20)]
    orders = ["order_id,customer_id,amount"] + [f"{i},{i % 20},{i * 2.5}" for i in range(60)]
    (data / "customers.csv").write_text("\n".join(customers) + "\n")
    (data / "orders.csv").write_text("\n".join(orders) + "\n")
    Workspace(empty_workspace, {}).create_project(P)
    sql = empty_workspace / "projects" / P / "sql"
    (sql / "cust.sql").write_text(
        'SELECT customer_id, segment AS "Segment Name", customer_id * 10 AS credit FROM customers\n'
    )
    (sql / "ords.sql").write_text("SELECT order_id, customer_id, amount FROM orders\n")
    (sql / "seg_counts.sql").write_text(JOIN)
    return empty_workspace


@pytest.fixture
def described(monkeypatch):
    """The DESCRIBE statements the facts store runs to learn a relation's columns."""
    from lantide.query.checks.facts import RelationFacts

    seen: list[str] = []
    real = RelationFacts.columns

    class Recording:
        def __init__(self, cur):
            self._cur = cur

        def execute(self, sql, *args):
            seen.append(sql)
            self._cur.execute(sql, *args)
            return self

        def __getattr__(self, name):
            return getattr(self._cur, name)

    def columns(self, cur, rel):
        return real(self, Recording(cur), rel)

    monkeypatch.setattr(RelationFacts, "columns", columns)
    return seen


def _describe(svc, table):
    """The column names DuckDB's DESCRIBE gives for ``table``."""
    return [r[0] for r in svc.engine.execute(f'DESCRIBE "{table}"')]


def _fan_out(entry) -> dict:
    found = [c for c in entry["checks"] if c["code"] == "JOIN_FAN_OUT"]
    assert found, [c["code"] for c in entry["checks"]]
    return found[0]


def test_a_join_tab_does_not_describe_the_tabs_that_just_ran(shop, open_service, described):
    svc = open_service(shop)
    report = svc.source_run_sql_tab(P, "seg_counts")
    assert [(e["tab"], e["status"]) for e in report["tabs"]] == [
        ("cust", "ran"),
        ("ords", "ran"),
        ("seg_counts", "ran"),
    ]
    fan = _fan_out(report["tabs"][2])
    assert fan["severity"] == "error"
    assert "sums rows of cust, but the join with ords repeats them" in fan["message"]
    assert described == []
    store = svc._backend.check_facts
    assert store._columns["cached:cust"][1] == dict.fromkeys(_describe(svc, "cust"), "VARCHAR")
    assert list(store._columns["cached:cust"][1]) == ["customer_id", "Segment Name", "credit"]


def test_a_rerun_input_is_known_by_its_new_columns(shop, open_service, described):
    """The join reads an input tab changed since the last run: the columns of its new
    version qualify the join (a stale list would miss ``region`` and the fan-out)."""
    svc = open_service(shop)
    assert svc.source_run_sql_tab(P, "seg_counts")["ok"]
    sql = shop / "projects" / P / "sql"
    (sql / "cust.sql").write_text(
        'SELECT customer_id, segment AS "Segment Name", customer_id * 10 AS credit, '
        "segment || '!' AS region FROM customers\n"
    )
    (sql / "seg_counts.sql").write_text(JOIN.replace('"Segment Name"', "region"))
    report = svc.source_run_sql_tab(P, "seg_counts")
    assert [(e["tab"], e["status"]) for e in report["tabs"]] == [
        ("cust", "ran"),
        ("ords", "skipped"),
        ("seg_counts", "ran"),
    ]
    assert _fan_out(report["tabs"][2])["severity"] == "error"
    assert described == []
    assert list(svc._backend.check_facts._columns["cached:cust"][1]) == _describe(svc, "cust")


def test_a_table_nobody_just_wrote_is_still_described(shop, open_service, described):
    """A second process knows nothing of the first one's runs: it describes the inputs,
    and the fan-out comes out the same."""
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    ws = Workspace.open(shop)
    with QueryService(ws, QuerySettings()) as first:
        assert first.source_run_sql_tab(P, "seg_counts")["ok"]
    ws.close()
    assert described == []
    svc = open_service(shop)
    result = svc.run_query(JOIN)
    assert [c["code"] for c in result["checks"]][:1] == ["JOIN_FAN_OUT"]
    assert sorted(s for s in described if s.startswith("DESCRIBE")) == [
        'DESCRIBE "cust"',
        'DESCRIBE "ords"',
    ]
