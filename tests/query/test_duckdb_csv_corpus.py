"""DuckDB's own test CSVs (tests/data/duckdb_csv, MIT) read through Lantide and through
plain DuckDB, side by side.

For every file DuckDB reads with ``read_csv``'s defaults, Lantide reads the same columns,
types and rows, or says why not: a reading note on the table, or a refusal (a problem
line, or a query error naming the line) with its reason. A file DuckDB cannot read may be
read by Lantide only with a note. The reference for a file that starts with a UTF-16
byte-order mark is DuckDB told ``encoding = 'utf-16'`` (its sniffer does not look for the
mark; the mark declares the encoding). The refusals are printed with their reasons.
"""

from __future__ import annotations

import codecs
import math
import shutil
from pathlib import Path

import duckdb
import pytest

CORPUS = Path(__file__).resolve().parents[1] / "data" / "duckdb_csv"
SUFFIXES = (".csv", ".tsv", ".txt")


def _files() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.suffix in SUFFIXES)


def _reference(con: duckdb.DuckDBPyConnection, path: Path):
    """(columns, rows) as plain DuckDB reads the file, or the first line of its error."""
    extra = ""
    if path.read_bytes().startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        extra = ", encoding = 'utf-16'"
    sql = f"SELECT * FROM read_csv('{path}'{extra})"
    try:
        columns = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {sql}").fetchall()]
        return columns, con.execute(sql).fetchall()
    except duckdb.Error as exc:
        return str(exc).splitlines()[0]


def _lantide(svc, table: dict):
    try:
        columns = [
            (r[0], r[1])
            for r in svc.engine.execute(f"DESCRIBE SELECT * FROM {table['qualified_name']}")
        ]
        return columns, svc.engine.execute(f"SELECT * FROM {table['qualified_name']}")
    except Exception as exc:
        from lantide.query.source_problems import brief

        return brief(getattr(exc, "message", str(exc)))


def _same(a: list, b: list) -> bool:
    def clean(rows):
        return [
            tuple(None if isinstance(v, float) and math.isnan(v) else v for v in row)
            for row in rows
        ]

    return clean(a) == clean(b)


@pytest.mark.slow
def test_lantide_reads_duckdbs_csv_files_as_duckdb_does_or_says_why_not(
    empty_workspace, open_service, capsys
):
    files = _files()
    assert len(files) >= 50 and (CORPUS / "LICENSE").is_file()
    data = empty_workspace / "data"
    for path in files:
        shutil.copy(path, data / path.name)
    svc = open_service(empty_workspace)
    listing = svc.show_tables()
    tables = {t["source"]: t for t in listing["tables"]}
    problems = {p["source"]: p["error"] for p in listing["problems"]}
    con = duckdb.connect()
    same, noted, refused, silent, lantide_only, only_noted = [], [], [], [], [], []
    for path in files:
        source = f"data/{path.name}"
        expected = _reference(con, data / path.name)
        table = tables.get(source)
        got = problems.get(source) if table is None else _lantide(svc, table)
        assert got is not None, f"{source} is neither a table nor a problem"
        notes = (table or {}).get("notes", [])
        if isinstance(expected, str):  # DuckDB refuses it
            if not isinstance(got, str):
                (only_noted if notes else lantide_only).append(f"{source}: DuckDB: {expected}")
            continue
        if isinstance(got, str):
            assert got.strip(), source
            refused.append(f"{source}: {got}")
        elif got[0] == expected[0] and _same(got[1], expected[1]):
            same.append(source)
        elif notes:
            noted.append(f"{source}: {'; '.join(notes)}")
        else:
            silent.append(
                f"{source}: columns {got[0][:4]} vs DuckDB's {expected[0][:4]}, "
                f"{len(got[1])} rows vs {len(expected[1])}"
            )
    with capsys.disabled():
        print(
            f"\nDuckDB CSV corpus: {len(files)} files; read as DuckDB reads them: {len(same)}; "
            f"read otherwise with a note: {len(noted)}; refused by Lantide while DuckDB "
            f"reads them: {len(refused)}; read with a note where DuckDB refuses: "
            f"{len(only_noted)}"
        )
        for line in noted:
            print(f"  noted: {line}")
        for line in refused:
            print(f"  refused: {line}")
    assert silent == [], "read differently from DuckDB without a note:\n" + "\n".join(silent)
    assert lantide_only == [], "read where DuckDB refuses, without a note:\n" + "\n".join(
        lantide_only
    )
    assert len(same) >= 0.8 * (len(same) + len(noted) + len(refused))


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("locations_header_trailing_comma.csv", "ends with ','"),
        ("rejects_sniffer.csv", "read as numbers with a decimal comma"),
        ("test__invalid_utf_header.csv", "read as Latin-1: the file is not UTF-8 anywhere"),
    ],
)
def test_the_corpus_files_read_otherwise_carry_their_note(
    name, fragment, empty_workspace, open_service
):
    shutil.copy(CORPUS / name, empty_workspace / "data" / name)
    svc = open_service(empty_workspace)
    (table,) = svc.show_tables()["tables"]
    assert any(fragment in note for note in table["notes"]), table
