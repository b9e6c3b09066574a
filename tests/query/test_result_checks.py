"""Checks on every result (issue 12), on the real sample workspace and real DuckDB."""

from __future__ import annotations

import pytest

FAN_OUT_SQL = (
    "SELECT c.segment, count(*) AS customers FROM customers c "
    "JOIN orders o USING (customer_id) GROUP BY 1"
)


def codes(result) -> list[str]:
    return [c["code"] for c in result["checks"]]


def check(result, code) -> dict:
    found = [c for c in result["checks"] if c["code"] == code]
    assert found, f"{code} not in {codes(result)}"
    return found[0]


def scalar(svc, sql):
    return svc.run_query(sql)["preview"][0][0]


def test_the_issue_case_is_caught_with_join_side_and_repeat(sample_service):
    result = sample_service.run_query(FAN_OUT_SQL)
    fan = check(result, "JOIN_FAN_OUT")
    assert fan["severity"] == "error"
    # the number really is distorted: 2,000 customers exist, the column adds up to far more
    assert (
        sum(row[1] for row in result["preview"])
        > 2_000
        == scalar(sample_service, "SELECT count(*) FROM customers")
    )
    evidence = fan["evidence"]
    assert evidence["repeated_side"] == "customers c"
    (join,) = evidence["joins"]
    assert join["by"] == "orders o" and join["key"] == ["customer_id"]
    assert "customers c" in join["join"] and "orders o" in join["join"]
    most = scalar(
        sample_service, "SELECT max(n) FROM (SELECT count(*) AS n FROM orders GROUP BY customer_id)"
    )
    assert join["max_repeat"] == evidence["max_repeat"] == most
    assert join["distinct_keys"] == scalar(
        sample_service, "SELECT count(DISTINCT customer_id) FROM orders"
    )
    assert "COUNT(*) AS customers" in fan["message"] and f"{most:,} times" in fan["message"]
    assert result["step"]["checks"] == result["checks"]


@pytest.mark.parametrize(
    "sql",
    [
        # aggregates duplication cannot distort
        "SELECT c.segment, count(DISTINCT c.customer_id) AS customers FROM customers c "
        "JOIN orders o USING (customer_id) GROUP BY 1",
        "SELECT c.segment, min(c.signup_date) AS first_signup, max(c.customer_id) AS last_id, "
        "any_value(c.name) AS someone "
        "FROM customers c JOIN orders o USING (customer_id) GROUP BY 1",
        # the many side's own measure over a join to unique customers
        "SELECT c.segment, sum(o.quantity * o.unit_price) AS revenue, count(*) AS orders "
        "FROM customers c JOIN orders o USING (customer_id) GROUP BY 1",
        "SELECT c.region, sum(o.quantity) AS units FROM orders o, customers c "
        "WHERE o.customer_id = c.customer_id GROUP BY 1",
        # orders grouped per customer before the join
        "SELECT c.segment, count(*) AS customers, sum(x.n) AS orders FROM customers c JOIN "
        "(SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id) x "
        "ON x.customer_id = c.customer_id GROUP BY 1",
        "WITH per_customer AS (SELECT customer_id, sum(quantity) AS units FROM orders GROUP BY 1) "
        "SELECT c.segment, count(c.customer_id) AS customers, sum(p.units) AS units "
        "FROM customers c JOIN per_customer p USING (customer_id) GROUP BY 1",
        # the repeated side collapsed by a GROUP BY before the count
        "SELECT segment, count(*) AS customers FROM (SELECT c.customer_id, c.segment FROM "
        "customers c JOIN orders o USING (customer_id) GROUP BY 1, 2) GROUP BY 1",
        # a sum that reads the side that is not repeated, per its own row
        "SELECT p.category, sum(o.quantity * p.list_price) AS list_value FROM orders o "
        "JOIN products p USING (product_id) GROUP BY 1",
        # customers joined to the orders of one day: unique among the rows the join keeps
        "SELECT c.segment, count(*) AS customers FROM customers c JOIN orders o "
        "ON o.customer_id = c.customer_id AND o.order_id = 17 GROUP BY 1",
        "SELECT c.segment, sum(c.customer_id) AS ids FROM customers c, orders o "
        "WHERE o.customer_id = c.customer_id AND o.order_id IN (3, 4) AND c.customer_id > 0 "
        "GROUP BY 1",
        # a conditional count of order rows, not of customers
        "SELECT c.segment, sum(CASE WHEN c.is_test_account THEN 1 ELSE 0 END) AS test_orders "
        "FROM customers c JOIN orders o USING (customer_id) GROUP BY 1",
    ],
)
def test_no_fan_out_where_duplication_cannot_distort(sample_service, sql):
    result = sample_service.run_query(sql)
    assert "JOIN_FAN_OUT" not in codes(result) and "TOTAL_EXCEEDS_SOURCE" not in codes(result), (
        result["checks"]
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT c.segment, count(c.customer_id) AS n FROM customers c, orders o "
        "WHERE c.customer_id = o.customer_id GROUP BY 1",
        # a derived table that only projects does not hide the repeated side
        "SELECT segment, sum(cid) AS ids FROM (SELECT c.segment, c.customer_id AS cid "
        "FROM customers c JOIN orders o ON o.customer_id = c.customer_id) GROUP BY 1",
        "SELECT c.region, avg(c.customer_id) AS mean_id, count(*) AS customer_count "
        "FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id GROUP BY 1",
    ],
)
def test_fan_out_fires_on_comma_joins_derived_tables_and_left_joins(sample_service, sql):
    fan = check(sample_service.run_query(sql), "JOIN_FAN_OUT")
    assert fan["evidence"]["repeated_side"] == "customers c"
    assert fan["evidence"]["joins"][0]["key"] == ["customer_id"]


