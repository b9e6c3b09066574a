"""Running query-layer work from a widget: in a worker, cancellable, shown in the status bar,
and written to the query history.

:func:`submit_query` runs ``fn(context, query_service)`` on the worker pool. The worker
notes its own DuckDB cursor (the engine keeps one per thread), so Cancel interrupts only
this job's statement, not the agent's or another tab's; it falls back to the service's
``interrupt()`` when the engine offers no per-thread cursor. The job appears in the
status bar through :meth:`AppServices.track_query` until it finishes.

The query history (``.lantide/query_history.jsonl``, one JSON object per run, append-only)
keeps what the analyst ran from SQL tabs: when, what, how long, how many
rows, and the error if any. The ledger is the agent's record; this is the analyst's.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from lantide.errors import LantideError
from lantide.workspace.atomic import append_jsonl, read_jsonl

log = logging.getLogger(__name__)

HISTORY_FILE = "query_history.jsonl"
HISTORY_SHOWN = 500


class QueryServiceUnavailable(LantideError):
    code = "QUERY_SERVICE_UNAVAILABLE"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class _CursorHandle:
    """The DuckDB cursor of the thread that runs a job, for a precise interrupt.

    A Stop can come while the job still prepares (parsing, lineage) and no statement runs
    yet, when an interrupt would be lost; so after a cancel the interrupt is repeated
    until the job ends. The cursor is forgotten when the job ends, so the pool thread's
    next job is never hit.
    """

    RETRY_MS = 100

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cursor = None
        self.per_thread = True

    def attach(self, query) -> None:
        engine = getattr(query, "engine", None)
        if engine is None or not hasattr(engine, "cursor"):
            self.per_thread = False
            return
        with self._lock:
            self.cursor = engine.cursor()

    def detach(self) -> None:
        with self._lock:
            self.cursor = None

    def interrupt(self, query) -> None:
        if not self.per_thread:
            query.interrupt()  # no per-thread cursors to aim at: stop everything
            return
        with self._lock:
            if self.cursor is not None:
                try:
                    self.cursor.interrupt()
                except Exception:  # closed meanwhile: the job is ending anyway
                    pass


def submit_query(services, fn: Callable[..., Any], *, label: str, on_result=None, on_error=None,
                 on_event=None, on_finished=None, track: bool = True):
    """Run ``fn(context, query)`` in a worker once the query service is open.

    Returns the Worker, or None (with ``on_error`` called) when the service is not open.
    """
    from PySide6.QtCore import QTimer

    query = services.query
    if query is None:
        error = services.query_error or QueryServiceUnavailable(
            "the query engine is still starting",
            hint="Wait a moment: the workspace's data is being registered.")
        if on_error:
            on_error(error)
        if on_finished:
            on_finished()
        return None
    handle = _CursorHandle()

    def job(context):
        handle.attach(query)
        try:
            if context.cancelled:
                from lantide.query.errors import QueryCancelled

                raise QueryCancelled()
            return fn(context, query)
        finally:
            handle.detach()

    retry = QTimer(services)
    retry.setInterval(_CursorHandle.RETRY_MS)

    def cancel() -> None:
        handle.interrupt(query)
        if handle.per_thread:
            retry.start()

    retry.timeout.connect(lambda: handle.interrupt(query))
    worker = services.workers.submit(job, on_result=on_result, on_error=on_error,
                                     on_event=on_event, on_finished=on_finished,
                                     on_cancel=cancel, name=label)
    worker.signals.sig_work_finished.connect(retry.stop)
    worker.signals.sig_work_finished.connect(retry.deleteLater)
    if track:
        services.track_query(worker, label)
    return worker


# -- query history ------------------------------------------------------------------------

def history_path(workspace) -> Path:
    return workspace.lantide_dir / HISTORY_FILE


def history_entry(*, source: str, sql: str, project: str | None = None, tab: str | None = None,
                  result: dict | None = None, error: BaseException | None = None,
                  duration_ms: int | None = None) -> dict:
    """One history line from a run's result or its error."""
    entry: dict[str, Any] = {"at": _now(), "source": source, "project": project, "tab": tab,
                             "sql": sql}
    if result is not None:
        entry.update({"status": "ok", "row_count": result.get("row_count"),
                      "duration_ms": result.get("duration_ms", duration_ms),
                      "cached_table_name": result.get("cached_table_name"),
                      "step_id": result.get("step_id")})
    elif error is not None:
        code = getattr(error, "code", type(error).__name__)
        entry.update({"status": "cancelled" if code == "QUERY_CANCELLED" else "error",
                      "error": code, "message": getattr(error, "message", str(error)),
                      "duration_ms": duration_ms})
    return entry


def record_history(services, entry: dict) -> None:
    """Show the entry now (``sig_query_ran``) and append it to the history file in a worker."""
    services.sig_query_ran.emit(entry)
    path = history_path(services.workspace)

    def write(_context):
        append_jsonl(path, entry)

    services.workers.submit(write, on_error=lambda exc: log.warning(
        "could not write the query history: %s", exc), name="write query history")


def read_history(workspace, limit: int = HISTORY_SHOWN) -> list[dict]:
    """The last ``limit`` entries, oldest first (a torn or foreign line is skipped)."""
    path = history_path(workspace)
    if not path.exists():
        return []
    return [e for e in read_jsonl(path) if isinstance(e, dict) and "sql" in e][-limit:]
