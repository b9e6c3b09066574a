"""A CSV file is sniffed once, when it is registered: the view reads with what was sniffed.

Counting its rows for the explorer, listing its columns and every query of it then bind
without sniffing the file again (the sniff cost about as much as reading a small file, and
a first open paid it twice per file). The view must read exactly what DuckDB's own
detection reads, and a file that changed is sniffed anew.
"""

from __future__ import annotations

import gzip
import os

import duckdb
import pytest

# name -> bytes: the shapes the sniffer decides something about
TRICKY = {
    "plain.csv": b"id,name,amount\n1,a,1.5\n2,b,2.5\n",
    "bom_crlf.csv": b"\xef\xbb\xbfid,name\r\n1,a\r\n2,b\r\n",
    "title.csv": b"Report title\n\nid;name;amount\n1;a;7\n2;b;8\n",
    "no_header.csv": b"1,2\n3,4\n",
    "multiline.csv": b'id,note\n1,"two\nlines"\n2,"x ""q"" y"\n',
    "dates.csv": b"d,ts,n\n01/02/2024,2024-01-02 10:00:00,1\n13/02/2024,2024-01-03 11:30:00,2\n",
    "odd_names.csv": b'it\'s,"we""ird",a,a\n1,2,3,4\n',
    "latin1.csv": "café,prix\nthé,2\n".encode("latin-1"),
    "pipes.csv": b"a|b\n1|x\n2|y\n",
    "tabs.tsv": b"x\ty\n1\tu\n2\tv\n",
    "header_only.csv": b"a,b\n",
    "no_final_newline.csv": b"a,b\n1,2",
    "stray_quote.csv": b'a,b\n1,he said "hi there\n2,x\n',
    "crlf_quoted.csv": b'a,b\r\n"x\r\ny",2\r\n',
    "utf16.csv": "id,name\n1,\u00e9\n2,b\n".encode("utf-16"),
    "zipped.csv.gz": gzip.compress(b"a,b\n1,2\n3,4\n"),
}


def _auto(path) -> tuple[list, list]:
    """What DuckDB's own auto-detecting reader makes of the file: (columns, rows)."""
    extra = ", delim = '\t'" if path.suffix == ".tsv" else ""
    if path.name == "latin1.csv":
        extra += ", encoding = 'latin-1'"
    if path.name == "utf16.csv":
        extra += ", encoding = 'utf-16'"
    con = duckdb.connect()
    sql = f"SELECT * FROM read_csv('{path}'{extra})"
    return con.execute(f"DESCRIBE {sql}").fetchall(), con.execute(sql).fetchall()


def _view(svc, name: str) -> tuple[list, list]:
    sql = f'SELECT * FROM "{name}"'
    return svc.engine.execute(f"DESCRIBE {sql}"), svc.engine.execute(sql)


def test_a_csv_view_reads_what_duckdb_detects(empty_workspace, open_service):
    data = empty_workspace / "data"
    for name, content in TRICKY.items():
        (data / name).write_bytes(content)
    svc = open_service(empty_workspace)
    tables = {t["source"]: t for t in svc.show_tables()["tables"]}
    for name in TRICKY:
        path = data / name
        table = tables[f"data/{name}"]
        assert "error" not in table, (name, table)
        assert _view(svc, table["name"]) == _auto(path), name
        assert table["row_count"] == len(_auto(path)[1]), name


def test_a_query_of_a_csv_view_does_not_sniff_the_file_again(empty_workspace, open_service):
    """Seen from outside: bytes swapped under the same size and mtime (so the file counts
    as unchanged) do not change the view's columns; an auto-detecting view re-sniffed them
    at every query."""
    path = empty_workspace / "data" / "sales.csv"
    path.write_bytes(b"id,amount\n1,2.5\n2,3.5\n")
    svc = open_service(empty_workspace)
    before = svc.engine.execute('DESCRIBE SELECT * FROM "sales"')
    assert [c[:2] for c in before] == [("id", "BIGINT"), ("amount", "DOUBLE")]
    st = path.stat()
    path.write_bytes(b"xy;zz;ww\n1;2;3\n4;5;66\n")  # the same 22 bytes
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert svc.engine.execute('DESCRIBE SELECT * FROM "sales"') == before


