"""Numbers written with a decimal comma ("1.234,50", as Excel writes CSV in much of Europe),
read as numbers only where that cannot change a value.

DuckDB's ``decimal_separator = ','`` and ``thousands = '.'`` apply to every column of a
file: a column of version strings "2.2.2" becomes 222, a column mixing "5.555" and "1,5"
becomes 5555 and 1.5. So the file is read as DuckDB reads it, and a text column is turned
into numbers only when **every** non-empty value has one of these shapes, and at least one
has a comma:

- ``12`` (digits only), ``12,5`` (one decimal comma),
- ``1.234,5`` (one thousands dot before the decimal comma, three digits between).

A value with two separators of the same kind ("2.2.2", "1.234.567,8"), a dot without a
comma ("5.555": a thousand or five?), a space or a letter leaves the whole column as text.
A file where a column already reads as numbers with a decimal point is left alone ("3,4"
there is a code, not three point four). Each column turned into numbers is a reading
note, with an example.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lantide.query.names import quote_ident, quote_literal

if TYPE_CHECKING:
    from lantide.query.engine import Cursor

# DuckDB's regexp_full_match (RE2) dialect.
PATTERN = r"[-+]?([0-9]+(,[0-9]+)?|[0-9]{1,3}\.[0-9]{3},[0-9]+)"


@dataclass(frozen=True)
class CommaColumn:
    name: str
    values: int  # non-empty values, all of the pattern
    example: str  # one of them with a comma


def _value(column: str) -> str:
    return f"nullif(trim({quote_ident(column)}), '')"


_SAMPLE_ROWS = 20_480  # the rows DuckDB's sniffer samples


def comma_columns(reader: str, text_columns: list[str]) -> list[CommaColumn]:
    """The columns read by ``reader`` (a ``read_csv(...)``; among ``text_columns``) whose
    every non-empty value is a number with a decimal comma (see the module's docstring).
    The first rows pick the candidates; only a file with some is read whole, once. Read on
    a scratch connection: a bad row must not end the registration's transaction (the
    query of it says what is wrong); a read that fails finds none."""
    import duckdb

    if not text_columns:
        return []
    with duckdb.connect(":memory:") as scratch:
        try:
            sample = _scan(scratch, f"(SELECT * FROM {reader} LIMIT {_SAMPLE_ROWS})", text_columns)
            candidates = [c.name for c in sample]
            return _scan(scratch, reader, candidates) if candidates else []
        except duckdb.Error:
            return []


def _scan(cur: Cursor, relation: str, columns: list[str]) -> list[CommaColumn]:
    parts = []
    for column in columns:
        value = _value(column)
        parts += [
            f"count({value})",
            f"count({value}) FILTER (WHERE NOT regexp_full_match({value}, "
            f"{quote_literal(PATTERN)}))",
            f"min({value}) FILTER (WHERE {value} LIKE '%,%')",
        ]
    row = cur.execute(f"SELECT {', '.join(parts)} FROM {relation}").fetchone()
    assert row is not None  # an aggregate: one row
    out = []
    for i, column in enumerate(columns):
        count, bad, example = row[3 * i : 3 * i + 3]
        if count and not bad and example is not None:
            out.append(CommaColumn(column, int(count), str(example)))
    return out


def numbers_select(reader: str, columns: list[CommaColumn]) -> str:
    """``SELECT * REPLACE (...)`` over ``reader`` with ``columns`` as DOUBLE."""
    replaced = ", ".join(
        f"CAST(replace(replace({_value(c.name)}, '.', ''), ',', '.') AS DOUBLE) "
        f"AS {quote_ident(c.name)}"
        for c in columns
    )
    return f"SELECT * REPLACE ({replaced}) FROM {reader}"


def note(column: CommaColumn) -> str:
    number = float(column.example.strip().replace(".", "").replace(",", "."))
    return (
        f"column {column.name!r} read as numbers with a decimal comma "
        f"({column.example.strip()!r} is {number}); all {column.values:,} of its values "
        "are written so"
    )
