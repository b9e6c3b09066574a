"""The engine: cancel from another thread, time limit, readers in parallel, large previews."""

from __future__ import annotations

import threading
import time

import pytest

from lantide.query.cancel import CancelScope
from tests.fakes.gated_query import GatedQuery

SLOW = "SELECT count(*) FROM range(5000000000) a WHERE a.range % 7 = 3"


def test_interrupt_cancels_a_running_query(empty_service):
    # The statement is held inside DuckDB (a scan waiting on the test), so the interrupt
    # meets it there, whatever the machine's speed: no sleeping and hoping it started.
    gated, outcome = GatedQuery(), {}

    def worker():
        try:
            outcome["result"] = gated.run(empty_service.engine)
        except Exception as exc:  # the expected path
            outcome["error"] = exc

    thread = threading.Thread(target=worker)
    thread.start()
    assert gated.entered.wait(20), outcome
    assert empty_service.interrupt() == 1
    gated.open()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert "result" not in outcome, "the interrupt did not reach the statement"
    assert outcome["error"].code == "QUERY_CANCELLED"
    assert empty_service.engine.statements_under_way() == []
    # the engine is usable afterwards
    assert empty_service.run_query("SELECT 1")["preview"] == [[1]]


def test_a_running_statement_is_listed_while_under_way(empty_service):
    scope, outcome = CancelScope(), {}

    def worker():
        with scope:
            try:
                empty_service.run_query(SLOW)
            except Exception as exc:  # the expected path
                outcome["error"] = exc

    assert empty_service.engine.statements_under_way() == []
    thread = threading.Thread(target=worker)
    thread.start()
    deadline = time.monotonic() + 20
    while SLOW not in empty_service.engine.statements_under_way():
        assert time.monotonic() < deadline, empty_service.engine.statements_under_way()
        time.sleep(0.01)
    scope.cancel()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert outcome["error"].code == "QUERY_CANCELLED"
    assert empty_service.engine.statements_under_way() == []


def test_time_limit_stops_a_query(empty_workspace, open_service):
    svc = open_service(empty_workspace, timeout_seconds=0.5)
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        svc.run_query(SLOW)
    assert info.value.code == "QUERY_TIMEOUT"
    assert time.monotonic() - started < 10
    assert "timeout_seconds" in info.value.hint


def test_threads_read_at_the_same_time(sample_service):
    results, errors, cursors = {}, [], set()
    together = threading.Barrier(4, timeout=30)

    def reader(i):
        try:
            results[i] = sample_service.run_query(
                f"SELECT count(*) FROM orders WHERE customer_id % 4 = {i}"
            )["preview"][0][0]
            cursors.add(id(sample_service.engine.cursor()))
            together.wait()  # all alive at once: four threads, four cursors
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and sum(results.values()) == 120_000
    assert len(cursors) == 4  # one cursor per thread


def test_preview_of_a_huge_result_stays_small_in_python(empty_service):
    import tracemalloc

    tracemalloc.start()
    result = empty_service.run_query("SELECT range AS i, range * 2 AS j FROM range(3000000)")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result["row_count"] == 3_000_000 and len(result["preview"]) == 200
    assert peak < 5_000_000  # 3M rows as Python objects would be hundreds of MB


def test_settings_reach_duckdb(empty_workspace, open_service):
    svc = open_service(empty_workspace, memory_limit="1GB", threads=1)
    rows = svc.engine.execute("SELECT current_setting('threads'), current_setting('memory_limit')")
    assert rows[0][0] == 1 and rows[0][1].startswith(("953", "1.0", "1 "))
