"""The one bridge between engine work and the UI thread.

Long work (DuckDB, the model, the disk) runs in a ``QThreadPool`` as a ``Worker``
(``QRunnable``) whose ``WorkerSignals`` carry results back to the UI thread, as git-cola
does. The function runs with a ``WorkerContext`` it may use to report progress, emit
intermediate events (e.g. the agent's event stream) and see whether it was cancelled.
Cancel sets a flag the function checks, and runs an optional ``on_cancel`` hook from the
UI thread (e.g. DuckDB ``interrupt()`` or closing the model's HTTP stream), so a cancel
takes effect even while the worker is blocked inside a call.
"""

from __future__ import annotations

import contextlib
import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class WorkerSignals(QObject):
    sig_progress_changed = Signal(object)  # a dict or a fraction, as the worker chooses
    sig_event_emitted = Signal(object)  # intermediate results (agent events, rows, ...)
    sig_result_ready = Signal(object)
    sig_error_raised = Signal(object)  # the exception object
    sig_work_finished = Signal()  # always last, after result or error


class WorkerContext:
    def __init__(self, signals: WorkerSignals):
        self._signals = signals
        self._cancelled = threading.Event()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def progress(self, value: Any) -> None:
        self._signals.sig_progress_changed.emit(value)

    def emit(self, event: Any) -> None:
        self._signals.sig_event_emitted.emit(event)


class Worker(QRunnable):
    def __init__(
        self,
        fn: Callable[..., Any],
        *args,
        on_cancel: Callable[[], None] | None = None,
        name: str = "",
        **kwargs,
    ):
        super().__init__()
        self.setAutoDelete(False)  # the owner keeps a reference until sig_work_finished
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.name = name or getattr(fn, "__name__", "work")
        self.signals = WorkerSignals()
        self.context = WorkerContext(self.signals)
        self._on_cancel = on_cancel
        self.done = threading.Event()

    def cancel(self) -> None:
        if self.context.cancelled or self.done.is_set():
            return
        self.context._cancelled.set()
        if self._on_cancel is not None:
            try:
                self._on_cancel()
            except Exception:  # cancelling must never crash the UI
                traceback.print_exc()

    def run(self) -> None:  # runs on a pool thread
        # Make the pool thread known to Python's threading module (a QThread is not by
        # itself): code that checks threading.enumerate() for live threads, such as the
        # query engine's per-thread cursors, must see it as alive.
        threading.current_thread()
        try:
            result = self.fn(self.context, *self.args, **self.kwargs)
        except BaseException as exc:  # reported to the UI, never lost
            # An attribute of our own on the exception object (BaseException declares no
            # such field), read by the handlers and tests that show where it came from.
            setattr(exc, "__lantide_traceback__", traceback.format_exc())  # noqa: B010
            self._safe_emit(self.signals.sig_error_raised, exc)
        else:
            self._safe_emit(self.signals.sig_result_ready, result)
        finally:
            self.done.set()
            self._safe_emit(self.signals.sig_work_finished)

    @staticmethod
    def _safe_emit(signal, *args) -> None:
        with contextlib.suppress(RuntimeError):  # the receiver was deleted (window closed)
            signal.emit(*args)


def _owner_of(closure: Callable[..., Any]) -> QObject | None:
    """The ``self`` a closure made in a method refers to, when it is a QObject."""
    code, cells = getattr(closure, "__code__", None), getattr(closure, "__closure__", None)
    if code is None or not cells or "self" not in code.co_freevars:
        return None
    try:
        candidate = cells[code.co_freevars.index("self")].cell_contents
    except ValueError:  # the cell is empty
        return None
    return candidate if isinstance(candidate, QObject) else None


def _while_owner_lives(callback: Callable[..., Any], owner: QObject | None) -> Callable[..., None]:
    """``callback``, skipped once its owner's C++ object has been deleted.

    A bound method is held weakly, as Qt holds a slot: a finished worker kept by its
    panel must not keep the panel's Python object alive through its own connection.
    """
    if owner is None and isinstance(getattr(callback, "__self__", None), QObject):
        # a Python method, or a Qt one (setText): its object weakly, the method by name
        target_ref = weakref.ref(callback.__self__)  # type: ignore[attr-defined]
        name = callback.__name__

        def resolve() -> Callable[..., Any] | None:
            target = target_ref()
            if target is None or not shiboken6.isValid(target):
                return None
            return getattr(target, name)

    else:
        owner = owner if owner is not None else _owner_of(callback)
        if owner is None:
            return callback
        live_owner = owner

        def resolve() -> Callable[..., Any] | None:
            return callback if shiboken6.isValid(live_owner) else None

    def deliver(*args: Any) -> None:  # a result, an event ... or nothing (finished)
        target = resolve()
        if target is not None:
            target(*args)

    return deliver


