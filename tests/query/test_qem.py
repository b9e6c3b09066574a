"""run_query / validate_query under the QEM rules: preview, materialization, purpose, hints."""

from __future__ import annotations

import json

import pytest

from lantide.query import qem
from lantide.query.errors import QueryError

STEP_FIELDS = {
    "step_id",
    "at",
    "tool",
    "project",
    "purpose",
    "result_label",
    "sql",
    "row_count",
    "columns",
    "cached_table_name",
    "materialized",
    "materialize_reason",
    "warnings",
    "checks",
    "duration_ms",
}


def test_exploratory_preview_is_capped_and_counts_all_rows(sample_service):
    result = sample_service.run_query("SELECT * FROM orders ORDER BY order_id DESC")
    assert result["row_count"] == 120_000
    assert len(result["preview"]) == 200 and result["truncated"]
    assert result["preview"][0][0] == 120_000  # ORDER BY survives the preview
    assert result["materialized"] is False and result["reason_code"] == "exploratory_preview"
    assert result["cached_table_name"] is None
    assert any("200 of 120,000" in w for w in result["warnings"])
    assert set(result["step"]) == STEP_FIELDS
    assert result["step"]["tool"] == "run_query" and result["step"]["row_count"] == 120_000
    json.dumps(result)


def test_values_are_json_safe(empty_service):
    result = empty_service.run_query(
        "SELECT DATE '2025-07-01' AS d, TIMESTAMP '2025-07-01 10:00:00' AS ts, "
        "12.50::DECIMAL(10,2) AS money, 'nan'::DOUBLE AS x, [1, 2] AS l, {'a': 1} AS s, "
        "INTERVAL 3 DAY AS i, '\\x01'::BLOB AS b, NULL AS n"
    )
    row = result["preview"][0]
    assert row[:4] == ["2025-07-01", "2025-07-01T10:00:00", 12.5, "nan"]
    assert row[4:6] == [[1, 2], {"a": 1}] and row[-1] is None
    json.loads(json.dumps(result, allow_nan=False))


@pytest.mark.parametrize(
    "kwargs,status,sql,expected",
    [
        (
            {"result_label": "Q2 active customers"},
            "planning",
            "SELECT customer_id FROM customers",
            ("labelled_result", "q2_active_customers"),
        ),
        (
            {"purpose": "orders per status"},
            "executing",
            "SELECT status, count(*) FROM orders GROUP BY 1",
            ("executing_step", "step_"),
        ),
        (
            {},
            "planning",
            "SELECT * FROM orders o JOIN customers c USING (customer_id)",
            ("multi_table_join", "result_"),
        ),
        ({}, "planning", "SELECT count(*) FROM orders", ("exploratory_preview", None)),
    ],
)
def test_materialization_reason_codes(
    sample_workspace, open_service, kwargs, status, sql, expected
):
    from lantide.workspace.model import Project

    project = Project.load(sample_workspace, "q3-churn")
    project.approve_plan() if status == "executing" else project.set_status(status)
    svc = open_service(sample_workspace)
    result = svc.run_query(sql, project="q3-churn", **kwargs)
    reason, table = expected
    assert result["reason_code"] == reason
    assert result["step"]["materialize_reason"] == reason
    if table is None:
        assert not result["materialized"] and result["cached_table_name"] is None
    else:
        assert result["materialized"] and result["cached_table_name"].startswith(table)
        again = svc.run_query(
            f'SELECT count(*) FROM "{result["cached_table_name"]}"', purpose="check the row count"
        )
        assert again["preview"] == [[result["row_count"]]]
        listed = {t["name"] for t in svc.show_tables()["tables"] if t["kind"] == "cached_table"}
        assert result["cached_table_name"] in listed


