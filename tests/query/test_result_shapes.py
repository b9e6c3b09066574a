"""The query layer's answers have the shapes their TypedDicts declare (issue 31), on each
path that makes them: a preview, a labelled (materialized) result, a tab's run, a Source
Run with tabs that ran, were skipped, failed and were not run, its progress events, the
query history's lines, validation and the preview of a step's SQL."""

from __future__ import annotations

import pytest

from lantide.errors import ErrorDict
from lantide.query.errors import QueryErrorDict
from lantide.query.history import HistoryEntry, run_entry, source_run_entry
from lantide.query.lineage import ProjectLineage
from lantide.query.result_types import NotValid, PreviewAnswer, QueryResult, Validated
from lantide.query.sourcerun import DoneEvent, SourceRunReport, StartEvent, TabEvent
from tests.query.shape_check import assert_shape, problems

P = "q3-churn"


def test_the_checker_finds_a_missing_an_extra_and_a_wrong_key():
    good: ErrorDict = {"error": "X", "message": "m"}
    assert problems(good, ErrorDict) == []
    assert problems({"error": "X"}, ErrorDict) == ["$: ErrorDict lacks 'message'"]
    assert problems({**good, "extra": 1}, ErrorDict) == ["$: ErrorDict has no key 'extra'"]
    assert problems({**good, "hint": 3}, ErrorDict) == ["$.hint: 3 is not a str"]
    assert problems({**good, "position": {"line": "1", "column": 2}}, QueryErrorDict) == [
        "$.position.line: '1' is not an int"
    ]


def test_a_preview_and_a_labelled_result_are_query_results(sample_service):
    preview = sample_service.run_query(
        "SELECT region, count(*) AS n FROM customers GROUP BY region", purpose="regions"
    )
    assert preview["status"] == "ok" and not preview["materialized"]
    assert_shape(preview, QueryResult)
    many = sample_service.run_query("SELECT * FROM range(500)", purpose="many rows")
    assert many["status"] == "ok" and many["truncated"]
    assert_shape(many, QueryResult)
    labelled = sample_service.run_query(
        "SELECT * FROM customers", result_label="all_customers", purpose="kept"
    )
    assert labelled["status"] == "ok" and labelled["cached_table_name"] == "all_customers"
    assert_shape(labelled, QueryResult)


def test_a_tab_run_is_a_query_result_with_its_tab(sample_service):
    result = sample_service.run_sql_tab(P, "clean_orders", purpose="clean")
    assert result["status"] == "ok" and result.get("tab") == "clean_orders"
    assert_shape(result, QueryResult)


def test_source_run_report_events_and_history_lines(sample_service, sample_workspace):
    events: list[object] = []
    first = sample_service.source_run_sql_tab(P, "q3_churn_by_region", progress=events.append)
    assert first["ran"] == 3
    assert_shape(first, SourceRunReport)
    again = sample_service.source_run_sql_tab(P, "q3_churn_by_region")
    assert again["skipped"] == 3
    assert_shape(again, SourceRunReport)
    # a failing upstream tab: failed (with its error), the rest not run
    (sample_workspace / "projects" / P / "sql" / "clean_orders.sql").write_text(
        "SELECT no_such_column FROM orders\n"
    )
    broken = sample_service.source_run_sql_tab(P, "q3_churn_by_region")
    assert [e["status"] for e in broken["tabs"]] == ["failed", "not_run", "not_run"]
    assert_shape(broken, SourceRunReport)

    kinds = {"start": StartEvent, "tab": TabEvent, "done": DoneEvent}
    assert {e["event"] for e in events if isinstance(e, dict)} == set(kinds)
    for event in events:
        assert isinstance(event, dict)
        assert_shape(event, kinds[event["event"]])

    for report in (first, again, broken):
        line = source_run_entry(report, sql="SELECT 1", project=P, tab="q3_churn_by_region")
        assert_shape(line, HistoryEntry)


def test_history_lines_of_a_run_and_of_an_error(sample_service):
    from lantide.query.errors import QueryRefused

    result = sample_service.run_query("SELECT 1 AS one", purpose="one")
    assert result["status"] == "ok"
    assert_shape(run_entry(source="selection", sql="SELECT 1", result=result), HistoryEntry)
    error = QueryRefused("no", code="X")
    line = run_entry(source="sql_tab", sql="DROP TABLE x", tab="t", error=error, duration_ms=3)
    assert line["status"] == "error"
    assert_shape(line, HistoryEntry)


def test_validation_preview_and_lineage(sample_service):
    ok = sample_service.validate_query("SELECT * FROM customers")
    assert ok["ok"] is True
    assert_shape(ok, Validated)
    bad = sample_service.validate_query("SELECT nope FROM customers")
    assert bad["ok"] is False and "position" in bad
    assert_shape(bad, NotValid)
    preview = sample_service.preview_sql("SELECT * FROM range(10)", 4)
    assert preview["row_count"] == 10
    assert_shape(preview, PreviewAnswer)
    assert_shape(sample_service.lineage(P), ProjectLineage)


def test_lineage_with_a_tab_that_does_not_parse(sample_service, sample_workspace):
    (sample_workspace / "projects" / P / "sql" / "broken.sql").write_text("SELEC 1\n")
    graph = sample_service.lineage(P)
    (broken,) = [t for t in graph["tabs"] if t["tab"] == "broken"]
    assert broken.get("error", {}).get("error")
    assert_shape(graph, ProjectLineage)


