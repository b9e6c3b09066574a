"""Running one guarded statement and shaping its preview.

The preview never pulls a large result into Python. A materialized result is written to
its cached table inside DuckDB and read back with ``LIMIT``; a result that is only
previewed runs once as a materialized CTE, and DuckDB returns its first rows together
with its row count, so at most ``preview_rows`` rows cross into Python whatever the size.

Values are made JSON-safe here (dates as ISO text, decimals as numbers, bytes as hex), so
the agent, the desktop app and ``--json`` print the same thing.

A preview cell holds at most ``cell_chars`` characters (text) or bytes (BLOB): the cut is
made inside DuckDB (``left(col, N + 1)``), so a 5 MB value never crosses into Python. A cut
cell ends with :func:`cut_marker`; the caller says how to get the whole value.
"""

from __future__ import annotations

import base64
import math
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypedDict
from uuid import UUID

from lantide.query.duckdb_import import duckdb_core
from lantide.query.engine import transaction
from lantide.query.names import quote_ident

if TYPE_CHECKING:
    from lantide.query.engine import Cursor

# A value as json.dumps writes it faithfully (what jsonable answers).
JSONValue = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]


class Column(TypedDict):
    """A result column: its name and DuckDB type (``"INTEGER"``, ``"VARCHAR[]"``)."""

    name: str
    type: str


class SchemaColumn(Column):
    """A table's column as ``read_schema`` lists it."""

    nullable: bool


_COUNT_COLUMN = "__lantide_row_count"
_RESULT_CTE = "__lantide_result"
# Statements DuckDB accepts only as a subquery, not directly after AS or in a CTE body.
_WRAP_KINDS = {"Describe", "Summarize", "Pivot", "Unpivot", "Values"}


CELL_CHARS = 10_000  # the default cap of one preview cell


def cut_marker(cap: int) -> str:
    return f" …[cut at {cap:,} characters]"


@dataclass
class Preview:
    columns: list[Column]
    rows: list[list[JSONValue]]
    row_count: int
    cells_cut: int = 0
    cell_chars: int | None = None  # the cap applied (None: whole values)

    @property
    def truncated(self) -> bool:
        return self.row_count > len(self.rows)


def select_body(body: str, kind: str) -> str:
    """The statement as something usable after ``AS`` or inside a CTE."""
    return f"SELECT * FROM ({body})" if kind in _WRAP_KINDS else body


def new_step_id() -> str:
    return uuid.uuid4().hex[:12]


def wrapped_prefix(statement_prefix: str, kind: str) -> int:
    """How many characters Lantide put before the body on its first line (for positions)."""
    return len(statement_prefix) + (len("SELECT * FROM (") if kind in _WRAP_KINDS else 0)


PREVIEW_PREFIX = f"WITH {_RESULT_CTE} AS MATERIALIZED ("


def materialize_prefix(table: str) -> str:
    return f"CREATE OR REPLACE TABLE {quote_ident(table)} AS "


def columns_of(description: Sequence[Sequence[object]] | None) -> list[Column]:
    return [{"name": str(d[0]), "type": str(d[1])} for d in description or []]


