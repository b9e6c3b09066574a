"""Rows of the result grid as text to paste elsewhere: CSV/TSV, a Markdown table, or SQL
``VALUES``.

Each writer quotes what its format needs and nothing else:

- CSV/TSV (Python's ``csv`` writer): a field with the delimiter, a quote or a line break
  is quoted, quotes doubled; NULL is an empty field.
- Markdown (a GitHub table): ``|`` is escaped as ``\\|``, a backslash as ``\\\\``, a line
  break becomes ``<br>``; NULL is an empty cell.
- SQL: ``SELECT * FROM (VALUES (...), ...) AS t("col", ...)``, which DuckDB (and
  PostgreSQL) reads back as the same rows: text as a literal with quotes doubled, NULL as
  ``NULL``, dates and timestamps as typed literals, column names as quoted identifiers.

Values are written at full precision (:func:`cell_text`), never as the grid rounds them
for display.
"""

from __future__ import annotations

import csv
import datetime as _dt
import decimal
import io
import json
import math
import uuid
from collections.abc import Sequence

from lantide.query.names import quote_ident, quote_literal


def cell_text(value: object) -> str:
    """A cell as text: the way an analyst reads it, full precision, one value."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same number
    if isinstance(value, (int, decimal.Decimal)):
        return str(value)
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def as_delimited(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    delimiter: str = ",",
    *,
    header: bool = True,
) -> str:
    """Rows as CSV (``delimiter`` ``,``) or TSV (``\\t``); NULL is an empty field."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    if header:
        writer.writerow(list(columns))
    for row in rows:
        writer.writerow(["" if v is None else cell_text(v) for v in row])
    return buffer.getvalue()


def _markdown_cell(value: object) -> str:
    if value is None:
        return ""
    text = cell_text(value).replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def as_markdown(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Rows as a Markdown table with a header row."""
    lines = [
        "| " + " | ".join(_markdown_cell(c) or " " for c in columns) + " |",
        "| " + " | ".join("---" for _ in columns) + " |",
    ]
    lines += ["| " + " | ".join(_markdown_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def sql_literal(value: object) -> str:
    """``value`` as a DuckDB literal that reads back as the same value."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        return f"CAST({quote_literal(repr(value))} AS DOUBLE)"  # 'inf', 'nan'
    if isinstance(value, decimal.Decimal):
        return format(value, "f") if value.is_finite() else f"CAST('{value}' AS DOUBLE)"
    if isinstance(value, _dt.datetime):
        kind = "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
        return f"{kind} {quote_literal(value.isoformat(sep=' '))}"
    if isinstance(value, _dt.date):
        return f"DATE {quote_literal(value.isoformat())}"
    if isinstance(value, _dt.time):
        return f"TIME {quote_literal(value.isoformat())}"
    if isinstance(value, _dt.timedelta):
        return f"INTERVAL {quote_literal(f'{value.total_seconds()} seconds')}"
    if isinstance(value, (bytes, bytearray, memoryview)):
        escaped = "".join(f"\\x{b:02x}" for b in bytes(value))
        return f"CAST({quote_literal(escaped)} AS BLOB)"
    if isinstance(value, uuid.UUID):
        return f"CAST({quote_literal(str(value))} AS UUID)"
    return quote_literal(cell_text(value))


def as_sql_values(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Rows as ``SELECT * FROM (VALUES ...) AS t(...)``, one row a line."""
    names = ", ".join(quote_ident(str(c)) for c in columns)
    if not rows:  # VALUES needs a row: an empty result of the same columns
        nulls = ", ".join("NULL" for _ in columns)
        return f"SELECT * FROM (VALUES ({nulls})) AS t({names}) WHERE false;\n"
    body = ",\n".join("  (" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows)
    return f"SELECT * FROM (VALUES\n{body}\n) AS t({names});\n"
