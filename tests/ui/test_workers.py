"""The worker bridge: results, errors and events reach the UI thread; cancel runs its hook
and sets the flag the work checks; a held pool starts its work only when resumed."""

from __future__ import annotations

import threading
import time

from lantide.ui.workers import Worker, WorkerPool


def test_results_events_and_errors_arrive_on_the_ui_thread(qtbot):
    pool = WorkerPool()
    ui_thread = threading.get_ident()
    seen = []

    def work(context, n):
        for i in range(n):
            context.emit(i)
            context.progress((i + 1) / n)
        return n * 10

    pool.hold()  # so the finished signal cannot fire before the test listens
    worker = pool.submit(
        work,
        3,
        on_event=lambda e: seen.append(("event", e, threading.get_ident() == ui_thread)),
        on_progress=lambda p: seen.append(("progress", p, True)),
        on_result=lambda r: seen.append(("result", r, threading.get_ident() == ui_thread)),
    )
    with qtbot.waitSignal(worker.signals.sig_work_finished, timeout=5_000):
        pool.resume()
    assert [s for s in seen if s[0] == "event"] == [("event", i, True) for i in range(3)]
    assert ("result", 30, True) in seen and seen[-1][0] == "result"
    errors = []

    def fail(context):
        raise ValueError("broken input")

    pool.hold()
    failing = pool.submit(fail, on_error=errors.append)
    with qtbot.waitSignal(failing.signals.sig_work_finished, timeout=5_000):
        pool.resume()
    assert isinstance(errors[0], ValueError) and "broken input" in errors[0].__lantide_traceback__
    assert pool.running == []


def test_cancel_sets_the_flag_and_runs_the_hook(qtbot):
    pool = WorkerPool()
    hooked, started = threading.Event(), threading.Event()

    def work(context):
        started.set()
        while not context.cancelled:
            time.sleep(0.005)
        return "stopped"

    results = []
    worker = pool.submit(work, on_result=results.append, on_cancel=hooked.set)
    assert started.wait(5)  # the cancel meets running work
    with qtbot.waitSignal(worker.signals.sig_work_finished, timeout=5_000):
        worker.cancel()
    assert hooked.is_set() and results == ["stopped"]


def test_a_held_pool_starts_work_on_resume(qtbot):
    pool = WorkerPool(max_threads=1)
    pool.hold()
    ran = threading.Event()
    worker = pool.submit(lambda context: ran.set())
    # one thread, first come first served: had the held work been started, it would have
    # run before a probe queued after it
    probe = Worker(lambda context: ran.is_set())
    with qtbot.waitSignal(probe.signals.sig_result_ready, timeout=5_000) as seen:
        pool.pool.start(probe)
    assert seen.args == [False] and not ran.is_set() and pool.running == [worker]
    with qtbot.waitSignal(worker.signals.sig_work_finished, timeout=5_000):
        pool.resume()
    assert ran.is_set()
    # wait() resumes a held pool, so shutting down never waits for work that cannot start
    pool.hold()
    later = threading.Event()
    pool.submit(lambda context: later.set())
    assert pool.wait(5_000) and later.is_set()


def seen_after_queued_work(qtbot, pool: WorkerPool, events: list) -> list:
    """``events`` as a probe sees it that is queued on the pool's threads behind
    everything started so far, including on the event loop turns already due: work the
    pool had started would have run first (a free thread takes the queue in order)."""
    from PySide6.QtCore import QTimer

    probe = Worker(lambda _ctx: list(events))
    with qtbot.waitSignal(probe.signals.sig_result_ready, timeout=5_000) as seen:
        QTimer.singleShot(0, lambda: pool.pool.start(probe))
    return seen.args[0]


def test_urgent_work_runs_before_the_work_already_waiting(qtbot):
    """At start-up the database opens before the panels' loading (two worker threads)."""
    from lantide.ui.workers import WorkerPool

    pool = WorkerPool(max_threads=1)
    order = []
    pool.hold()
    workers = [
        pool.submit(lambda _ctx, n=n: order.append(n), name=n)
        for n in ("explorer", "knowledge", "conversations")
    ]
    workers.append(pool.submit(lambda _ctx: order.append("database"), name="database", urgent=True))
    pool.resume()
    qtbot.waitUntil(lambda: len(order) == 4, timeout=10_000)
    assert order == ["database", "explorer", "knowledge", "conversations"]