def test_strategy_table_rows_in_order():
    decide = qem.decide_materialization
    base = dict(
        external=False, result_label=None, project_status="planning", tables_read=1, step_id="abc"
    )
    assert decide(tab="t", **{**base, "result_label": "x"}).reason_code == "persisted_tab"
    assert (
        decide(tab=None, **{**base, "external": True, "result_label": "x"}).reason_code
        == "staged_external"
    )
    assert (
        decide(tab=None, **{**base, "result_label": "x", "project_status": "executing"}).reason_code
        == "labelled_result"
    )
    assert (
        decide(tab=None, **{**base, "project_status": "executing", "tables_read": 3}).reason_code
        == "executing_step"
    )
    assert decide(tab=None, **{**base, "tables_read": 2}).reason_code == "multi_table_join"
    assert decide(tab=None, **base) == qem.Materialization(False, "exploratory_preview", None)


def test_purpose_required_while_executing(sample_workspace, open_service):
    from lantide.workspace.model import Project

    Project.load(sample_workspace, "q3-churn").approve_plan()
    svc = open_service(sample_workspace)
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT 1", project="q3-churn")
    assert info.value.code == "PURPOSE_REQUIRED"
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT 1", purpose="x" * 41, project="q3-churn")
    assert info.value.code == "PURPOSE_TOO_LONG"
    with pytest.raises(Exception) as info:
        svc.run_sql_tab("q3-churn", "clean_orders")
    assert info.value.code == "PURPOSE_REQUIRED"
    ok = svc.run_query("SELECT 1 AS one", purpose="x" * 40, project="q3-churn")
    assert ok["step"]["purpose"] == "x" * 40
    # the analyst's own runs are not asked: exploratory steps that say how to count
    mine = svc.run_query("SELECT 1 AS one", project="q3-churn", purpose_required=False)
    assert mine["step"]["purpose"] is None and "NO_PURPOSE" in mine["warning_codes"]
    tab = svc.run_sql_tab("q3-churn", "clean_orders", purpose_required=False)
    assert tab["status"] == "ok" and "NO_PURPOSE" in tab["warning_codes"]
    with pytest.raises(Exception) as info:  # the limit holds for them too
        svc.run_query("SELECT 1", purpose="x" * 41, project="q3-churn", purpose_required=False)
    assert info.value.code == "PURPOSE_TOO_LONG"
    Project.load(sample_workspace, "q3-churn").set_status("planning")
    planning = svc.run_query("SELECT 1", project="q3-churn")
    assert planning["step"]["purpose"] is None
    assert "NO_PURPOSE" not in (planning.get("warning_codes") or [])


THREE_CTES = """
WITH q2 AS (SELECT customer_id FROM orders WHERE order_date BETWEEN '2025-04-01' AND '2025-06-30'),
     q3 AS (SELECT customer_id FROM orders WHERE order_date BETWEEN '2025-07-01' AND '2025-09-30'),
     churned AS (SELECT customer_id FROM q2 EXCEPT SELECT customer_id FROM q3)
SELECT count(*) FROM churned
"""


def test_complexity_hint_blocks_three_ctes_in_run_query_only(sample_service):
    with pytest.raises(Exception) as info:
        sample_service.run_query(THREE_CTES)
    assert info.value.code == "COMPLEXITY_SPLIT_RECOMMENDED"
    assert "SQL tab" in info.value.hint
    valid = sample_service.validate_query(THREE_CTES)
    assert valid["ok"] and valid["hints"][0]["code"] == "COMPLEXITY_SPLIT_RECOMMENDED"
    two = (
        "WITH q2 AS (SELECT customer_id FROM orders WHERE order_date < '2025-07-01'), "
        "q3 AS (SELECT customer_id FROM orders WHERE order_date >= '2025-07-01') "
        "SELECT count(*) FROM (SELECT customer_id FROM q2 EXCEPT SELECT customer_id FROM q3)"
    )
    assert sample_service.run_query(two)["row_count"] == 1
    allowed = sample_service.run_query(THREE_CTES, allow_complex=True)
    assert allowed["preview"][0][0] > 0
    # a persisted tab is the split the hint asks for: it runs, with the hint as a warning
    sample_service.create_sql_tab("q3-churn", "churn_count", THREE_CTES)
    tab = sample_service.run_sql_tab("q3-churn", "churn_count")
    assert tab["preview"] == allowed["preview"]
    assert any("3 CTEs" in w for w in tab["warnings"])


