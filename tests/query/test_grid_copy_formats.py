"""The grid's copy formats (lantide.query.grid_copy): CSV read back by Python's csv reader,
a Markdown table read back by markdown-it with the same cells, and SQL VALUES run by
DuckDB giving back the same rows, for values with commas, quotes, pipes, line breaks,
backslashes, NULLs and dates."""

from __future__ import annotations

import csv
import datetime as dt
import io
from decimal import Decimal

import duckdb
from markdown_it import MarkdownIt

from lantide.query.grid_copy import as_delimited, as_markdown, as_sql_values

COLUMNS = ["id", "text, with comma", 'say "hi"', "day", "amount"]
ROWS = [
    (1, 'a,b "quoted" | pipe', "line one\nline two", dt.date(2024, 3, 31), Decimal("12.50")),
    (2, None, "it's \\ back|slash", None, Decimal("-0.01")),
    (3, "", "'; DROP TABLE t; --", dt.date(1999, 12, 31), None),
]


def test_csv_quotes_what_needs_it_and_reads_back():
    text = as_delimited(COLUMNS, ROWS, ",")
    back = list(csv.reader(io.StringIO(text)))
    assert back[0] == COLUMNS
    assert back[1] == ["1", 'a,b "quoted" | pipe', "line one\nline two", "2024-03-31", "12.50"]
    assert back[2][1] == "" and back[2][3] == ""  # NULL: an empty field
    assert as_delimited(["x"], [("plain",)], ",") == "x\nplain\n"  # nothing quoted needlessly


def test_markdown_cells_escape_pipes_and_line_breaks():
    text = as_markdown(COLUMNS, ROWS)
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    cells: list[str] = []
    rows: list[list[str]] = []
    for token in tokens:
        if token.type == "tr_open":
            cells = []
        elif token.type == "inline":  # the cell as a reader sees it, escapes undone
            cells.append("".join(c.content for c in token.children or []))
        elif token.type == "tr_close":
            rows.append(cells)
    assert len(rows) == 4 and all(len(r) == 5 for r in rows)  # no pipe split a cell
    assert rows[0] == COLUMNS
    assert rows[1][1] == 'a,b "quoted" | pipe'
    assert rows[1][2] == "line one<br>line two"  # a line break inside the cell
    assert rows[2][1] == "" and rows[2][2] == "it's \\ back|slash"
    assert rows[3][2] == "'; DROP TABLE t; --" and rows[3][4] == ""


def test_sql_values_run_in_duckdb_and_give_the_same_rows():
    text = as_sql_values(COLUMNS, ROWS)
    assert "NULL" in text and "'it''s \\ back|slash'" in text
    con = duckdb.connect()
    back = con.execute(text.rstrip().rstrip(";")).fetchall()
    names = [d[0] for d in con.description]
    assert names == COLUMNS
    assert back == ROWS
    empty = con.execute(as_sql_values(["a b"], []).rstrip().rstrip(";"))
    assert empty.fetchall() == [] and [d[0] for d in empty.description] == ["a b"]
