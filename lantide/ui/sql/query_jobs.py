"""Running query-layer work from a widget: in a worker, cancellable, shown in the status bar,
and written to the query history.

:func:`submit_query` runs ``fn(context, query_service)`` on the worker pool under its own
``CancelScope`` (:mod:`lantide.query.cancel`), so Cancel stops only this job's statements,
not the agent's or another tab's; a Cancel that comes while the job still prepares is not
lost, the scope refuses the job's next statement. The job appears in the status bar
through :meth:`AppServices.track_query` until it finishes.

The query history (what the analyst ran from SQL tabs) is kept by
:mod:`lantide.query.history`; :func:`record_history` shows an entry and writes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lantide.errors import LantideError

if TYPE_CHECKING:
    from lantide.query.history import HistoryEntry

log = logging.getLogger(__name__)


class QueryServiceUnavailable(LantideError):
    code = "QUERY_SERVICE_UNAVAILABLE"


def submit_query(
    services,
    fn: Callable[..., Any],
    *,
    label: str,
    on_result=None,
    on_error=None,
    on_event=None,
    on_finished=None,
    track: bool = True,
):
    """Run ``fn(context, query)`` in a worker once the query service is open.

    Returns the Worker, or None (with ``on_error`` called) when the service is not open.
    """
    query = services.query
    if query is None:
        error = services.query_error or QueryServiceUnavailable(
            "the query engine is still starting",
            hint="Wait a moment: the workspace's data is being registered.",
        )
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

    worker = services.workers.submit(
        job,
        on_result=on_result,
        on_error=on_error,
        on_event=on_event,
        on_finished=on_finished,
        on_cancel=scope.cancel,
        name=label,
    )
    if track:
        services.track_query(worker, label)
    return worker


# -- query history (written by the query layer: lantide.query.history) ------------------


def record_history(services, entry: HistoryEntry) -> None:
    """Show the entry now (``sig_query_ran``) and append it to the history file in a worker."""
    from lantide.query.history import append_entry

    services.sig_query_ran.emit(entry)
    workspace = services.workspace

    def write(_context):
        append_entry(workspace, entry)

    services.workers.submit(
        write,
        on_error=lambda exc: log.warning("could not write the query history: %s", exc),
        name="write query history",
    )
