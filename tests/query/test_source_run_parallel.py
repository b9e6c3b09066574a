"""Source Run runs tabs that do not depend on each other side by side: a wide chain starts
its independent tabs together, the report keeps the dependency order, bookkeeping rows
written by concurrent transactions are all right, one setting runs it one tab at a time,
and a cancel stops every tab running while the old tables stay."""

from __future__ import annotations

import threading
import time

import pytest

from tests.query.test_cancel_scope import SLOW, _in_thread, _wait_for

P = "wide"
# Long enough (0.2-1 s) that both tabs are surely under way before either finishes.
BUSY = "SELECT sum(hash(i)) AS h, {k} AS k FROM range(60000000) t(i)"


@pytest.fixture
def wide(empty_workspace):
    from lantide.workspace.model import Workspace

    ws = Workspace.open(empty_workspace, lock=False)
    ws.create_project(P)
    sql = empty_workspace / "projects" / P / "sql"
    (sql / "left_part.sql").write_text(BUSY.format(k=1) + "\n")
    (sql / "right_part.sql").write_text(BUSY.format(k=2) + "\n")
    (sql / "combined.sql").write_text("SELECT l.h + r.h AS h FROM left_part l, right_part r\n")
    ws.close()
    return empty_workspace


def _timeline(svc, **kwargs):
    events, lock = [], threading.Lock()

    def record(event):
        with lock:
            events.append(
                (
                    event.get("tab"),
                    event.get("status") or event["event"],
                    threading.current_thread().name,
                )
            )

    report = svc.source_run_sql_tab(P, "combined", progress=record, **kwargs)
    return report, events


def test_independent_tabs_run_side_by_side(wide, open_service):
    svc = open_service(wide, source_run_workers=2)
    report, events = _timeline(svc)
    assert [(t["tab"], t["status"]) for t in report["tabs"]] == [
        ("left_part", "ran"),
        ("right_part", "ran"),
        ("combined", "ran"),
    ]
    marks = [(tab, status) for tab, status, _ in events]
    # both staging tabs started before either finished, on two pool threads
    first_finish = min(marks.index(("left_part", "ran")), marks.index(("right_part", "ran")))
    assert marks.index(("left_part", "running")) < first_finish
    assert marks.index(("right_part", "running")) < first_finish
    threads = {thread for tab, status, thread in events if status == "running"}
    assert len([t for t in threads if t.startswith("lantide-source-run")]) >= 2
    # the downstream tab waited for both
    assert marks.index(("combined", "running")) > max(
        marks.index(("left_part", "ran")), marks.index(("right_part", "ran"))
    )
    assert report["steps"] and [s["cached_table_name"] for s in report["steps"]] == [
        "left_part",
        "right_part",
        "combined",
    ]
    assert svc.run_query("SELECT count(*) FROM combined")["preview"] == [[1]]

    # both staging tabs change: their bookkeeping rows are updated by concurrent
    # transactions, and the next run finds everything up to date
    sql = wide / "projects" / P / "sql"
    for name, k in (("left_part", 3), ("right_part", 4)):
        (sql / f"{name}.sql").write_text(BUSY.format(k=k) + "\n")
    again, _ = _timeline(svc)
    assert again["ran"] == 3 and again["ok"]
    rows = dict(
        svc.engine.execute("SELECT name, fingerprint FROM _lantide.cached_tables ORDER BY name")
    )
    assert set(rows) >= {"left_part", "right_part", "combined"} and all(rows.values())
    third, events = _timeline(svc)
    assert third["skipped"] == 3
    assert not [e for e in events if e[1] == "running"]  # nothing ran, no pool started


def test_one_worker_runs_the_chain_in_order_on_the_callers_thread(wide, open_service):
    svc = open_service(wide, source_run_workers=1)
    report, events = _timeline(svc)
    assert report["ran"] == 3
    running = [(tab, thread) for tab, status, thread in events if status == "running"]
    assert [tab for tab, _ in running] == ["left_part", "right_part", "combined"]
    assert {thread for _, thread in running} == {threading.current_thread().name}


def test_a_cancel_stops_every_tab_running_and_keeps_the_old_tables(wide, open_service):
    svc = open_service(wide, source_run_workers=3)
    assert svc.source_run_sql_tab(P, "combined")["ok"]
    before = svc.run_query("SELECT h FROM left_part")["preview"]
    sql = wide / "projects" / P / "sql"
    (sql / "left_part.sql").write_text(SLOW + "\n")
    (sql / "right_part.sql").write_text(SLOW.replace("% 7", "% 11") + "\n")
    scope = svc.cancel_scope()

    def run():
        with scope:
            return svc.source_run_sql_tab(P, "combined")

    thread, outcome = _in_thread(run)
    _wait_for(lambda: scope.running == 2)  # both slow tabs under way, on their own cursors
    started = time.monotonic()
    scope.cancel()
    thread.join(30)
    assert time.monotonic() - started < 10
    report = outcome["result"]
    assert [(t["tab"], t["status"]) for t in report["tabs"]] == [
        ("left_part", "failed"),
        ("right_part", "failed"),
        ("combined", "not_run"),
    ]
    assert {t["error"]["error"] for t in report["tabs"][:2]} == {"QUERY_CANCELLED"}
    assert svc.run_query("SELECT h FROM left_part")["preview"] == before
