"""SQL tabs, lineage, cycles and Source Run (skip when unchanged, stop after a failure)."""

from __future__ import annotations

import os

import pytest

from lantide.query.errors import TableNotFound

P = "q3-churn"
CHAIN = ["clean_orders", "customer_quarters", "q3_churn_by_region"]


def _statuses(report):
    return [(e["tab"], e["status"]) for e in report["tabs"]]


def _touch_later(path):
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_lineage_of_the_sample_project(sample_service):
    graph = sample_service.lineage(P)
    assert graph["order"] == CHAIN and graph["cycle"] is None
    tabs = {t["tab"]: t for t in graph["tabs"]}
    assert tabs["customer_quarters"]["reads_tabs"] == ["clean_orders"]
    assert {s["table"] for s in tabs["clean_orders"]["reads_sources"]} == {
        '"orders"',
        '"customers"',
    }
    assert {"from": "customer_quarters", "to": "q3_churn_by_region"} in graph["edges"]


def test_cycle_is_a_clear_error_naming_the_tabs(sample_service):
    sample_service.create_sql_tab(P, "a", "SELECT * FROM b")
    sample_service.create_sql_tab(P, "b", "SELECT * FROM c")
    sample_service.create_sql_tab(P, "c", "SELECT * FROM a")
    graph = sample_service.lineage(P)
    assert sorted(graph["cycle"]) == ["a", "b", "c"] and graph["order"] is None
    with pytest.raises(Exception) as info:
        sample_service.source_run_sql_tab(P, "c")
    assert info.value.code == "LINEAGE_CYCLE"
    assert all(t in info.value.message for t in ("a", "b", "c"))
    # the rest of the project still runs
    assert sample_service.source_run_sql_tab(P, "q3_churn_by_region")["ran"] == 3


def test_source_run_skips_unchanged_and_reruns_the_changed_chain(sample_service, sample_workspace):
    events = []
    first = sample_service.source_run_sql_tab(P, "q3_churn_by_region", progress=events.append)
    assert _statuses(first) == [(t, "ran") for t in CHAIN] and first["ok"]
    assert events[0]["event"] == "start" and events[-1]["event"] == "done"
    assert [e["tab"] for e in events if e.get("status") == "running"] == CHAIN
    second = sample_service.source_run_sql_tab(P, "q3_churn_by_region")
    assert _statuses(second) == [(t, "skipped") for t in CHAIN]
    # the middle tab's SQL changes: it and what is downstream re-run, upstream does not
    middle = sample_workspace / "projects" / P / "sql" / "customer_quarters.sql"
    middle.write_text(middle.read_text().replace("count(*) AS orders", "count(*) AS n_orders"))
    third = sample_service.source_run_sql_tab(P, "q3_churn_by_region")
    assert _statuses(third) == [
        ("clean_orders", "skipped"),
        ("customer_quarters", "ran"),
        ("q3_churn_by_region", "ran"),
    ]
    # a source file changes: the tabs reading it re-run
    _touch_later(sample_workspace / "data" / "customers.csv")
    fourth = sample_service.source_run_sql_tab(P, "q3_churn_by_region")
    assert _statuses(fourth) == [(t, "ran") for t in CHAIN]
    assert [s["tool"] for s in fourth["steps"]] == ["source_run_sql_tab"] * 3


def test_failure_stops_downstream(sample_service, sample_workspace):
    sample_service.source_run_sql_tab(P, "q3_churn_by_region")
    first = sample_workspace / "projects" / P / "sql" / "clean_orders.sql"
    first.write_text("SELECT no_such_column FROM orders\n")
    report = sample_service.source_run_sql_tab(P, "q3_churn_by_region")
    assert _statuses(report) == [
        ("clean_orders", "failed"),
        ("customer_quarters", "not_run"),
        ("q3_churn_by_region", "not_run"),
    ]
    assert report["tabs"][0]["error"]["error"] == "BIND_ERROR"
    assert "clean_orders" in report["tabs"][1]["reason"] and report["ok"] is False
    # the previous cached table is still there
    assert sample_service.relation_info("clean_orders")["row_count"] == 113_852


def test_run_sql_tab_records_a_fingerprint_source_run_trusts(sample_service):
    result = sample_service.run_sql_tab(P, "clean_orders")
    assert (
        result["reason_code"] == "persisted_tab" and result["cached_table_name"] == "clean_orders"
    )
    assert result["tab"] == "clean_orders" and result["step"]["tool"] == "run_sql_tab"
    states = {t["tab"]: t["state"] for t in sample_service.list_sql_tabs(P)}
    assert states == {
        "clean_orders": "up_to_date",
        "customer_quarters": "never_run",
        "q3_churn_by_region": "never_run",
    }
    report = sample_service.source_run_sql_tab(P, "customer_quarters")
    assert _statuses(report) == [("clean_orders", "skipped"), ("customer_quarters", "ran")]