def test_tab_listing_create_rename_and_delete(sample_service, sample_workspace):
    from lantide.query.tab_service import TabCreated, TabDeleted, TabRenamed, TabRow

    (sample_workspace / "projects" / P / "sql" / "broken.sql").write_text("SELEC 1\n")
    sample_service.run_sql_tab(P, "clean_orders", purpose="clean")
    rows = sample_service.list_sql_tabs(P)
    states = {r["tab"]: r["state"] for r in rows}
    assert states["clean_orders"] == "up_to_date" and states["broken"] == "never_run"
    assert_shape(rows, list[TabRow])
    created = sample_service.create_sql_tab(P, "top_orders", "SELECT * FROM clean_orders")
    assert_shape(created, TabCreated)
    renamed = sample_service.rename_sql_tab(P, "clean_orders", "orders_clean")
    assert renamed["dependents"] and renamed["rewritten"] and "message" in renamed
    assert_shape(renamed, TabRenamed)
    deleted = sample_service.delete_sql_tab(P, "orders_clean")
    assert deleted["cached_table_dropped"]
    assert_shape(deleted, TabDeleted)


def test_the_table_listing(sample_service):
    from lantide.query.listing import TableListing

    sample_service.run_query("SELECT 1 AS one", result_label="kept_one", purpose="kept")
    listing = sample_service.show_tables()
    kinds = {t["kind"] for t in listing["tables"]}
    assert {"data_file", "cached_table"} <= kinds
    assert_shape(listing, TableListing)
    (cached,) = [t for t in listing["tables"] if t["name"] == "kept_one"]
    # the order the agent's show_tables and `lantide tables --json` have always sent
    assert list(cached) == [
        "name",
        "schema",
        "qualified_name",
        "project",
        "tab",
        "step_id",
        "row_count",
        "duration_ms",
        "created_at",
        "cache_kind",
        "kind",
    ]
    assert cached["cache_kind"] == "result" and cached["row_count"] == 1


@pytest.mark.postgres
def test_connection_entry_row_and_test(pg_server, sample_workspace, memory_keyring, open_service):
    from lantide.query.connections import (
        ConnectionEntry,
        ConnectionRow,
        ConnectionTest,
        add_connection,
        list_connections,
        test_connection,
    )
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace, lock=False)
    entry = add_connection(
        ws,
        "shop",
        pg_server.connection_string,
        user=pg_server.user,
        password=pg_server.password,
    )
    assert_shape(entry, ConnectionEntry)
    [row] = list_connections(ws)
    assert row["password"] == "keyring"
    assert_shape(row, ConnectionRow)
    report = test_connection(ws, "shop")
    assert report["ok"]
    assert_shape(report, ConnectionTest)
    from lantide.query.listing import TableListing

    listing = open_service(sample_workspace).show_tables()
    assert any(t["kind"] == "external" for t in listing["tables"])
    assert_shape(listing, TableListing)


def test_schema_relation_info_profile_and_export(sample_service, tmp_path):
    from lantide.query.browse import RelationInfo, TableSchema
    from lantide.query.export import Exported
    from lantide.query.profile import TableProfile

    schema = sample_service.read_schema("customers")
    assert schema["columns"] and "source" in schema
    assert_shape(schema, TableSchema)
    info = sample_service.relation_info("customers")
    assert info["row_count"] > 0
    assert_shape(info, RelationInfo)
    sample_service.run_query(
        "SELECT DATE '2024-01-01' + CAST(i AS INTEGER) AS day, i * 1.5 AS amount, "
        "'k' || (i % 3) AS kind "
        "FROM range(40) t(i)",
        result_label="profiled",
        purpose="profile me",
    )
    profile = sample_service.profile_table("profiled")
    kinds = {c["name"]: c["histogram"]["kind"] for c in profile["columns"]}
    assert kinds == {"day": "numeric", "amount": "numeric", "kind": "top_values"}
    assert_shape(profile, TableProfile)
    exported = sample_service.export_table("profiled", tmp_path / "out.csv")
    assert exported["row_count"] == 40
    assert_shape(exported, Exported)


def test_a_file_rule_set_and_read_back(empty_workspace):
    from lantide.query.file_rules import (
        EncodingSet,
        HeaderRowSet,
        encoding_of,
        header_row_of,
        load_rules,
        set_encoding,
        set_header_row,
    )

    (empty_workspace / "data" / "sales.csv").write_text("title\na,b\n1,2\n", encoding="latin-1")
    header = set_header_row(empty_workspace, "data/sales.csv", 2)
    assert header == {"file": "data/sales.csv", "header_row": 2}
    assert_shape(header, HeaderRowSet)
    encoding = set_encoding(empty_workspace, "data/sales.csv", "latin-1")
    assert encoding["encoding"] == "latin-1"
    assert_shape(encoding, EncodingSet)
    rule = load_rules(empty_workspace)["data/sales.csv"]
    assert (header_row_of(rule), encoding_of(rule)) == (2, "latin-1")
    assert_shape(set_header_row(empty_workspace, "data/sales.csv", None), HeaderRowSet)


def test_a_fan_out_check_and_its_joins(sample_service):
    from lantide.query.checks.fan_out import FanOutJoin
    from lantide.query.checks.rules import Check

    result = sample_service.run_query(
        "SELECT c.segment, count(*) AS customers FROM customers c "
        "JOIN orders o USING (customer_id) GROUP BY 1",
        purpose="fan out",
    )
    assert result["status"] == "ok"
    (fan,) = [c for c in result["checks"] if c["code"] == "JOIN_FAN_OUT"]
    assert_shape(fan, Check)
    joins = fan["evidence"]["joins"]
    assert isinstance(joins, list) and joins
    assert_shape(joins, list[FanOutJoin])
