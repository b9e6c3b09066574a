"""Cancel scopes: one caller's Stop cancels its own queries and nobody else's; per-thread
cursors stay right for threads the threading module does not know."""

from __future__ import annotations

import _thread
import threading
import time

import pytest

from lantide.query import CancelScope
from lantide.query.errors import QueryCancelled
from tests.fakes.gated_query import GatedQuery, wait_until_no_thread

SLOW = "SELECT count(*) FROM range(5000000000) a WHERE a.range % 7 = 3"
P = "shop"


def _wait_for(condition, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def _in_thread(fn):
    """Run ``fn`` on a new thread; returns (thread, outcome dict with result or error)."""
    outcome = {}

    def body():
        try:
            outcome["result"] = fn()
        except Exception as exc:  # reported to the test
            outcome["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    return thread, outcome


def test_a_scope_cancels_its_own_query_and_not_another_callers(empty_service):
    agent = empty_service.cancel_scope("agent")
    tabs_query = GatedQuery()  # stays in DuckDB until the cancel is over

    def agents_query():
        with agent:
            return empty_service.run_query(SLOW)

    tab_thread, tab_out = _in_thread(lambda: tabs_query.run(empty_service.engine))
    assert tabs_query.entered.wait(20)
    agent_thread, agent_out = _in_thread(agents_query)
    _wait_for(lambda: agent.running == 1 and len(empty_service.engine._running) == 2)
    assert agent.cancel() == 1
    agent_thread.join(20)
    assert not agent_thread.is_alive()
    assert agent_out["error"].code == "QUERY_CANCELLED"
    # the cancel and all its re-interrupts are over: an interrupt of the tab's cursor
    # would now make its statement fail as soon as it goes on
    wait_until_no_thread("lantide-cancel")
    assert tab_thread.is_alive() and empty_service.engine.busy and not tab_out
    tabs_query.open()
    tab_thread.join(20)
    assert tab_out == {"result": GatedQuery.expected}
    # shutting down still stops everything
    shutdown = GatedQuery()
    tab_thread, tab_out = _in_thread(lambda: shutdown.run(empty_service.engine))
    assert shutdown.entered.wait(20)
    assert empty_service.interrupt() == 1
    shutdown.open()
    tab_thread.join(20)
    assert tab_out["error"].code == "QUERY_CANCELLED"


def test_a_cancel_before_the_statement_starts_is_not_lost(empty_service):
    scope = CancelScope()
    ready, go = threading.Event(), threading.Event()

    def prepare_then_query():
        with scope:
            ready.set()
            go.wait(10)  # the caller is still preparing when Stop comes
            return empty_service.run_query(SLOW)

    thread, outcome = _in_thread(prepare_then_query)
    ready.wait(10)
    assert scope.cancel() == 0  # nothing runs yet
    go.set()
    thread.join(20)
    assert outcome["error"].code == "QUERY_CANCELLED"
    with scope, pytest.raises(QueryCancelled):  # sticky: later work is refused too
        empty_service.run_query("SELECT 1")
    # outside the scope the same thread and cursor work as before
    assert empty_service.run_query("SELECT 1")["preview"] == [[1]]


def test_a_cancelled_materialization_keeps_the_old_table_and_a_clean_cursor(empty_service):
    empty_service.run_query("SELECT 42 AS answer", result_label="kept")
    scope = CancelScope()
    results = {}

    def rerun_then_go_on():
        with scope:
            try:
                empty_service.run_query(
                    f"SELECT count(*) AS answer FROM ({SLOW})", result_label="kept"
                )
            except QueryCancelled as exc:
                results["cancelled"] = exc
        # same thread, same cursor: no transaction left open by the cancel
        return empty_service.run_query("SELECT 7 AS seven", result_label="after")["preview"]

    thread, outcome = _in_thread(rerun_then_go_on)
    # the materialization itself is under way (not the name check before it), so the
    # cancel meets it inside its transaction
    slow = f"SELECT count(*) AS answer FROM ({SLOW})"
    _wait_for(lambda: slow in empty_service.engine.statements_under_way())
    scope.cancel()
    thread.join(30)
    assert "cancelled" in results and outcome == {"result": [[7]]}
    assert empty_service.fetch_rows("kept", 0, 5) == [(42,)]


@pytest.fixture
def shop(empty_workspace):
    from lantide.workspace.model import Workspace

    lines = ["id,kind"] + [f"{i},{'abc'[i % 3]}" for i in range(300)]
    (empty_workspace / "data" / "items.csv").write_text("\n".join(lines) + "\n")
    Workspace(empty_workspace, {}).create_project(P)
    sql = empty_workspace / "projects" / P / "sql"
    (sql / "slow.sql").write_text(f"SELECT count(*) AS n FROM ({SLOW}), items\n")
    (sql / "after_slow.sql").write_text("SELECT * FROM slow\n")
    (sql / "last.sql").write_text("SELECT * FROM after_slow\n")
    return empty_workspace


def test_a_cancelled_source_run_stops_its_chain(shop, open_service):
    svc = open_service(shop)
    scope = svc.cancel_scope()

    def run():
        with scope:
            return svc.source_run_sql_tab(P, "last")

    thread, outcome = _in_thread(run)
    _wait_for(lambda: scope.running == 1)
    scope.cancel()
    thread.join(30)
    report = outcome["result"]
    assert [(t["tab"], t["status"]) for t in report["tabs"]] == [
        ("slow", "failed"),
        ("after_slow", "not_run"),
        ("last", "not_run"),
    ]
    assert report["tabs"][0]["error"]["error"] == "QUERY_CANCELLED"


def test_scopes_nest_and_unbind_on_exit(empty_service):
    outer, inner = CancelScope("outer"), CancelScope("inner")
    with outer:
        with inner:
            inner.cancel()
            with pytest.raises(QueryCancelled):
                empty_service.run_query("SELECT 1")
        assert empty_service.run_query("SELECT 2")["preview"] == [[2]]  # outer still fine
        outer.cancel()
        with pytest.raises(QueryCancelled):
            empty_service.validate_query("SELECT 3") and empty_service.run_query("SELECT 3")
    assert empty_service.run_query("SELECT 4")["preview"] == [[4]]


# -- per-thread cursors -----------------------------------------------------------------


def test_a_thread_unknown_to_threading_keeps_its_cursor(empty_service):
    """A thread started without the threading module (as Qt's pool threads are) is not in
    threading.enumerate(); another thread's first query must not close its cursor."""
    engine = empty_service.engine
    got_cursor, other_done, finished = threading.Event(), threading.Event(), threading.Event()
    outcome = {}

    def foreign():
        try:
            first = engine.cursor()
            outcome["known"] = any(t.ident == _thread.get_ident() for t in threading.enumerate())
            engine.execute("SELECT 1")
            got_cursor.set()
            other_done.wait(10)
            outcome["rows"] = engine.execute("SELECT 41 + 1")
            outcome["same"] = engine.cursor() is first
        except Exception as exc:
            outcome["error"] = exc
        finally:
            finished.set()

    _thread.start_new_thread(foreign, ())
    assert got_cursor.wait(10)
    thread, other = _in_thread(lambda: engine.execute("SELECT 2"))  # makes a new cursor
    thread.join(10)
    other_done.set()
    assert finished.wait(10)
    assert outcome.get("known") is False
    assert "error" not in outcome, outcome.get("error")
    assert outcome["rows"] == [(42,)] and outcome["same"] is True


def test_a_threads_cursor_is_released_when_the_thread_ends(empty_service):
    engine = empty_service.engine
    engine.execute("SELECT 1")  # this thread's cursor
    before = engine.open_cursors
    for _ in range(5):
        thread, outcome = _in_thread(lambda: engine.execute("SELECT 1"))
        thread.join(10)
        assert outcome == {"result": [(1,)]}
    assert engine.open_cursors == before
    # a foreign thread's cursor goes too, when its Python state goes
    done = threading.Event()
    _thread.start_new_thread(lambda: (engine.execute("SELECT 1"), done.set()), ())
    assert done.wait(10)
    _wait_for(lambda: engine.open_cursors == before, 10)
    assert len(engine._retired) <= 1  # closed by the next cursor made, or at close
    _in_thread(lambda: engine.execute("SELECT 1"))[0].join(10)
    assert len(engine._retired) == 1  # that thread's own, just retired
    engine.release_cursor()
    assert engine.open_cursors == before - 1 and not engine._retired
    assert engine.execute("SELECT 5") == [(5,)]  # a fresh cursor on demand


def test_qt_pool_threads_keep_their_cursors(empty_service):
    """The same on real QThreadPool threads, without the desktop app's workaround of
    registering them with the threading module."""
    from PySide6.QtCore import QRunnable, QThreadPool

    engine = empty_service.engine
    first_has_cursor, second_done = threading.Event(), threading.Event()
    outcome = {}

    class First(QRunnable):
        def run(self):
            try:
                engine.execute("SELECT 1")
                first_has_cursor.set()
                second_done.wait(10)
                outcome["first"] = engine.execute("SELECT 40 + 2")
            except Exception as exc:  # reported to the test
                outcome["first"] = exc

    class Second(QRunnable):
        def run(self):
            try:
                outcome["second"] = engine.execute("SELECT 2")
            except Exception as exc:  # reported to the test
                outcome["second"] = exc
            finally:
                second_done.set()

    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    first = First()
    pool.start(first)
    assert first_has_cursor.wait(10)
    second = Second()
    pool.start(second)
    assert pool.waitForDone(20_000)
    assert outcome == {"first": [(42,)], "second": [(2,)]}
    _wait_for(lambda: engine.open_cursors <= 1, 10)  # both jobs' cursors were released