def test_a_csv_changed_between_runs_is_sniffed_anew(empty_workspace, open_service):
    path = empty_workspace / "data" / "sales.csv"
    path.write_text("id,amount\n1,2.5\n2,3.5\n")
    first = open_service(empty_workspace)
    assert [c[:2] for c in first.engine.execute('DESCRIBE SELECT * FROM "sales"')] == [
        ("id", "BIGINT"),
        ("amount", "DOUBLE"),
    ]
    first.close()
    first.workspace.close()
    path.write_text("id;region;amount\n1;north;7\n2;south;8\n3;east;9\n")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    again = open_service(empty_workspace)
    columns = [c[:2] for c in again.engine.execute('DESCRIBE SELECT * FROM "sales"')]
    assert columns == [("id", "BIGINT"), ("region", "VARCHAR"), ("amount", "BIGINT")]
    (listed,) = [t for t in again.show_tables()["tables"] if t["name"] == "sales"]
    assert listed["row_count"] == 3


@pytest.mark.parametrize(
    "content",
    [
        b"a,b\n1," + b"y" * 3_000_000 + b"\n",  # a line longer than the reader takes
        b"",  # empty
    ],
)
def test_a_csv_that_cannot_be_sniffed_keeps_its_error_and_its_bytes(
    empty_workspace, open_service, content
):
    path = empty_workspace / "data" / "bad.csv"
    path.write_bytes(content)
    (empty_workspace / "data" / "fine.csv").write_text("k\n1\n")
    svc = open_service(empty_workspace)
    answer = svc.show_tables()
    problems = {p["source"]: p["error"] for p in answer["problems"]}
    assert problems["data/bad.csv"]
    assert path.read_bytes() == content
    (fine,) = [t for t in answer["tables"] if t["name"] == "fine"]
    assert fine["row_count"] == 1


def _listing(svc) -> list[tuple]:
    """What the explorer and the agent see of every table: name, kind, count, notes,
    error, and its columns with their types."""
    out = []
    for t in svc.show_tables()["tables"]:
        columns = None
        if "error" not in t and t["kind"] in ("data_file", "excel_sheet"):
            columns = svc.engine.execute(f"DESCRIBE SELECT * FROM {t['qualified_name']}")
        out.append(
            (t["qualified_name"], t["kind"], t.get("row_count"), t.get("notes"), t.get("error"))
            + (tuple(c[:2] for c in columns) if columns else ())
        )
    return out


def _mixed_workspace(root, sample_workspace):
    import shutil

    data = root / "data"
    for name, content in TRICKY.items():
        (data / name).write_bytes(content)
    (data / "bad_rows.csv").write_text("a,b\n" + "1,2\n3\n" * 3 + "4,5\n")
    (data / "euro.csv").write_text("id;price\n1;1.234,50\n2;7,25\n")
    for name in ("orders.parquet", "targets.xlsx"):
        shutil.copy(sample_workspace / "data" / name, data / name)


def test_a_first_open_sniffs_each_csv_once_ahead_of_its_registration(
    empty_workspace, sample_workspace, open_service, monkeypatch
):
    """The CSV files' sniffs run on a thread of their own while the other files register
    (DuckDB sniffs without the GIL), each file once; the tables come out as when every
    file is sniffed in turn."""
    import threading

    from lantide.query import csv_dialect

    _mixed_workspace(empty_workspace, sample_workspace)
    calls: list[tuple[str, str, str]] = []
    real = csv_dialect._sniff

    def spy(cur, path, extra=""):
        calls.append((path.name, extra, threading.current_thread().name))
        return real(cur, path, extra)

    monkeypatch.setattr(csv_dialect, "_sniff", spy)
    ahead = _listing(open_service(empty_workspace))
    plain = [(n, e) for n, e, _t in calls if n in ("plain.csv", "dates.csv", "pipes.csv")]
    assert sorted(plain) == [("dates.csv", ""), ("pipes.csv", ""), ("plain.csv", "")]
    assert {t for n, _e, t in calls if n == "plain.csv"} == {"lantide-sniff-ahead"}

    class NotAhead(csv_dialect.SniffAhead):  # every file sniffed in turn, as before
        def __init__(self, engine, files):
            super().__init__(engine, [])

    # (the data sources look it up when a text file is to be registered)
    monkeypatch.setattr(csv_dialect, "SniffAhead", NotAhead)
    again = empty_workspace.parent / "again"
    again.mkdir()
    from lantide.workspace.model import Workspace

    Workspace.create(again)
    _mixed_workspace(again, sample_workspace)
    in_turn = _listing(open_service(again))
    assert ahead == in_turn
    by_name = {row[0]: row for row in ahead}
    assert by_name['"euro"'][5:] == (("id", "BIGINT"), ("price", "DOUBLE"))  # decimal commas
    assert by_name['"bad_rows"'][5:] == (("a", "BIGINT"), ("b", "BIGINT"))  # strict reader
    assert by_name['"orders"'][2] == 120_000 and by_name['"targets"."Regional"'][2] == 40