def test_total_exceeds_source_compares_with_the_base_table(sample_service):
    result = sample_service.run_query(
        "SELECT sum(p.list_price) AS list_total FROM products p JOIN orders o USING (product_id)"
    )
    total = check(result, "TOTAL_EXCEEDS_SOURCE")
    assert total["severity"] == "error"
    base = scalar(sample_service, "SELECT sum(list_price) FROM products")
    assert total["evidence"]["source_total"] == pytest.approx(base)
    assert total["evidence"]["result_total"] == pytest.approx(result["preview"][0][0])
    assert total["evidence"]["result_total"] > base
    assert "JOIN_FAN_OUT" in codes(result)
    assert codes(result)[:2] == ["JOIN_FAN_OUT", "TOTAL_EXCEEDS_SOURCE"]  # errors first


def test_key_facts_belong_to_one_version_of_the_file(sample_workspace, open_service):
    sql = (
        "SELECT c.segment, sum(o.quantity) AS units FROM orders o "
        "JOIN customers c USING (customer_id) GROUP BY 1"
    )
    svc = open_service(sample_workspace)
    assert "JOIN_FAN_OUT" not in codes(svc.run_query(sql))
    stored = svc.engine.execute(
        "SELECT subject, fact FROM _lantide.check_facts WHERE fact LIKE 'keys:%'"
    )
    assert ('data:"customers"', "keys:customer_id") in stored
    # customer 7 appears twice now: the same statement repeats order rows
    path = sample_workspace / "data" / "customers.csv"
    lines = path.read_text().splitlines()
    duplicate = next(line for line in lines[1:] if line.startswith("7,"))
    path.write_text("\n".join(lines + [duplicate]) + "\n")
    fan = check(svc.run_query(sql), "JOIN_FAN_OUT")
    assert fan["evidence"]["repeated_side"] == "orders o"
    assert fan["evidence"]["joins"][0]["max_repeat"] == 2