def test_urgent_work_runs_alone_until_it_finishes_or_the_limit(qtbot):
    """At start-up the database opens without the panels' loading beside it (on a
    two-thread pool both would compete for the GIL); the rest starts once it is done."""
    from lantide.ui.workers import WorkerPool

    pool = WorkerPool(max_threads=2)
    release = threading.Event()
    events = []
    pool.hold()
    for n in ("knowledge", "conversations"):  # each notes whether the database was done
        pool.submit(lambda _ctx, n=n: events.append((n, "database" in events)), name=n)
    database = pool.submit(
        lambda _ctx: (release.wait(10), events.append("database")), name="database", urgent=True
    )
    pool.resume(urgent_alone_ms=60_000)
    qtbot.waitUntil(lambda: database in pool.running, timeout=5_000)
    # the second thread is free: a panel started by resume (or on a turn of the event
    # loop after it) would be queued before this probe and run before it, first come
    # first served
    assert seen_after_queued_work(qtbot, pool, events) == []
    release.set()
    qtbot.waitUntil(lambda: len(events) == 3, timeout=10_000)
    # the second thread was free, yet the panels started only after the database
    assert events[0] == "database"
    assert sorted(events[1:]) == [("conversations", True), ("knowledge", True)]

    # a slow database does not keep the panels waiting past the limit
    slow = threading.Event()
    pool.hold()
    panel = pool.submit(lambda _ctx: events.append("late panel"), name="late panel")
    pool.submit(lambda _ctx: slow.wait(10), name="slow database", urgent=True)
    pool.resume(urgent_alone_ms=100)
    with qtbot.waitSignal(panel.signals.sig_work_finished, timeout=5_000):
        pass
    assert events[-1] == "late panel" and not slow.is_set()
    slow.set()
    assert pool.wait(5_000)


def test_urgent_work_submitted_while_the_rest_waits_keeps_it_waiting(qtbot):
    """At start-up the explorer lists the database's tables once it has opened (urgent
    work submitted from the first one's result): the panels' loading waits for that too,
    then starts at once, long before the limit."""
    from lantide.ui.workers import WorkerPool

    pool = WorkerPool(max_threads=2)
    release = threading.Event()
    events = []
    pool.hold()
    pool.submit(lambda _ctx: events.append(("panel", list(events))), name="panel")

    def opened(_result) -> None:
        pool.submit(
            lambda _ctx: (release.wait(10), events.append("tables")), name="tables", urgent=True
        )

    pool.submit(lambda _ctx: events.append("database"), on_result=opened, urgent=True)
    pool.resume(urgent_alone_ms=60_000)
    qtbot.waitUntil(lambda: any(w.name == "tables" for w in pool.running), timeout=5_000)
    # a free thread: had the database's end started the panel, it would be queued before
    # this probe (the database's finished slots and timers come first) and run before it
    assert seen_after_queued_work(qtbot, pool, events) == ["database"]
    release.set()
    qtbot.waitUntil(lambda: len(events) == 3, timeout=10_000)
    assert events == ["database", "tables", ("panel", ["database", "tables"])]


def test_a_result_for_a_deleted_panel_is_dropped_and_others_still_arrive(qtbot):
    """Work outlives the panel that asked for it (a tab closed, the window replaced when
    switching workspace): its result must not run the panel's callback on deleted
    widgets (CI saw "Internal C++ object (QComboBox) already deleted"), while a callback
    that belongs to no widget, or to a live one, still runs."""
    import shiboken6
    from PySide6.QtWidgets import QLabel

    class Panel(QLabel):
        def load(self, pool: WorkerPool, seen: list[str]) -> None:
            def shown(text: str) -> None:  # a closure over self, as the panels write them
                self.setText(text)
                seen.append(text)

            pool.submit(lambda _ctx: "closure", on_result=shown)
            pool.submit(lambda _ctx: "bound", on_result=self.setText)

    pool = WorkerPool()
    gone, alive = Panel(), Panel()
    seen: list[str] = []
    free: list[str] = []
    pool.hold()
    gone.load(pool, seen)
    alive.load(pool, seen)
    pool.submit(lambda _ctx: "free", on_result=free.append)
    pool.resume()
    assert pool.wait(5_000)  # finished; the results wait in the UI thread's queue
    shiboken6.delete(gone)
    qtbot.waitUntil(lambda: free == ["free"], timeout=5_000)
    qtbot.wait(20)  # an exception in a slot fails the test (pytest-qt)
    assert seen == ["closure"] and alive.text() in ("closure", "bound")


def test_waiting_runs_the_work_still_waiting_behind_the_urgent_work(qtbot):
    """The app closes at once after start-up (a script, a quick quit): what waited for
    the urgent start-up work (saving the recent-workspaces list) still runs."""
    pool = WorkerPool()
    saved = threading.Event()
    pool.hold()
    pool.submit(lambda _ctx: time.sleep(0.05), urgent=True, name="open the database")
    pool.submit(lambda _ctx: saved.set(), name="save the recent workspaces")
    pool.resume(urgent_alone_ms=60_000)  # the rest waits for the urgent work (or a minute)
    assert pool.wait(5_000)  # closing: no event loop turn in between
    assert saved.is_set()
