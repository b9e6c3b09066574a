"""What Source Run keeps while it does less per tab: exact row counts and columns in every
step, one true bookkeeping row per table, the old table after a failure, files edited or
removed while the run is under way, and a hand-made view never replaced by a tab."""

from __future__ import annotations

import duckdb
import pytest

P = "shop"


@pytest.fixture
def shop(empty_workspace):
    """A workspace with 250 items and three tabs: items_clean -> kind_counts -> rare_kinds."""
    from lantide.workspace.model import Workspace

    lines = ["id,kind,price"] + [f"{i},{'abc'[i % 3]},{i * 1.5}" for i in range(250)]
    (empty_workspace / "data" / "items.csv").write_text("\n".join(lines) + "\n")
    Workspace(empty_workspace, {}).create_project(P)
    sql = empty_workspace / "projects" / P / "sql"
    (sql / "items_clean.sql").write_text("SELECT id, kind, price FROM items WHERE price >= 0\n")
    (sql / "kind_counts.sql").write_text(
        "SELECT kind, count(*) AS n, sum(price) AS total FROM items_clean GROUP BY kind\n"
    )
    (sql / "rare_kinds.sql").write_text("SELECT * FROM kind_counts WHERE n < 10\n")
    return empty_workspace


def _statuses(report):
    return [(e["tab"], e["status"]) for e in report["tabs"]]


def _catalog_rows(root):
    """The bookkeeping rows as the database holds them (read by a separate connection)."""
    con = duckdb.connect(str(root / ".lantide" / "cache.duckdb"), read_only=True)
    try:
        return con.execute(
            "SELECT name, fingerprint, row_count FROM _lantide.cached_tables ORDER BY name"
        ).fetchall()
    finally:
        con.close()


def test_steps_carry_exact_row_counts_and_columns_without_a_preview(shop, open_service):
    svc = open_service(shop)
    report = svc.source_run_sql_tab(P, "rare_kinds")
    assert _statuses(report) == [
        ("items_clean", "ran"),
        ("kind_counts", "ran"),
        ("rare_kinds", "ran"),
    ]
    counts = {}
    for entry, step in zip(report["tabs"], report["steps"], strict=True):
        info = svc.relation_info(entry["tab"])
        counts[entry["tab"]] = entry["row_count"]
        assert entry["row_count"] == step["row_count"] == info["row_count"]
        assert step["columns"] == info["columns"] and step["cached_table_name"] == entry["tab"]
        assert step["materialized"] is True and step["materialize_reason"] == "persisted_tab"
        assert not any("preview" in w for w in step["warnings"])  # no rows were shown
    assert counts == {"items_clean": 250, "kind_counts": 3, "rare_kinds": 0}
    assert [c["name"] for c in report["steps"][1]["columns"]] == ["kind", "n", "total"]
    # a single tab run still shows its preview, capped, and says so
    single = svc.run_sql_tab(P, "items_clean")
    assert single["row_count"] == 250 and len(single["preview"]) == 200
    assert single["preview"][0] == [0, "a", 0.0]
    assert any("first 200 of 250" in w for w in single["warnings"])


def test_bookkeeping_in_memory_matches_the_database(shop, open_service):
    svc = open_service(shop)
    svc.source_run_sql_tab(P, "rare_kinds")
    first = _rows_in_memory(svc)
    sql = shop / "projects" / P / "sql" / "items_clean.sql"
    sql.write_text("SELECT id, kind, price FROM items WHERE price >= 100\n")
    report = svc.source_run_sql_tab(P, "rare_kinds")
    assert _statuses(report) == [(t, "ran") for t in ("items_clean", "kind_counts", "rare_kinds")]
    second = _rows_in_memory(svc)
    assert second["items_clean"][2] == 183 and first["items_clean"][2] == 250
    assert all(second[t][1] != first[t][1] for t in second)  # every fingerprint moved
    svc.close()
    svc.workspace.close()
    # the rows on disk are exactly what the service believed: one per table
    assert _catalog_rows(shop) == sorted(second.values())
    reopened = open_service(shop)
    assert _statuses(reopened.source_run_sql_tab(P, "rare_kinds")) == [
        (t, "skipped") for t in ("items_clean", "kind_counts", "rare_kinds")
    ]


def _rows_in_memory(svc):
    return {c.name: (c.name, c.fingerprint, c.row_count) for c in svc.catalog.all_cached()}