class WorkerPool:
    """Starts workers and keeps them alive until they finish."""

    def __init__(self, max_threads: int | None = None):
        self.pool = QThreadPool()
        if max_threads:
            self.pool.setMaxThreadCount(max_threads)
        self._running: set[Worker] = set()
        self._lock = threading.Lock()
        self._held: list[Worker] | None = None  # workers waiting for resume()
        self._urgent: weakref.WeakSet[Worker] = weakref.WeakSet()  # urgent among the held
        # After resume(urgent_alone_ms): the held work waiting for the urgent work to end.
        self._rest: list[Worker] | None = None
        self._urgent_running = 0

    def hold(self) -> None:
        """Queue new work instead of starting it, until :meth:`resume`.

        The app holds the pool while it builds and first paints the main window: work
        submitted meanwhile (the explorer's scan, warm-ups) would compete with the first
        paint for the GIL, and a window that shows a moment sooner feels faster.
        """
        with self._lock:
            if self._held is None:
                self._held = []

    def resume(self, *, urgent_alone_ms: int = 0) -> None:
        """Start the held work. With ``urgent_alone_ms``, urgent work starts first and the
        rest when no urgent work is left (urgent work submitted meanwhile counts too: the
        explorer's table listing follows the database's opening), or after that many
        milliseconds at the latest: at start-up the database opens and the explorer fills
        without the panels' loading competing for the GIL (two pool threads, and every
        Python step of either holds it), yet a slow open never keeps the panels empty
        for long."""
        with self._lock:
            held, self._held = self._held or [], None
            urgent = [w for w in held if w in self._urgent]
        rest = [w for w in held if w not in urgent]
        if not urgent_alone_ms or not urgent or not rest:
            for worker in held:
                self.pool.start(worker, 1 if worker in urgent else 0)
            return
        with self._lock:
            self._rest = rest
        for worker in urgent:
            self._count_urgent(worker)
            self.pool.start(worker, 1)
        from PySide6.QtCore import QTimer

        QTimer.singleShot(urgent_alone_ms, self._start_rest)

    def _count_urgent(self, worker: Worker) -> None:
        with self._lock:
            self._urgent_running += 1
        worker.signals.sig_work_finished.connect(self._urgent_finished)

    def _urgent_finished(self) -> None:
        with self._lock:
            self._urgent_running -= 1
            last = self._urgent_running <= 0
        if last:  # after the finished worker's own result slots (queued before this)
            from PySide6.QtCore import QTimer

            QTimer.singleShot(0, self._start_rest_if_no_urgent)

    def _start_rest_if_no_urgent(self) -> None:
        if self._urgent_running <= 0:
            self._start_rest()

    def _start_rest(self) -> None:
        with self._lock:
            rest, self._rest = self._rest, None
        for worker in rest or []:
            self.pool.start(worker)

    def start(self, worker: Worker, *, urgent: bool = False) -> Worker:
        """Run ``worker``; ``urgent`` work goes before the work already waiting (opening
        the database at start-up must not queue behind every panel's loading on a
        two-thread pool)."""
        with self._lock:
            self._running.add(worker)
            held = self._held is not None
            if self._held is not None:
                self._held.insert(0, worker) if urgent else self._held.append(worker)
                if urgent:
                    self._urgent.add(worker)
            waiting_rest = self._rest is not None
        worker.signals.sig_work_finished.connect(lambda w=worker: self._forget(w))
        if not held:
            if urgent and waiting_rest:  # the held work waits for this one too
                self._count_urgent(worker)
            self.pool.start(worker, 1 if urgent else 0)
        return worker

    def submit(
        self,
        fn: Callable[..., Any],
        *args,
        on_result=None,
        on_error=None,
        on_event=None,
        on_progress=None,
        on_finished=None,
        on_cancel=None,
        name: str = "",
        urgent: bool = False,
        owner: QObject | None = None,
        **kwargs,
    ) -> Worker:
        """Run ``fn(context, *args, **kwargs)`` in the pool; the ``on_*`` callbacks run on
        the UI thread.

        A callback is dropped once its owner's C++ object is deleted: work often outlives
        the panel that asked for it (a tab closed, the window replaced when switching
        workspace) and its result would touch deleted widgets. The owner is ``owner``, or
        else the object a bound-method callback belongs to, or the ``self`` a closure
        defined in a method refers to, when that is a QObject.
        """
        worker = Worker(fn, *args, on_cancel=on_cancel, name=name, **kwargs)
        s = worker.signals
        for signal, callback in (
            (s.sig_result_ready, on_result),
            (s.sig_error_raised, on_error),
            (s.sig_event_emitted, on_event),
            (s.sig_progress_changed, on_progress),
            (s.sig_work_finished, on_finished),
        ):
            if callback:
                signal.connect(_while_owner_lives(callback, owner))
        return self.start(worker, urgent=urgent)

    def _forget(self, worker: Worker) -> None:
        with self._lock:
            self._running.discard(worker)

    @property
    def running(self) -> list[Worker]:
        with self._lock:
            return list(self._running)

    def cancel_all(self) -> None:
        for worker in self.running:
            worker.cancel()

    def wait(self, msecs: int = 30000) -> bool:
        """Start what is held or waiting for the urgent work, and wait for all of it: held
        work would otherwise never run (the recent-workspaces list of an app closed right
        at start-up was never saved)."""
        self.resume()
        self._start_rest()
        return self.pool.waitForDone(msecs)