def test_optimization_hint_for_a_join_of_three_entity_tables(sample_service):
    sql = (
        "SELECT p.category, c.segment, sum(o.quantity) FROM orders o "
        "JOIN customers c USING (customer_id) JOIN products p USING (product_id) GROUP BY 1, 2"
    )
    result = sample_service.run_query(sql)
    hint = next(h for h in result["hints"] if h["code"] == "CACHE_UPSTREAM_JOIN")
    assert hint["tables"] == ['"customers"', '"orders"', '"products"']
    assert any("3 source tables" in w for w in result["warnings"])
    sample_service.source_run_sql_tab("q3-churn", "clean_orders")  # a cached upstream tab
    cheaper = sample_service.run_query(
        "SELECT c.segment, count(*) FROM clean_orders o JOIN customers c USING (customer_id) "
        "JOIN products p ON p.product_id = 1 GROUP BY 1"
    )
    assert not [h for h in cheaper["hints"] if h["code"] == "CACHE_UPSTREAM_JOIN"]


def test_reading_its_own_result_is_refused(sample_service):
    sample_service.run_query("SELECT 1 AS x", result_label="mine")
    with pytest.raises(Exception) as info:
        sample_service.run_query("SELECT x + 1 FROM mine", result_label="mine")
    assert info.value.code == "QUERY_READS_OWN_RESULT"
    assert sample_service.run_query("SELECT x + 1 FROM mine", result_label="mine2")["preview"] == [
        [2]
    ]


def test_label_cannot_replace_a_tab_or_a_data_table(sample_service):
    sample_service.run_sql_tab("q3-churn", "clean_orders")
    for label in ("clean_orders", "customers"):
        with pytest.raises(Exception) as info:
            sample_service.run_query("SELECT 1", result_label=label)
        assert info.value.code == "RESULT_NAME_TAKEN"


def test_validate_query_never_returns_rows(sample_service):
    result = sample_service.validate_query("SELECT * FROM orders")
    assert result["ok"] and "preview" not in result and "rows" not in result
    assert [c["name"] for c in result["columns"]][:2] == ["order_id", "customer_id"]
    bad = sample_service.validate_query("SELECT *\nFROM orders\nWHERE nope = 1")
    assert bad["ok"] is False and bad["error"] == "BIND_ERROR"
    assert bad["position"] == {"line": 3, "column": 7}
    refused = sample_service.validate_query("DELETE FROM orders")
    assert refused == {
        "ok": False,
        "error": "QUERY_REFUSED_DML",
        "message": refused["message"],
        "hint": refused["hint"],
    }


def test_run_query_error_position_is_in_the_users_text(sample_service):
    with pytest.raises(Exception) as info:
        sample_service.run_query("  SELECT nope FROM orders")
    assert info.value.code == "BIND_ERROR" and info.value.position == (1, 10)


def test_failed_rerun_keeps_the_previous_cached_table(sample_service):
    sample_service.run_query("SELECT 42 AS answer", result_label="kept")
    with pytest.raises(QueryError):
        sample_service.run_query("SELECT 1 / 0 AS x, error('boom')", result_label="kept")
    assert sample_service.fetch_rows("kept", 0, 5) == [(42,)]


def test_paging_reads_slices(sample_service):
    result = sample_service.run_query(
        "SELECT o.order_id, c.name FROM orders o JOIN customers c "
        "USING (customer_id) ORDER BY o.order_id"
    )
    table = result["cached_table_name"]
    assert [r[0] for r in sample_service.fetch_rows(table, 1000, 3)] == [1001, 1002, 1003]
    assert sample_service.relation_info(table)["row_count"] == result["row_count"]
    assert len(sample_service.fetch_rows("orders", 119_990, 50)) == 10