def test_row_facts_of_a_preview_and_of_a_cached_table(sample_service):
    complete = sample_service.run_query(
        "SELECT 1 AS a, NULL::INTEGER AS nothing, 'nan'::DOUBLE AS bad, 1.0 / 0 AS worse"
    )
    assert check(complete, "ALL_NULL_COLUMN")["evidence"]["columns"] == ["nothing"]
    assert check(complete, "NAN_OR_INF")["evidence"]["columns"] == {"bad": 1, "worse": 1}
    # only the first 200 of 1,000 rows crossed into Python: a NaN seen there is certain,
    # a column NULL there is not known to be NULL further down
    partial = sample_service.run_query(
        "SELECT range AS i, CASE WHEN range = 5 THEN 'nan'::DOUBLE END AS x, "
        "CASE WHEN range > 500 THEN 1 END AS later FROM range(1000)"
    )
    assert partial["truncated"] and not partial["materialized"]
    assert "ALL_NULL_COLUMN" not in codes(partial)
    assert "first 200 rows" in check(partial, "NAN_OR_INF")["message"]
    # the same statement materialized: every row is looked at, in DuckDB
    labelled = sample_service.run_query(
        "SELECT range AS i, CASE WHEN range > 5000 THEN 1 END AS never, "
        "CASE WHEN range = 900 THEN 'inf'::DOUBLE END AS late FROM range(1000)",
        result_label="facts_of_all_rows",
    )
    assert labelled["materialized"]
    assert check(labelled, "ALL_NULL_COLUMN")["evidence"] == {
        "columns": ["never"],
        "row_count": 1000,
    }
    assert check(labelled, "NAN_OR_INF")["evidence"]["columns"] == {"late": 1}


def test_descriptions_of_tables_get_no_checks(sample_service):
    for sql in ("DESCRIBE customers", "SUMMARIZE products"):
        assert sample_service.run_query(sql)["checks"] == []


def test_empty_result(sample_service):
    result = sample_service.run_query("SELECT * FROM customers WHERE customer_id < 0")
    assert check(result, "EMPTY_RESULT")["severity"] == "warning"
    assert "ALL_NULL_COLUMN" not in codes(result)


def test_division_by_zero_risk(sample_service):
    risky = sample_service.run_query(
        "SELECT status, sum(quantity) / sum(refund_amount) AS units_per_refund "
        "FROM orders GROUP BY status"
    )
    div = check(risky, "DIVISION_BY_ZERO_RISK")
    assert div["severity"] == "warning" and div["evidence"]["column"] == "units_per_refund"
    assert div["evidence"]["null_or_nonfinite_rows"] == 2  # completed and cancelled: no refunds
    guarded = sample_service.run_query(
        "SELECT status, sum(quantity) / NULLIF(sum(refund_amount), 0) AS units_per_refund, "
        "count(*) FILTER (WHERE discount > 0) / count(*) AS discounted_share "
        "FROM orders GROUP BY status"
    )
    assert "DIVISION_BY_ZERO_RISK" not in codes(guarded)
    unguarded_clean = sample_service.run_query(
        "SELECT segment, count(*) / count(region) AS per_region FROM customers GROUP BY 1"
    )
    assert check(unguarded_clean, "DIVISION_BY_ZERO_RISK")["severity"] == "info"


def test_implausible_ratios(sample_service):
    counted = sample_service.run_query(
        "SELECT status, count(*) AS refund_rate FROM orders GROUP BY status"
    )
    ratio = check(counted, "IMPLAUSIBLE_RATIO")
    assert ratio["evidence"]["column"] == "refund_rate" and ratio["evidence"]["max"] > 100
    fine = sample_service.run_query(
        "SELECT status, round(count(*) / (SELECT count(*) FROM orders), 3) AS order_share, "
        "round(100.0 * count(*) / (SELECT count(*) FROM orders), 1) AS order_pct, "
        "avg(discount) AS discount_growth FROM orders GROUP BY status"
    )
    assert "IMPLAUSIBLE_RATIO" not in codes(fine)
    spike = sample_service.run_query(
        "SELECT * FROM (VALUES (1, 0.010), (2, 0.012), (3, 0.011), (4, 0.013), (5, 40.0)) "
        "AS t(id, conversion_pct)"
    )
    assert "median" in check(spike, "IMPLAUSIBLE_RATIO")["message"]


