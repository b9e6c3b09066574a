"""Consent to stage a large remote result (QEM: ask before copying more than
``query.large_remote_rows`` rows from an external connection).

A statement over the limit answers ``warning_required`` with a ``large_remote_warning_id``;
the same statement runs once that id comes back. Issued ids are kept in the cache
database (``_lantide.remote_warnings``), not in memory, so a confirmation works from the
next command-line call as well as in the same session. An id is bound to its connection
and remote statement: it confirms nothing else.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, TypedDict

from lantide.query import internal_tables
from lantide.query.catalog import now_utc
from lantide.query.names import INTERNAL_SCHEMA

if TYPE_CHECKING:
    from lantide.query.engine import Engine

_TABLE = f'"{INTERNAL_SCHEMA}".remote_warnings'
_SCHEMA_SQL = (
    f"CREATE TABLE IF NOT EXISTS {_TABLE} (id VARCHAR PRIMARY KEY, key VARCHAR, "
    "connection VARCHAR, estimated_rows BIGINT, issued_at TIMESTAMP)"
)


def statement_key(connection: str, remote_sql: str) -> str:
    return hashlib.sha256(f"{connection}\n{remote_sql}".encode()).hexdigest()


def warning_ids(value: str | Iterable[object] | None) -> list[str]:
    """``None``, one id or a list of ids, as a list."""
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value if v]


class RemoteConsents:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._ready = False

    def _ensure(self) -> None:
        if not self._ready:
            internal_tables.ensure(self.engine, "remote_warnings", _SCHEMA_SQL)
            self._ready = True

    def confirmed(self, key: str, ids: str | Iterable[object] | None) -> bool:
        """Whether one of ``ids`` was issued for this statement."""
        issued = warning_ids(ids)
        if not issued:
            return False
        self._ensure()
        marks = ", ".join("?" for _ in issued)
        rows = self.engine.execute(
            f"SELECT 1 FROM {_TABLE} WHERE key = ? AND id IN ({marks})",
            [key, *issued],
            timeout=None,
        )
        return bool(rows)

    def issue(self, key: str, connection: str, rows: int) -> str:
        import uuid  # not at import: the service opens without it (a reopen runs no query)

        self._ensure()
        new_id = uuid.uuid4().hex[:16]
        self.engine.execute(
            f"INSERT INTO {_TABLE} VALUES (?, ?, ?, ?, ?)",
            [new_id, key, connection, rows, now_utc()],
            timeout=None,
        )
        return new_id


EstimateSource = Literal["count", "copy"]


class LargeRemoteWarning(TypedDict):
    """The ``warning_required`` answer of a statement whose remote result is too large."""

    status: Literal["warning_required"]
    warning: Literal["large_remote_result"]
    large_remote_warning_id: str  # pass it back to stage the result anyway
    estimated_rows: int
    # where estimated_rows comes from: "count", the source's COUNT(*) of the statement;
    # "copy", the rows that had arrived when the copy was stopped (the engine's EXPLAIN
    # estimated the result small, and it was not: row_estimate.RowCap)
    estimate_source: EstimateSource
    connection: str
    limit: int  # query.large_remote_rows
    message: str
    hint: str


def warning(
    new_id: str,
    connection: str,
    rows: int,
    limit: int,
    *,
    again: str,
    source: EstimateSource = "count",
) -> LargeRemoteWarning:
    """The ``warning_required`` answer; ``again``: how to pass the id back; ``source``:
    where ``rows`` comes from (see :class:`LargeRemoteWarning`)."""
    if source == "copy":
        message = (
            f"more than {limit:,} rows arrived from connection {connection!r} ({rows:,} so "
            "far, though the source's plan estimated far fewer); the copy was stopped"
        )
    else:
        message = (
            f"the query would copy {rows:,} rows from connection {connection!r} "
            f"(more than {limit:,})"
        )
    return {
        "status": "warning_required",
        "warning": "large_remote_result",
        "large_remote_warning_id": new_id,
        "estimated_rows": rows,
        "estimate_source": source,
        "connection": connection,
        "limit": limit,
        "message": message,
        "hint": "Filter or aggregate on the remote side first; to stage it anyway, "
        f"{again} with large_remote_warning_id={new_id!r}.",
    }