def test_create_rename_delete(sample_service, sample_workspace):
    sql_dir = sample_workspace / "projects" / P / "sql"
    created = sample_service.create_sql_tab(
        P, "big_orders", "SELECT * FROM clean_orders WHERE net_revenue > 1000"
    )
    assert (sql_dir / "big_orders.sql").read_text().startswith("SELECT * FROM clean_orders")
    assert created["lineage"]["reads_tabs"] == ["clean_orders"]
    for bad_name, code in (
        ("big_orders", "TAB_EXISTS"),
        ("../x", "BAD_TAB_NAME"),
        ("customers", "TAB_NAME_TAKEN"),
    ):
        with pytest.raises(Exception) as info:
            sample_service.create_sql_tab(P, bad_name, "SELECT 1")
        assert info.value.code == code
    with pytest.raises(Exception) as info:
        sample_service.create_sql_tab(P, "bad", "DROP TABLE orders")
    assert info.value.code == "QUERY_REFUSED_DDL" and not (sql_dir / "bad.sql").exists()

    sample_service.source_run_sql_tab(P, "q3_churn_by_region")
    renamed = sample_service.rename_sql_tab(P, "clean_orders", "valid_orders")
    assert renamed["cached_table_renamed"] and renamed["dependents"] == [
        "big_orders",
        "customer_quarters",
    ]
    # the readers now read the new name (tests/query/test_rename_rewrites.py has the rules)
    assert [r["tab"] for r in renamed["rewritten"]] == ["big_orders", "customer_quarters"]
    assert "hint" not in renamed and "customer_quarters" in renamed["message"]
    assert (sql_dir / "valid_orders.sql").exists() and not (sql_dir / "clean_orders.sql").exists()
    quarters = (sql_dir / "customer_quarters.sql").read_text()
    assert "valid_orders" in quarters and "FROM clean_orders" not in quarters
    assert sample_service.relation_info("valid_orders")["row_count"] == 113_852
    with pytest.raises(TableNotFound):
        sample_service.relation_info("clean_orders")
    report = sample_service.source_run_sql_tab(P, "customer_quarters")
    assert report["tabs"][-1]["status"] == "ran"  # reads the renamed tab

    deleted = sample_service.delete_sql_tab(P, "big_orders")
    assert deleted["cached_table_dropped"] is False and deleted["dependents"] == []
    assert os.path.exists(deleted["trash_path"]) and not (sql_dir / "big_orders.sql").exists()
    deleted = sample_service.delete_sql_tab(P, "q3_churn_by_region")
    assert deleted["cached_table_dropped"] is True
    names = {t["name"] for t in sample_service.show_tables()["tables"]}
    assert "q3_churn_by_region" not in names and "valid_orders" in names


def test_tab_names_share_one_namespace_across_projects(sample_service, sample_workspace):
    from lantide.workspace.model import Workspace

    sample_service.run_sql_tab(P, "clean_orders")
    Workspace(sample_workspace, {}).create_project("other")
    (sample_workspace / "projects" / "other" / "sql" / "clean_orders.sql").write_text("SELECT 1\n")
    with pytest.raises(Exception) as info:
        sample_service.run_sql_tab("other", "clean_orders")
    assert info.value.code == "TAB_NAME_TAKEN"
    assert sample_service.relation_info("clean_orders")["row_count"] == 113_852


def test_a_tab_may_not_read_its_own_table(sample_service, sample_workspace):
    (sample_workspace / "projects" / P / "sql" / "selfish.sql").write_text(
        "SELECT * FROM selfish\n"
    )
    report = sample_service.lineage(P)
    assert report["cycle"] == ["selfish"]
    with pytest.raises(Exception) as info:
        sample_service.run_sql_tab(P, "selfish")
    assert info.value.code == "QUERY_READS_OWN_RESULT"


def test_a_tab_saved_by_a_windows_editor_runs(sample_service, sample_workspace):
    sql_dir = sample_workspace / "projects" / P / "sql"
    # a byte-order mark and CRLF line ends, as Notepad writes them
    (sql_dir / "from_windows.sql").write_bytes(
        "\ufeff-- regions\r\nSELECT region, count(*) AS n\r\n"
        "FROM customers\r\nGROUP BY 1\r\n".encode()
    )
    result = sample_service.run_sql_tab(P, "from_windows")
    assert result["cached_table_name"] == "from_windows" and result["row_count"] > 1
    assert sample_service.validate_query("\ufeffSELECT 1")["ok"]