def test_a_failed_rerun_keeps_the_table_and_its_fingerprint(shop, open_service):
    svc = open_service(shop)
    svc.source_run_sql_tab(P, "kind_counts")
    before = _rows_in_memory(svc)
    sql = shop / "projects" / P / "sql" / "kind_counts.sql"
    good = sql.read_text()
    sql.write_text("SELECT kind, count(*) AS n, no_such_column FROM items_clean GROUP BY kind\n")
    report = svc.source_run_sql_tab(P, "kind_counts")
    assert _statuses(report) == [("items_clean", "skipped"), ("kind_counts", "failed")]
    assert report["tabs"][1]["error"]["error"] == "BIND_ERROR"
    assert _rows_in_memory(svc) == before
    assert svc.relation_info("kind_counts")["row_count"] == 3
    # back to the SQL that made the table: nothing to recompute
    sql.write_text(good)
    assert _statuses(svc.source_run_sql_tab(P, "kind_counts")) == [
        ("items_clean", "skipped"),
        ("kind_counts", "skipped"),
    ]


def test_a_view_made_by_hand_is_never_replaced(shop, open_service):
    con = duckdb.connect(str(shop / ".lantide" / "cache.duckdb"))
    con.execute("CREATE VIEW handmade AS SELECT 42 AS answer")
    con.close()
    svc = open_service(shop)
    (shop / "projects" / P / "sql" / "handmade.sql").write_text("SELECT 1 AS one\n")
    with pytest.raises(Exception) as info:
        svc.run_sql_tab(P, "handmade")
    assert info.value.code == "RESULT_NAME_TAKEN" and "view" in info.value.message
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT 2 AS two", result_label="handmade")
    assert info.value.code == "RESULT_NAME_TAKEN"
    report = svc.source_run_sql_tab(P, "handmade")
    assert report["tabs"][0]["status"] == "failed"
    assert report["tabs"][0]["error"]["error"] == "RESULT_NAME_TAKEN"
    assert svc.run_query("SELECT answer FROM handmade")["preview"] == [[42]]
    assert svc.catalog.cached("handmade") is None


def test_a_tab_edited_while_the_run_is_under_way_is_recorded_as_it_ran(shop, open_service):
    svc = open_service(shop)
    downstream = shop / "projects" / P / "sql" / "kind_counts.sql"

    def edit_when_first_runs(event):
        if event.get("tab") == "items_clean" and event.get("status") == "running":
            downstream.write_text(
                "SELECT kind, count(*) AS n FROM items_clean WHERE kind <> 'c' GROUP BY kind\n"
            )

    report = svc.source_run_sql_tab(P, "kind_counts", progress=edit_when_first_runs)
    assert _statuses(report) == [("items_clean", "ran"), ("kind_counts", "ran")]
    assert report["tabs"][1]["row_count"] == 2  # the edited SQL ran
    assert [c["name"] for c in report["steps"][1]["columns"]] == ["kind", "n"]
    assert "WHERE kind <> 'c'" in report["steps"][1]["sql"]
    # its fingerprint is the edited SQL's: the next run has nothing to do
    assert _statuses(svc.source_run_sql_tab(P, "kind_counts")) == [
        ("items_clean", "skipped"),
        ("kind_counts", "skipped"),
    ]


def test_a_tab_removed_while_the_run_is_under_way_fails_cleanly(shop, open_service):
    svc = open_service(shop)
    middle = shop / "projects" / P / "sql" / "kind_counts.sql"

    def remove_when_first_runs(event):
        if event.get("tab") == "items_clean" and event.get("status") == "running":
            middle.unlink()

    report = svc.source_run_sql_tab(P, "rare_kinds", progress=remove_when_first_runs)
    assert _statuses(report) == [
        ("items_clean", "ran"),
        ("kind_counts", "failed"),
        ("rare_kinds", "not_run"),
    ]
    assert report["tabs"][1]["error"]["error"] == "TAB_NOT_FOUND"
    assert "kind_counts" in report["tabs"][1]["error"]["message"]


def test_each_tab_is_analysed_once_per_run(shop, open_service, monkeypatch):
    """The tab read again before it runs is the same text: its lineage from the start of
    the run serves (issue 33: it was analysed and resolved a second time per tab)."""
    from lantide.query import lineage

    analysed: list[str] = []
    real = lineage.analyse_tab

    def counting(name, *args, **kwargs):
        analysed.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(lineage, "analyse_tab", counting)
    svc = open_service(shop)
    report = svc.source_run_sql_tab(P, "rare_kinds")
    assert _statuses(report) == [
        ("items_clean", "ran"),
        ("kind_counts", "ran"),
        ("rare_kinds", "ran"),
    ]
    assert sorted(analysed) == ["items_clean", "kind_counts", "rare_kinds"]