def test_row_count_drift_across_processes(empty_workspace, open_service):
    data = empty_workspace / "data" / "events.csv"
    data.write_text("id,kind\n" + "".join(f"{i},a\n" for i in range(100)))
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    ws = Workspace.open(empty_workspace)
    with QueryService(ws, QuerySettings()) as svc:
        sql = "SELECT * FROM events"
        assert "ROW_COUNT_DRIFT" not in codes(svc.run_query(sql))
        assert "ROW_COUNT_DRIFT" not in codes(svc.run_query(sql + "  "))  # same step, same count
    ws.close()
    data.write_text("id,kind\n" + "".join(f"{i},a\n" for i in range(12)))
    again = open_service(empty_workspace)  # a new engine: the count came from the database
    drift = check(again.run_query("select *\nfrom events"), "ROW_COUNT_DRIFT")
    assert drift["evidence"]["previous_row_count"] == 100 and drift["evidence"]["row_count"] == 12
    assert "ROW_COUNT_DRIFT" not in codes(again.run_query("SELECT id FROM events"))  # another step


def test_row_count_drift_of_a_tab(empty_workspace, open_service):
    from lantide.workspace.model import Workspace

    Workspace(empty_workspace, {}).create_project("p")
    data = empty_workspace / "data" / "events.csv"
    data.write_text("id\n" + "".join(f"{i}\n" for i in range(100)))
    svc = open_service(empty_workspace)
    svc.create_sql_tab("p", "all_events", "SELECT * FROM events")
    assert "ROW_COUNT_DRIFT" not in codes(svc.run_sql_tab("p", "all_events"))
    data.write_text("id\n" + "".join(f"{i}\n" for i in range(10)))
    drift = check(svc.run_sql_tab("p", "all_events"), "ROW_COUNT_DRIFT")
    assert drift["evidence"]["previous_row_count"] == 100 and drift["evidence"]["row_count"] == 10
    # the tab's SQL changed: another step, nothing to compare with
    (empty_workspace / "projects" / "p" / "sql" / "all_events.sql").write_text(
        "SELECT * FROM events, range(30)"
    )
    assert "ROW_COUNT_DRIFT" not in codes(svc.run_sql_tab("p", "all_events"))


def test_row_count_drift_factor_is_a_setting(empty_workspace, open_service):
    data = empty_workspace / "data" / "events.csv"
    data.write_text("id\n" + "".join(f"{i}\n" for i in range(100)))
    svc = open_service(empty_workspace, row_count_drift_factor=20)
    assert "ROW_COUNT_DRIFT" not in codes(svc.run_query("SELECT * FROM events"))
    data.write_text("id\n" + "".join(f"{i}\n" for i in range(12)))  # 8x fewer: under 20x
    assert "ROW_COUNT_DRIFT" not in codes(svc.run_query("SELECT * FROM events"))
    data.write_text("id\n" + "".join(f"{i}\n" for i in range(400)))  # 33x more
    drift = check(svc.run_query("SELECT * FROM events"), "ROW_COUNT_DRIFT")
    assert drift["evidence"] == {"previous_row_count": 12, "row_count": 400, "factor": 20.0}


def test_sql_tabs_and_source_run_carry_checks(sample_service):
    report = sample_service.source_run_sql_tab("q3-churn", "q3_churn_by_region")
    assert report["ok"]
    for entry in report["tabs"]:
        assert isinstance(entry["checks"], list) and entry["step"]["checks"] == entry["checks"]
        # the sample's own tabs are correct: nothing of error severity
        assert [c for c in entry["checks"] if c["severity"] == "error"] == []
    tab = sample_service.run_sql_tab("q3-churn", "clean_orders")
    assert "JOIN_FAN_OUT" not in codes(tab)
    assert tab["step"]["checks"] == tab["checks"]


