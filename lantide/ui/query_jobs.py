"""Running query-layer work from a widget: in a worker, cancellable, shown in the status bar,
and written to the query history.

:func:`submit_query` runs ``fn(context, query_service)`` on the worker pool under its own
``CancelScope`` (:mod:`lantide.query.cancel`), so Cancel stops only this job's statements,
not the agent's or another tab's; a Cancel that comes while the job still prepares is not
lost, the scope refuses the job's next statement. The job appears in the status bar
through :meth:`AppServices.track_query` until it finishes.

The query history (``.lantide/query_history.jsonl``, one JSON object per run, append-only)
keeps what the analyst ran from SQL tabs: when, what, how long, how many
rows, and the error if any. The ledger is the agent's record; this is the analyst's.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from lantide.errors import LantideError
from lantide.workspace.atomic import append_jsonl, read_jsonl_tail

log = logging.getLogger(__name__)

HISTORY_FILE = "query_history.jsonl"
HISTORY_SHOWN = 500


class QueryServiceUnavailable(LantideError):
    code = "QUERY_SERVICE_UNAVAILABLE"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def submit_query(services, fn: Callable[..., Any], *, label: str, on_result=None, on_error=None,
                 on_event=None, on_finished=None, track: bool = True):
    """Run ``fn(context, query)`` in a worker once the query service is open.

    Returns the Worker, or None (with ``on_error`` called) when the service is not open.
    """
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
    scope = query.cancel_scope(label)

    def job(context):
        with scope:
            if context.cancelled:
                from lantide.query.errors import QueryCancelled

                raise QueryCancelled()
            return fn(context, query)

    worker = services.workers.submit(job, on_result=on_result, on_error=on_error,
                                     on_event=on_event, on_finished=on_finished,
                                     on_cancel=scope.cancel, name=label)
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
    return [e for e in read_jsonl_tail(path, limit) if isinstance(e, dict) and "sql" in e]