def test_the_graph_asks_duckdbs_parser_once_for_all_tabs(shop, open_service, monkeypatch):
    """Source Run analyses every tab before the first one runs; DuckDB's parser (the guard's
    cross-check) is asked about all of them in one query, not once per tab (issue 33), and
    each analysis gets the answer it would have got alone."""
    from lantide.query import guard, guard_functions

    guard._analyse.cache_clear()  # as in a new process: nothing analysed, nothing asked
    monkeypatch.setattr(guard, "_analysed", set())
    monkeypatch.setattr(guard_functions, "_ahead", {})
    asked: list[str] = []
    real = guard_functions._on_a_parser

    def counting(run):
        asked.append("query")
        return real(run)

    monkeypatch.setattr(guard_functions, "_on_a_parser", counting)
    svc = open_service(shop)
    report = svc.source_run_sql_tab(P, "rare_kinds")
    assert [e["status"] for e in report["tabs"]] == ["ran", "ran", "ran"]
    assert asked == ["query"]
    assert guard_functions._ahead == {}  # every answer taken by its analysis
    # nothing changed: the analyses are cached, and DuckDB is not asked again
    again = svc.source_run_sql_tab(P, "rare_kinds")
    assert [e["status"] for e in again["tabs"]] == ["skipped", "skipped", "skipped"]
    assert asked == ["query"]
    assert guard_functions._ahead == {}


def test_answers_asked_ahead_are_the_answers_asked_alone(tmp_path):
    from lantide.query import guard_functions
    from lantide.query.engine import Engine

    bodies = [
        "SELECT * FROM read_csv('data/a.csv')",
        "SELECT upper(name) FROM items",
        "PIVOT items ON kind USING count(*)",  # DuckDB does not serialize it
        "SELECT 1; SELECT 2",  # two statements by DuckDB's reading
    ]
    engine = Engine(tmp_path / "cache.duckdb", allowed_dirs=[tmp_path], search_dir=tmp_path)
    guard_functions._ahead.clear()
    try:
        alone = []
        for body in bodies:
            try:
                alone.append(guard_functions.duckdb_calls(body))
            except ValueError as exc:
                alone.append(str(exc))
        guard_functions.serialize_ahead(bodies)
        assert set(guard_functions._ahead) == set(bodies)
        ahead = []
        for body in bodies:
            try:
                ahead.append(guard_functions.duckdb_calls(body))
            except ValueError as exc:
                ahead.append(str(exc))
        assert guard_functions._ahead == {}
        assert [
            None if a is None else a if isinstance(a, str) else [(c.name, c.paths) for c in a]
            for a in ahead
        ] == [
            None if a is None else a if isinstance(a, str) else [(c.name, c.paths) for c in a]
            for a in alone
        ]
        assert ahead[0] is not None and not isinstance(ahead[0], str)
        assert ahead[0][0].name == "read_csv" and ahead[0][0].paths == ["data/a.csv"]
    finally:
        engine.close()


def _rewrite_in_place(path, text: str) -> None:
    """Overwrite ``path`` in place with ``text`` of the same length and set its
    modification time back to what it was, as ``rsync --inplace -t`` or an archive with
    fixed file times can."""
    import os

    before = path.stat()
    data = text.encode()
    assert len(data) == before.st_size
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def test_a_data_file_rewritten_in_place_with_its_time_set_back_is_read_anew(shop, open_service):
    """Size and modification time are not enough to tell a data file changed: the file's
    status-change time, which nobody can set back, counts too (lantide.query.file_stamps).
    Source Run recomputes the tabs that read it instead of calling the old table up to
    date. (The data file's row count and check facts are kept under the same stamp.)
    Before, all three tabs were "skipped" and items_clean kept the old prices."""
    items = shop / "data" / "items.csv"
    svc = open_service(shop)
    first = svc.source_run_sql_tab(P, "rare_kinds", None)
    assert first["ran"] == 3
    before = svc.run_query("SELECT sum(price) AS total FROM items_clean")["preview"]
    # the same length, other prices: every 1.5 becomes 2.5, and so on
    text = items.read_text()
    changed = text.replace(".5\n", ".7\n")
    assert changed != text
    _rewrite_in_place(items, changed)
    svc.refresh_sources()
    again = svc.source_run_sql_tab(P, "rare_kinds", None)
    assert _statuses(again)[0] == ("items_clean", "ran"), _statuses(again)
    after = svc.run_query("SELECT sum(price) AS total FROM items_clean")["preview"]
    direct = svc.run_query("SELECT sum(price) AS total FROM items")["preview"]
    assert after == direct and after != before
