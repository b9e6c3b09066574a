"""Two query services on one workspace in one process share its engine, catalog and data
sources (DuckDB allows one configured instance per file), reference counted."""

from __future__ import annotations

import threading

import duckdb
import pytest

from lantide.query import QueryService, backend
from lantide.workspace.model import Workspace
from lantide.workspace.settings import QuerySettings


@pytest.fixture
def ws(empty_workspace):
    (empty_workspace / "data" / "items.csv").write_text("id,kind\n1,a\n2,b\n3,a\n")
    workspace = Workspace.open(empty_workspace)
    yield workspace
    workspace.close()


def test_a_second_service_shares_the_first_ones_state(ws):
    first = QueryService(ws, QuerySettings())
    second = QueryService(Workspace.open(ws.root, lock=False), QuerySettings())
    try:
        assert second.engine is first.engine and backend.open_count(ws) == 2
        made = first.run_query(
            "SELECT kind, count(*) AS n FROM items GROUP BY kind", result_label="kinds"
        )
        # the other service knows the new cached table at once (one catalog)
        assert second.catalog.cached("kinds") is not None
        assert sorted(second.fetch_rows("kinds", 0, 10)) == [("a", 2), ("b", 1)]
        with pytest.raises(Exception) as info:
            second.run_query("SELECT 1", result_label="items")
        assert info.value.code == "RESULT_NAME_TAKEN"
        names = {t["name"] for t in second.show_tables()["tables"]}
        assert {"items", made["cached_table_name"]} <= names
        # one closes; the other goes on with the same engine
        first.close()
        first.close()  # twice is harmless and releases once
        assert backend.open_count(ws) == 1
        assert second.run_query("SELECT count(*) FROM items")["preview"] == [[3]]
    finally:
        first.close()
        second.close()
    assert backend.open_count(ws) == 0
    # the last close closed the database: another connection may open the file now
    con = duckdb.connect(str(ws.cache_db_path), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM kinds").fetchall() == [(2,)]
    finally:
        con.close()
    # and a new service opens it afresh
    with QueryService(ws, QuerySettings(timeout_seconds=5)) as again:
        assert again.engine.timeout_seconds == 5
        assert again.fetch_rows("kinds", 0, 10, order_by=[("kind", "asc")]) == [("a", 2), ("b", 1)]


def test_services_opened_at_the_same_time_share_one_engine(ws):
    services, errors = [], []
    start = threading.Barrier(4, timeout=30)

    def open_one():
        try:
            start.wait()
            services.append(QueryService(ws, QuerySettings()))
        except Exception as exc:  # reported to the test
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert not errors, errors
        assert len({id(s.engine) for s in services}) == 1 and backend.open_count(ws) == 4
        assert [s.run_query("SELECT count(*) FROM items")["preview"] for s in services] == [
            [[3]]
        ] * 4
    finally:
        for s in services:
            s.close()
    assert backend.open_count(ws) == 0


def test_a_service_that_fails_to_open_leaves_nothing_open(ws, monkeypatch):
    from lantide.query.sources import DataSources

    def broken_refresh(self):
        raise RuntimeError("disk gone")

    first = QueryService(ws, QuerySettings())
    monkeypatch.setattr(DataSources, "refresh", broken_refresh)
    with pytest.raises(RuntimeError):
        QueryService(ws, QuerySettings())
    assert backend.open_count(ws) == 1  # only the first one's reference is left
    monkeypatch.undo()
    assert first.run_query("SELECT 1")["preview"] == [[1]]
    first.close()
    assert backend.open_count(ws) == 0
