"""Errors of the query layer, each with a stable ``code``.

The agent turns them into tool results with :meth:`LantideError.to_dict`; the command line
prints the message and the hint. Refusals of the guard say what to do instead.
"""

from __future__ import annotations

from typing import Any

from lantide.errors import LantideError


class QueryError(LantideError):
    """A query that failed or was refused. ``position`` is (line, column) when known."""

    code = "QUERY_ERROR"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        code: str | None = None,
        position: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message, hint=hint, code=code)
        self.position = position

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.position is not None:
            out["position"] = {"line": self.position[0], "column": self.position[1]}
        return out


class QueryRefused(QueryError):
    """The guard or a QEM rule refused the statement before it ran."""

    code = "QUERY_REFUSED"


class LargeRemoteResult(QueryError):
    """A tab of a Source Run would stage more remote rows than the limit allows; it runs
    once the analyst confirms (``warning``: the ``warning_required`` answer, with its id)."""

    code = "LARGE_REMOTE_RESULT"

    def __init__(self, warning: dict[str, Any]) -> None:
        super().__init__(warning["message"], hint=warning["hint"])
        self.warning = warning

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        for key in ("large_remote_warning_id", "estimated_rows", "connection", "limit"):
            out[key] = self.warning[key]
        return out


class QueryCancelled(QueryError):
    code = "QUERY_CANCELLED"

    def __init__(self, what: str = "the query"):
        super().__init__(f"{what} was cancelled", hint="Run it again when you are ready.")


class QueryTimeout(QueryError):
    code = "QUERY_TIMEOUT"

    def __init__(self, seconds: float):
        super().__init__(
            f"the query ran longer than the time limit of {seconds:g} s and was stopped",
            hint="Narrow it (filters, fewer columns, a LIMIT), persist an upstream step as a "
            "SQL tab, or raise query.timeout_seconds in settings.",
        )


class TableNotFound(QueryError):
    code = "TABLE_NOT_FOUND"


class DataFileUnreadable(QueryError):
    """A query names a data file (or sheet) that is listed but could not be read."""

    code = "DATA_FILE_UNREADABLE"


class TabError(QueryError):
    """A problem with a SQL tab file or its name."""

    code = "TAB_ERROR"


class LineageCycle(QueryError):
    code = "LINEAGE_CYCLE"

    def __init__(self, cycle: list[str]):
        self.cycle = list(cycle)
        path = " -> ".join(cycle + cycle[:1])
        super().__init__(
            f"the SQL tabs read each other in a cycle: {path}",
            hint="Break the cycle: one of these tabs must not read the others' cached tables.",
        )


class ConnectionProblem(QueryError):
    """An external (ODBC) connection that is misconfigured or unreachable."""

    code = "CONNECTION_ERROR"