# A dynamic PIVOT (its columns come from the data) runs in DuckDB as more than one
# statement, so CREATE TABLE AS answers no row count; materializing it crashed.
DYNAMIC_PIVOTS = [
    "PIVOT customers ON segment USING count(*)",
    "PIVOT customers ON segment USING count(*) GROUP BY region",
    "WITH c AS (SELECT * FROM customers) PIVOT c ON segment USING count(*)",
    "SELECT * FROM (PIVOT customers ON segment USING count(*))",
    "DESCRIBE (PIVOT customers ON segment USING count(*))",
    "SUMMARIZE (PIVOT customers ON segment USING count(*))",
    "SELECT * FROM (PIVOT customers ON segment USING count(*)) p "
    "JOIN (PIVOT customers ON region USING count(*)) q USING (customer_id)",
]


@pytest.mark.parametrize("sql", DYNAMIC_PIVOTS)
def test_dynamic_pivot_is_materialized_with_a_label(sample_service, sql):
    expected = sample_service.run_query(sql)  # the preview path: no materialization
    result = sample_service.run_query(sql, result_label="segments")
    assert result["materialized"] and result["cached_table_name"] == "segments"
    assert result["row_count"] == expected["row_count"] >= 1
    assert result["columns"] == expected["columns"] and len(result["preview"]) == len(
        expected["preview"]
    )
    assert result["step"]["row_count"] == result["row_count"]
    again = sample_service.run_query("SELECT count(*) FROM segments")
    assert again["preview"] == [[result["row_count"]]]


def test_dynamic_pivot_in_an_executing_project_and_as_a_tab(sample_workspace, open_service):
    from lantide.query import tabs as tab_files
    from lantide.workspace.model import Project

    project = Project.load(sample_workspace, "q3-churn")
    project.approve_plan()
    svc = open_service(sample_workspace)
    step = svc.run_query(DYNAMIC_PIVOTS[1], project="q3-churn", purpose="segments by region")
    assert step["reason_code"] == "executing_step" and step["row_count"] >= 1
    tab_files.write_new_tab(project, "segment_pivot", DYNAMIC_PIVOTS[1] + "\n")
    tab = svc.run_sql_tab("q3-churn", "segment_pivot", purpose="pivot tab")
    assert tab["cached_table_name"] == "segment_pivot" and tab["row_count"] == step["row_count"]
    check = svc.run_query("SELECT count(*) FROM segment_pivot", project="q3-churn", purpose="check")
    assert check["preview"] == [[tab["row_count"]]]


def test_a_statement_breaking_several_rules_meets_them_in_one_order(sample_workspace, open_service):
    """The order is qem.admit's for every entry point: own result (rule 2) before purpose
    (rule 4) before complexity (rule 5), for run_query as for a SQL tab."""
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    svc = open_service(sample_workspace)
    svc.run_query("SELECT 1 AS x", result_label="mine")
    svc.create_sql_tab("q3-churn", "loop_tab", "SELECT 1 AS x")
    svc.run_sql_tab("q3-churn", "loop_tab")
    project = Project.load(sample_workspace, "q3-churn")
    tab_path(project, "loop_tab").write_text("SELECT x + 1 AS x FROM loop_tab\n")
    project.approve_plan()  # executing: the agent's runs need a purpose
    codes = []
    for run in (
        lambda: svc.run_query("SELECT x + 1 FROM mine", result_label="mine", project="q3-churn"),
        lambda: svc.run_sql_tab("q3-churn", "loop_tab"),
    ):
        with pytest.raises(QueryError) as info:
            run()
        codes.append(info.value.code)
    assert codes == ["QUERY_READS_OWN_RESULT", "QUERY_READS_OWN_RESULT"]
    with pytest.raises(QueryError) as info:  # purpose before complexity
        svc.run_query(THREE_CTES, project="q3-churn")
    assert info.value.code == "PURPOSE_REQUIRED"
