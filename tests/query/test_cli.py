"""The command line as a user runs it: real subprocesses on a real sample workspace."""

from __future__ import annotations

import json


def test_sample_tabs_source_run_then_up_to_date(sample_workspace, run_cli):
    first = run_cli("tab", "source-run", sample_workspace, "q3-churn", "q3_churn_by_region")
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [
        ["ran", "clean_orders"],
        ["ran", "customer_quarters"],
        ["ran", "q3_churn_by_region"],
    ]
    second = run_cli(
        "tab", "source-run", sample_workspace, "q3-churn", "q3_churn_by_region", "--json"
    )
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    assert [(t["tab"], t["status"], t["reason"]) for t in report["tabs"]] == [
        ("clean_orders", "skipped", "up to date"),
        ("customer_quarters", "skipped", "up to date"),
        ("q3_churn_by_region", "skipped", "up to date"),
    ]


def test_sql_prints_preview_and_json(sample_workspace, run_cli):
    text = run_cli(
        "sql",
        sample_workspace,
        "SELECT segment, count(*) AS n FROM customers GROUP BY 1 ORDER BY 1",
    )
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].split("|")[0].strip() == "segment"
    assert "(3 rows)" in text.stdout
    out = run_cli("sql", sample_workspace, "SELECT count(*) AS n FROM orders", "--json")
    result = json.loads(out.stdout)
    assert result["preview"] == [[120000]] and result["reason_code"] == "exploratory_preview"
    labelled = run_cli("sql", sample_workspace, "SELECT 1 AS x", "--label", "one", "--json")
    assert json.loads(labelled.stdout)["cached_table_name"] == "one"


def test_refusal_exits_1_with_advice(sample_workspace, run_cli):
    out = run_cli("sql", sample_workspace, "DROP TABLE orders")
    assert out.returncode == 1
    assert "DROP is not allowed" in out.stderr and "Delete a SQL tab" in out.stderr


def test_tab_run_and_failed_source_run_exit_codes(sample_workspace, run_cli):
    out = run_cli("tab", "run", sample_workspace, "q3-churn", "clean_orders", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["cached_table_name"] == "clean_orders"
    (sample_workspace / "projects" / "q3-churn" / "sql" / "customer_quarters.sql").write_text(
        "SELECT oops FROM clean_orders\n"
    )
    out = run_cli("tab", "source-run", sample_workspace, "q3-churn", "q3_churn_by_region")
    assert out.returncode == 1
    assert (
        "failed   customer_quarters" in out.stdout and "not_run  q3_churn_by_region" in out.stdout
    )


def test_tables_schema_and_lineage_commands(sample_workspace, run_cli):
    out = run_cli("tables", sample_workspace, "--json")
    listed = {t["qualified_name"]: t for t in json.loads(out.stdout)["tables"]}
    assert listed['"targets"."Regional"']["row_count"] == 40
    assert listed['"customers"']["row_count"] == 2000
    out = run_cli("tables", sample_workspace)
    orders_line = next(line for line in out.stdout.splitlines() if line.startswith('"orders"'))
    assert "120,000" in orders_line
    out = run_cli("schema", sample_workspace, "products")
    assert out.stdout.startswith('CREATE TABLE "products" ("product_id" BIGINT')
    out = run_cli("tab", "lineage", sample_workspace, "q3-churn")
    assert "order: clean_orders -> customer_quarters -> q3_churn_by_region" in out.stdout


def test_an_unexpected_error_is_one_line_not_a_traceback(sample_workspace, monkeypatch, capsys):
    """A bug that escapes as a plain exception (the guard's AttributeError on read_text was
    one) prints one line naming it; --debug shows the traceback."""
    import pytest

    from lantide.cli import main as cli_main
    from lantide.cli import query_commands

    def broken(args):
        raise AttributeError("'str' object has no attribute 'find_all'")

    monkeypatch.setattr(query_commands, "run_sql", broken)
    assert cli_main.main(["sql", str(sample_workspace), "SELECT 1"]) == 1
    err = capsys.readouterr().err
    assert "internal error: AttributeError" in err and "--debug" in err
    assert "Traceback" not in err
    with pytest.raises(AttributeError):
        cli_main.main(["--debug", "sql", str(sample_workspace), "SELECT 1"])


def test_a_refusal_prints_its_code(sample_workspace, run_cli):
    out = run_cli("sql", sample_workspace, "SELECT * FROM checkpoint()")
    assert out.returncode == 1 and "code: QUERY_REFUSED_FUNCTION" in out.stderr
