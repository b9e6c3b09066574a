import json

import duckdb
import pytest

from lantide.workspace.model import Workspace
from lantide.workspace.sample import N_ORDERS, create_sample


def test_sample_has_the_layout_of_design_section_2(sample_workspace):
    root = sample_workspace
    for rel in (
        ".lantide/workspace.json",
        ".lantide/conversations",
        ".lantide/ledger",
        "data/orders.parquet",
        "data/customers.csv",
        "data/products.csv",
        "data/targets.xlsx",
        "projects/q3-churn/project.json",
        "projects/q3-churn/plan.md",
        "projects/q3-churn/plan.annotations.json",
        "projects/q3-churn/report.md",
        "projects/q3-churn/knowledge.md",
    ):
        assert (root / rel).exists(), rel
    project = json.loads((root / "projects/q3-churn/project.json").read_text())
    assert {"name", "status", "plan", "report", "archived"} <= set(project)
    assert project["status"] == "planning"
    tabs = sorted(p.name for p in (root / "projects/q3-churn/sql").iterdir())
    assert tabs == ["clean_orders.sql", "customer_quarters.sql", "q3_churn_by_region.sql"]


def test_sample_data_is_realistic_and_messy(sample_workspace):
    data = sample_workspace / "data"
    con = duckdb.connect()
    n_orders, n_null_discount = con.execute(
        f"SELECT count(*), count(*) FILTER (discount IS NULL) FROM '{data}/orders.parquet'"
    ).fetchone()
    assert n_orders == N_ORDERS >= 100_000 and n_null_discount > 0
    customers = f"read_csv('{data}/customers.csv', all_varchar=true)"
    dup_names, null_emails, formats = con.execute(f"""
        SELECT (SELECT count(*) FROM (
                    SELECT name FROM {customers} GROUP BY name HAVING count(*) > 1)),
               (SELECT count(*) FROM {customers} WHERE email IS NULL),
               (SELECT count(DISTINCT CASE WHEN signup_date ~ '^\\d{{4}}-' THEN 'iso'
                                           WHEN signup_date ~ '^\\d{{2}}/' THEN 'dmy'
                                           WHEN signup_date ~ '^[A-Z]' THEN 'text' END)
                FROM {customers} WHERE signup_date IS NOT NULL)
    """).fetchone()
    assert dup_names > 0 and null_emails > 0 and formats == 3

    from python_calamine import CalamineWorkbook

    book = CalamineWorkbook.from_path(str(data / "targets.xlsx"))
    assert book.sheet_names == ["Regional", "Segments"]
    assert book.get_sheet_by_name("Regional").to_python()[0][:3] == [
        "region",
        "quarter",
        "target_revenue",
    ]


@pytest.mark.slow
def test_sample_is_deterministic(tmp_path):
    a = create_sample(tmp_path / "a")
    b = create_sample(tmp_path / "b")
    for rel in (
        "data/customers.csv",
        "data/products.csv",
        "projects/q3-churn/plan.md",
        "projects/q3-churn/plan.annotations.json",
    ):
        assert (a.root / rel).read_bytes() == (b.root / rel).read_bytes(), rel
    con = duckdb.connect()
    orders_a, orders_b = f"'{a.root}/data/orders.parquet'", f"'{b.root}/data/orders.parquet'"
    diff = con.execute(f"""SELECT count(*) FROM (
        (SELECT * FROM {orders_a} EXCEPT SELECT * FROM {orders_b})
        UNION ALL
        (SELECT * FROM {orders_b} EXCEPT SELECT * FROM {orders_a}))""").fetchone()[0]
    assert diff == 0


def test_sample_plan_marks_match_their_sidecar_spans(sample_workspace):
    project = Workspace.open(sample_workspace, lock=False).project("q3-churn")
    text = project.plan_path.read_text()
    sidecar = json.loads((project.dir / "plan.annotations.json").read_text())
    assert sidecar["version"] == 1 and len(sidecar["annotations"]) == 3
    for entry in sidecar["annotations"]:
        start, end = entry["anchor"]["span"]
        assert text[start:end] == entry["quote"]
        assert f'<mark data-annotation-id="{entry["id"]}">{entry["quote"]}</mark>' in text
        assert entry["status"] == "open"


def test_sample_tabs_run_in_plain_duckdb(sample_workspace):
    """The tabs are real SQL over the sample data, in dependency order."""
    con = duckdb.connect()
    data = sample_workspace / "data"
    con.execute(f"CREATE VIEW orders AS SELECT * FROM '{data}/orders.parquet'")
    con.execute(f"CREATE VIEW customers AS SELECT * FROM '{data}/customers.csv'")
    sql_dir = sample_workspace / "projects/q3-churn/sql"
    for tab in ("clean_orders", "customer_quarters", "q3_churn_by_region"):
        con.execute(f"CREATE TABLE {tab} AS {(sql_dir / (tab + '.sql')).read_text()}")
    rows = con.execute("SELECT region, churned, q2_customers FROM q3_churn_by_region").fetchall()
    assert len(rows) >= 10 and all(0 < churned < total for _, churned, total in rows)
