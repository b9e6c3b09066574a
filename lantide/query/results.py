"""Running one guarded statement and shaping its preview.

The preview never pulls a large result into Python. A materialized result is written to
its cached table inside DuckDB and read back with ``LIMIT``; a result that is only
previewed runs once as a materialized CTE, and DuckDB returns its first rows together
with its row count, so at most ``preview_rows`` rows cross into Python whatever the size.

Values are made JSON-safe here (dates as ISO text, decimals as numbers, bytes as hex), so
the agent, the desktop app and ``--json`` print the same thing.
"""

from __future__ import annotations

import base64
import math
import uuid
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from uuid import UUID

from lantide.query.engine import transaction
from lantide.query.names import quote_ident

_COUNT_COLUMN = "__lantide_row_count"
_RESULT_CTE = "__lantide_result"
# Statements DuckDB accepts only as a subquery, not directly after AS or in a CTE body.
_WRAP_KINDS = {"Describe", "Summarize", "Pivot", "Unpivot", "Values"}


@dataclass
class Preview:
    columns: list[dict]
    rows: list[list]
    row_count: int

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


def columns_of(description) -> list[dict]:
    return [{"name": d[0], "type": str(d[1])} for d in description or []]


def jsonable(value):
    """A DuckDB value as something ``json.dumps`` writes faithfully."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() and abs(value) < 2**53 else float(value)
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


def json_rows(rows) -> list[list]:
    return [[jsonable(v) for v in row] for row in rows]


def preview_only(cur, body: str, kind: str, preview_rows: int) -> Preview:
    """Run once, return the first rows and the row count; nothing else crosses over."""
    sql = (f"{PREVIEW_PREFIX}{select_body(body, kind)}) "
           f"SELECT *, (SELECT count(*) FROM {_RESULT_CTE}) AS {_COUNT_COLUMN} "
           f"FROM {_RESULT_CTE} LIMIT {int(preview_rows)}")
    cur.execute(sql)
    description = cur.description
    rows = cur.fetchall()
    columns = columns_of(description)[:-1]
    if rows:
        row_count = int(rows[0][-1])
        rows = [row[:-1] for row in rows]
    else:
        row_count = 0
    return Preview(columns, json_rows(rows), row_count)


def materialize(cur, body: str, kind: str, table: str, preview_rows: int,
                before_commit=None) -> Preview:
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
    return read_preview(cur, table, preview_rows, row_count)


def _created_row_count(cur, table: str, created: list) -> int:
    """The count ``CREATE TABLE AS`` answered with; a dynamic PIVOT runs as several
    statements and answers nothing, so its new table is counted instead."""
    if created and created[0] and isinstance(created[0][0], int):
        return int(created[0][0])
    return int(cur.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchall()[0][0])


def read_preview(cur, table: str, preview_rows: int, row_count: int | None = None) -> Preview:
    """The table's columns and first ``preview_rows`` rows (0: the columns only)."""
    if preview_rows <= 0 and row_count is not None:
        relation = cur.table(quote_ident(table))  # binds the table; no statement runs
        columns = [{"name": n, "type": str(t)} for n, t in zip(relation.columns, relation.types)]
        return Preview(columns, [], row_count)
    cur.execute(f"SELECT * FROM {quote_ident(table)} LIMIT {max(0, int(preview_rows))}")
    description = cur.description
    rows = cur.fetchall()
    if row_count is None:
        row_count = int(cur.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchall()[0][0])
    return Preview(columns_of(description), json_rows(rows), row_count)
