"""Errors of the query layer, each with a stable ``code``.

The agent turns them into tool results with :meth:`LantideError.to_dict`; the command line
prints the message and the hint. Refusals of the guard say what to do instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

from lantide.errors import ErrorDict, LantideError

if TYPE_CHECKING:
    from lantide.query.remote_consent import LargeRemoteWarning


class Position(TypedDict):
    """Where in the statement (1-based line and column)."""

    line: int
    column: int


class QueryErrorDict(ErrorDict):
    """A query error as a tool result; the large-remote keys only on LARGE_REMOTE_RESULT."""

    position: NotRequired[Position]
    large_remote_warning_id: NotRequired[str]
    estimated_rows: NotRequired[int]
    estimate_source: NotRequired[str]  # "count" or "copy" (remote_consent.EstimateSource)
    connection: NotRequired[str]
    limit: NotRequired[int]


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

    def to_dict(self) -> QueryErrorDict:
        base = super().to_dict()
        out: QueryErrorDict = {"error": base["error"], "message": base["message"]}
        if "hint" in base:
            out["hint"] = base["hint"]
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

    def __init__(self, warning: LargeRemoteWarning) -> None:
        super().__init__(warning["message"], hint=warning["hint"])
        self.warning = warning

    def to_dict(self) -> QueryErrorDict:
        out = super().to_dict()
        out["large_remote_warning_id"] = self.warning["large_remote_warning_id"]
        out["estimated_rows"] = self.warning["estimated_rows"]
        out["estimate_source"] = self.warning["estimate_source"]
        out["connection"] = self.warning["connection"]
        out["limit"] = self.warning["limit"]
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


def error_fields(exc: LantideError) -> QueryErrorDict:
    """``exc.to_dict()`` as the query layer's answers hold it (a Source Run's failed tab, a
    tab's lineage, ``validate_query``), typed with the query errors' keys. What reaches
    them besides a :class:`QueryError` (a file problem, the agent's consent refusal) has
    only the base fields: code, message, hint."""
    if isinstance(exc, QueryError):
        return exc.to_dict()
    base = exc.to_dict()
    out: QueryErrorDict = {"error": base["error"], "message": base["message"]}
    if "hint" in base:
        out["hint"] = base["hint"]
    return out