def test_a_check_that_cannot_be_computed_never_fails_the_query(sample_service, monkeypatch):
    from lantide.query.checks import fan_out

    def broken(self):
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(fan_out.FanOutAnalysis, "fan_out_checks", broken)
    result = sample_service.run_query(FAN_OUT_SQL)
    assert result["status"] == "ok" and result["row_count"] == 3
    assert "JOIN_FAN_OUT" not in codes(result)


def test_lantide_sql_prints_checks_as_text_and_json(sample_workspace, run_cli):
    text = run_cli("sql", sample_workspace, FAN_OUT_SQL)
    assert text.returncode == 0, text.stderr
    (line,) = [x for x in text.stdout.splitlines() if x.startswith("check ")]
    assert line.startswith(
        "check error JOIN_FAN_OUT: COUNT(*) AS customers counts rows of customers"
    )
    import json

    as_json = run_cli("sql", sample_workspace, FAN_OUT_SQL, "--json")
    result = json.loads(as_json.stdout)
    assert [c["code"] for c in result["checks"]] == ["JOIN_FAN_OUT"]
    assert set(result["checks"][0]) == {"code", "severity", "message", "evidence"}
    clean = run_cli("sql", sample_workspace, "SELECT count(*) AS n FROM customers")
    assert "check " not in clean.stdout


def test_a_rate_computed_as_a_fraction_is_not_taken_for_a_percent(sample_service):
    """The issue's case: a column named like a rate holding 2.27 was read as 2.27 % and
    not flagged. Computed as a ratio with no factor of 100 it is a fraction: over 1 fires."""
    ratio = "FROM (VALUES (227.0, 100.0)) AS t(converted, visits)"
    computed = sample_service.run_query(
        f"SELECT sum(converted) / sum(visits) AS conversion_rate {ratio}"
    )
    assert computed["preview"] == [[2.27]]
    flagged = check(computed, "IMPLAUSIBLE_RATIO")
    assert (
        flagged["evidence"]["computed_as_ratio"] is True and "factor of 100" in flagged["message"]
    )
    rounded = sample_service.run_query(
        f"SELECT round(sum(converted) / sum(visits), 2) AS conversion_rate {ratio}"
    )
    assert "IMPLAUSIBLE_RATIO" in codes(rounded)
    # scaled to percent, or a stored value the statement does not compute: 2.27 may be percent
    for sql in (
        f"SELECT 100.0 * sum(converted) / sum(visits) / 100 AS conversion_rate {ratio}",
        f"SELECT round(sum(converted) * 100 / sum(visits) / 100, 2) AS refund_rate {ratio}",
        "SELECT rate AS conversion_rate FROM (VALUES (2.27), (1.5)) AS t(rate)",
        f"SELECT sum(converted) / sum(visits) / 100 AS conversion_rate {ratio}",
    ):
        assert "IMPLAUSIBLE_RATIO" not in codes(sample_service.run_query(sql)), sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT c.customer_id, c.segment, sum(c.customer_id) OVER (PARTITION BY c.segment) "
        "AS segment_ids FROM customers c JOIN orders o USING (customer_id)",
        "SELECT DISTINCT c.segment, count(*) OVER (PARTITION BY c.segment) AS customers "
        "FROM customers c JOIN orders o USING (customer_id)",
    ],
)
def test_a_window_sum_over_a_fan_out_join_fires(sample_service, sql):
    """The issue's case: ``sum() over`` a join that repeats the summed side was not flagged."""
    fan = check(sample_service.run_query(sql), "JOIN_FAN_OUT")
    assert fan["evidence"]["repeated_side"] == "customers c"
    assert "OVER" in fan["message"]


def test_a_window_over_the_side_that_is_not_repeated_does_not_fire(sample_service):
    result = sample_service.run_query(
        "SELECT o.order_id, sum(o.quantity) OVER (PARTITION BY c.segment) AS segment_units "
        "FROM customers c JOIN orders o USING (customer_id)"
    )
    assert "JOIN_FAN_OUT" not in codes(result), result["checks"]