def jsonable(value: object) -> JSONValue:
    """A DuckDB value as something ``json.dumps`` writes faithfully."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return (
            int(value)
            if value == value.to_integral_value() and abs(value) < 2**53
            else float(value)
        )
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        return raw.hex() if len(raw) <= 64 else base64.b64encode(raw).decode()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    return str(value)


def json_rows(rows: Iterable[Sequence[object]]) -> list[list[JSONValue]]:
    return [[jsonable(v) for v in row] for row in rows]


@dataclass
class _Projection:
    """A preview's select list: text and BLOB columns cut to ``cap + 1`` (one more than
    the cap, so a cut shows); a nested column (list, struct, map) whose text is longer than
    the cap comes as NULL plus its first ``cap`` characters in an extra column."""

    sql: str = "*"
    width: int = 0  # columns before the extras
    flat: set[int] = field(default_factory=set)  # cut text / BLOB columns
    nested: dict[int, int] = field(default_factory=dict)  # column -> its extra's position
    cap: int = 0  # what the cut columns are cut at

    @property
    def cuts(self) -> bool:
        return bool(self.flat or self.nested)


def _is_nested(type_name: str) -> bool:
    return type_name.endswith("]") or type_name.startswith(("STRUCT", "MAP", "UNION"))


def _capped_projection(names: list[str], types: list[str], cap: int | None) -> _Projection:
    """Positional references (#1) keep duplicate names apart."""
    if not cap or not names:
        return _Projection()
    out = _Projection(width=len(names), cap=cap)
    parts: list[str] = []
    extras: list[str] = []
    for i, (name, type_name) in enumerate(zip(names, types, strict=True)):
        base, ref, alias = type_name.upper(), f"#{i + 1}", quote_ident(name)
        if base in ("VARCHAR", "JSON") or base.startswith("VARCHAR("):
            parts.append(f"left({ref}, {cap + 1}) AS {alias}")
            out.flat.add(i)
        elif base == "BLOB":
            parts.append(f"{ref}[1:{cap + 1}] AS {alias}")
            out.flat.add(i)
        elif _is_nested(base):
            long = f"length(CAST({ref} AS VARCHAR)) > {cap}"
            parts.append(f"CASE WHEN {long} THEN NULL ELSE {ref} END AS {alias}")
            out.nested[i] = len(names) + len(extras)
            extras.append(f"CASE WHEN {long} THEN left(CAST({ref} AS VARCHAR), {cap}) END")
        else:
            parts.append(ref)
    out.sql = ", ".join(parts + extras)
    return out


def _cut_rows(
    rows: Iterable[Sequence[Any]], projection: _Projection
) -> tuple[list[list[JSONValue]], int]:
    cap = projection.cap
    out: list[list[JSONValue]] = []
    cut = 0
    for row in rows:
        values = list(row[: projection.width]) if projection.cuts else list(row)
        for i in projection.flat:
            value = values[i]
            if isinstance(value, (str, bytes, bytearray, memoryview)) and len(value) > cap:
                values[i] = f"{jsonable(value[:cap])}{cut_marker(cap)}"
                cut += 1
        for i, extra in projection.nested.items():
            if row[extra] is not None:
                values[i] = row[extra] + cut_marker(cap)
                cut += 1
        out.append([jsonable(v) for v in values])
    return out, cut


def preview_only(
    cur: Cursor, body: str, kind: str, preview_rows: int, cell_chars: int | None = CELL_CHARS
) -> Preview:
    """Run once, return the first rows and the row count; nothing else crosses over."""
    head = f"{PREVIEW_PREFIX}{select_body(body, kind)}) "
    names, types = _bound_columns(cur, f"{head}SELECT * FROM {_RESULT_CTE}", cell_chars)
    projection = _capped_projection(names, types, cell_chars)
    sql = (
        f"{head}SELECT {projection.sql}, (SELECT count(*) FROM {_RESULT_CTE}) AS {_COUNT_COLUMN} "
        f"FROM {_RESULT_CTE} LIMIT {int(preview_rows)}"
    )
    cur.execute(sql)
    description = cur.description
    rows = cur.fetchall()
    columns = _columns(names, types) if projection.cuts else columns_of(description)[:-1]
    if rows:
        row_count = int(rows[0][-1])
        rows = [row[:-1] for row in rows]
    else:
        row_count = 0
    shaped, cut = _cut_rows(rows, projection)
    return Preview(columns, shaped, row_count, cut, cell_chars or None)


def _bound_columns(cur: Cursor, sql: str, cell_chars: int | None) -> tuple[list[str], list[str]]:
    """Names and types of ``sql``'s result, by binding it (``DESCRIBE``: nothing runs). A
    statement that does not bind gets no projection: running it reports DuckDB's error
    with its position. (DuckDB's relation API would bind it the same way, but needs the
    ``duckdb`` package's Python layer: 60-90 ms of imports before a process's first
    result; issue 33.)"""
    if not cell_chars:
        return [], []
    try:
        return _described(cur, sql)
    except duckdb_core().Error:
        return [], []


def _described(cur: Cursor, relation: str) -> tuple[list[str], list[str]]:
    """``DESCRIBE relation``: the column names and DuckDB type names of a query or table."""
    rows = cur.execute(f"DESCRIBE {relation}").fetchall()
    return [str(r[0]) for r in rows], [str(r[1]) for r in rows]


def _columns(names: Sequence[str], types: Sequence[object]) -> list[Column]:
    return [{"name": n, "type": str(t)} for n, t in zip(names, types, strict=True)]


def materialize(
    cur: Cursor,
    body: str,
    kind: str,
    table: str,
    preview_rows: int,
    before_commit: Callable[[Cursor, int], object] | None = None,
    cell_chars: int | None = CELL_CHARS,
) -> Preview:
    """``CREATE OR REPLACE TABLE`` in one transaction: a failure keeps the old table.

    The row count is the one ``CREATE TABLE AS`` answers with (a second ``count(*)``
    would scan the new table again). ``before_commit(cur, row_count)`` records
    bookkeeping in the same transaction, so the table and its row change together.
    ``preview_rows=0`` reads only the columns (Source Run shows no rows).
    """
    with transaction(cur):
        created = cur.execute(materialize_prefix(table) + select_body(body, kind)).fetchall()
        row_count = _created_row_count(cur, table, created)
        if before_commit is not None:
            before_commit(cur, row_count)
    return read_preview(cur, table, preview_rows, row_count, cell_chars)


def _created_row_count(cur: Cursor, table: str, created: Sequence[Sequence[object]]) -> int:
    """The count ``CREATE TABLE AS`` answered with; a dynamic PIVOT runs as several
    statements and answers nothing, so its new table is counted instead."""
    if created and created[0] and isinstance(created[0][0], int):
        return int(created[0][0])
    return int(cur.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchall()[0][0])


def read_preview(
    cur: Cursor,
    table: str,
    preview_rows: int,
    row_count: int | None = None,
    cell_chars: int | None = CELL_CHARS,
) -> Preview:
    """The table's columns and first ``preview_rows`` rows (0: the columns only)."""
    names, types = _described(cur, quote_ident(table))
    columns = _columns(names, types)
    if preview_rows <= 0 and row_count is not None:
        return Preview(columns, [], row_count)
    projection = _capped_projection(names, types, cell_chars)
    cur.execute(
        f"SELECT {projection.sql} FROM {quote_ident(table)} LIMIT {max(0, int(preview_rows))}"
    )
    rows = cur.fetchall()
    if row_count is None:
        row_count = int(cur.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchall()[0][0])
    shaped, cut = _cut_rows(rows, projection)
    return Preview(columns, shaped, row_count, cut, cell_chars or None)
