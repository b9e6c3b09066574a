"""The adversarial corpus of broken data files, all in one workspace at once.

Each file gives a clear problem line (or, for one the reader can only find fault with
row by row, a clear query error), never a traceback; every other table keeps working; and
every file is byte for byte what it was (Lantide never writes into data/).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import zipfile
from pathlib import Path

import pytest

from tests.fakes.bad_files import (
    bomb_sheet,
    lie_about_size,
    ods_bytes,
    repeated_sheet,
    sparse_corners_sheet,
    with_sheet_xml,
    workbook_bytes,
)

pytestmark = pytest.mark.security

GOOD_QUERIES = {  # the sample's own tables, which must keep working
    "SELECT count(*) FROM orders": 120_000,
    "SELECT count(*) FROM customers": 2_000,
    'SELECT count(*) FROM "targets"."Regional"': 40,
}


def _workbook(sheets=None) -> bytes:
    return workbook_bytes(sheets or {"S": [["a", "b"], [1, 2]]})


def build_corpus(data: Path, outside: Path) -> dict[str, str]:
    """Write the corpus into ``data``; returns ``{source: expectation}`` where the
    expectation is ``problem`` (listed as a problem line), ``query_error`` (listed, a
    query on it fails with a clear error), ``noted`` (listed and read, with a note of what
    the reader did differently), ``query_ok`` (a table) or ``absent`` (not a data file)."""
    orders = (data / "orders.parquet").read_bytes()
    noise = random.Random(20261201).randbytes
    expect: dict[str, str] = {}

    def put(name: str, content: bytes, expectation: str) -> None:
        (data / name).write_bytes(content)
        expect[f"data/{name}"] = expectation

    # Parquet
    put("truncated.parquet", orders[: len(orders) // 2], "problem")
    put("garbage.parquet", b"PAR1" + noise(256) + b"PAR1", "problem")
    put("empty.parquet", b"", "problem")
    # Workbooks: damaged zips, bombs, liars
    put("corrupt.xlsx", b"PK\x03\x04" + noise(512), "problem")
    put("truncated.xlsx", _workbook()[:700], "problem")
    put("encrypted.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(1024), "problem")
    put("empty.xlsx", b"", "problem")
    put("garbage.xls", noise(2048), "problem")
    put("garbage.ods", b"PK\x05\x06" + bytes(18), "problem")
    put("grid_bomb.ods", ods_bytes(9_000, 10_000), "problem")
    with_sheet_xml(_workbook({"S": [["x"]]}), data / "corners.xlsx", 1, sparse_corners_sheet())
    expect["data/corners.xlsx"] = "problem"  # a small book: its sheet is read while listing
    liar = data / "liar.xlsx"
    liar.write_bytes(_workbook())
    lie_about_size(liar, "xl/worksheets/sheet1.xml", 3_000_000_000)
    expect["data/liar.xlsx"] = "problem"
    understated = with_sheet_xml(_workbook(), data / "understated.xlsx", 1, bomb_sheet(4_000))
    lie_about_size(understated, "xl/worksheets/sheet1.xml", 50)
    expect["data/understated.xlsx"] = "problem"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:  # a zip, but no workbook inside
        zf.writestr("hello.txt", "hi")
    put("not_a_book.xlsx", buf.getvalue(), "problem")
    # CSV: bad quoting, encodings, huge lines, binary
    put("bad_quotes.csv", b'id,name\n1,"never closed\n2,fine\n', "noted")
    put("huge_line.csv", b"a,b\n1," + b"y" * 3_000_000 + b"\n2,z\n", "problem")
    put("binary.csv", noise(4096), "problem")
    put("nul_bytes.csv", b"a,b\n1,\x00\x00\n2,3\n", "query_ok")
    put("not_gzip.csv.gz", b"\x1f\x8b" + noise(100), "problem")
    put("empty.csv", b"", "problem")
    put("bom_only.csv", b"\xef\xbb\xbf\r\n", "problem")
    put("header_only.csv", b"a,b\n", "query_ok")  # a table without rows, not a problem
    # JSON garbage
    put("truncated.json", b'{"a": [1, 2', "problem")
    put("prose.json", b"this is not json at all", "problem")
    put("deep.json", b"[" * 100_000 + b"]" * 100_000, "problem")
    put("bad_line.ndjson", b'{"a": 1}\n{"a": \n{"a": 3}\n', "problem")
    put("empty.json", b"", "problem")
    # Links and directories that look like files
    (data / "ext").symlink_to(outside, target_is_directory=True)
    expect["data/ext"] = "problem"
    (data / "leak.csv").symlink_to(outside / "secret.csv")
    expect["data/leak.csv"] = "problem"
    (data / "gone.csv").symlink_to(data / "does-not-exist.csv")
    expect["data/gone.csv"] = "absent"
    (data / "loop").symlink_to(data / "loop")
    expect["data/loop"] = "absent"
    (data / "folder.csv").mkdir()
    (data / "folder.csv" / "readme.md").write_text("not data")
    expect["data/folder.csv"] = "absent"
    (data / "folder.xlsx").mkdir()
    (data / "folder.xlsx" / "part.csv").write_text("x\n1\n")
    expect["data/folder.xlsx"] = "query_ok"  # a folder of CSVs is one table, whatever its name
    os.mkfifo(data / "pipe.csv")  # opening it would block forever
    expect["data/pipe.csv"] = "absent"
    return expect


def _digest(data: Path) -> dict[str, str]:
    out = {}
    for path in sorted(data.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.name == "pipe.csv":
            out[path.name] = os.readlink(path) if path.is_symlink() else "special"
            continue
        out[str(path.relative_to(data))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def corpus(sample_workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("password\nhunter2\n")
    (outside / "a.csv").write_text("x\n1\n")
    expect = build_corpus(sample_workspace / "data", outside)
    return sample_workspace, expect


@pytest.mark.slow
def test_every_broken_file_is_a_clear_problem_and_the_rest_keeps_working(corpus, open_service):
    from lantide.errors import LantideError

    root, expect = corpus
    data = root / "data"
    before = _digest(data)
    svc = open_service(root)
    listing = svc.show_tables()
    problems = {p["source"]: p["error"] for p in listing["problems"]}
    tables = {t["source"]: t for t in listing["tables"] if t.get("source")}
    for source, expectation in expect.items():
        if expectation == "problem":
            assert source in problems, f"{source}: no problem line ({tables.get(source)})"
            message = problems[source]
            assert message and "\n" not in message and "Traceback" not in message, source
        elif expectation == "absent":
            assert source not in problems and source not in tables, source
        else:
            assert source in tables, f"{source}: not listed ({problems.get(source)})"
            assert bool(tables[source].get("notes")) == (expectation == "noted"), source
    assert problems["data/binary.csv"].startswith("data/binary.csv is not valid UTF-8: the byte")
    for source in ("data/corrupt.xlsx", "data/truncated.xlsx", "data/understated.xlsx"):
        assert problems[source].startswith(f"{source} is not a readable workbook"), source
    for source, expectation in expect.items():
        if expectation not in ("query_error", "query_ok", "noted"):
            continue
        name = tables[source]["qualified_name"]
        try:
            result = svc.run_query(f"SELECT * FROM {name}")
            assert expectation != "query_error", f"{source} read without complaint"
            notes = [w for w in result["warnings"] if w.startswith(source)]
            assert len(notes) == len(tables[source].get("notes", [])), source
        except LantideError as exc:
            assert expectation == "query_error", f"{source}: {exc.message}"
            assert exc.message and exc.hint and "Traceback" not in exc.message, source
    for source, expectation in expect.items():  # querying a failed file says why
        if expectation == "problem" and tables.get(source) is None:
            name = Path(source).name.split(".")[0]
            with pytest.raises(LantideError) as info:
                svc.run_query(f'SELECT * FROM "{name}"')
            assert "Did you mean" not in info.value.message, source
    for sql, expected in GOOD_QUERIES.items():
        assert svc.run_query(sql)["preview"] == [[expected]], sql
    assert _digest(data) == before


def test_the_command_line_survives_the_corpus(corpus, run_cli):
    root, expect = corpus
    before = _digest(root / "data")
    listing = run_cli("tables", root, "--json")
    assert listing.returncode == 0, listing.stderr
    assert "Traceback" not in listing.stderr
    problems = {p["source"] for p in json.loads(listing.stdout)["problems"]}
    assert {s for s, e in expect.items() if e == "problem"} <= problems
    for sql, expected in GOOD_QUERIES.items():
        out = run_cli("sql", root, sql, "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["preview"] == [[expected]]
    quotes = run_cli("sql", root, "SELECT * FROM bad_quotes")
    assert (
        quotes.returncode == 0
        and "warning: data/bad_quotes.csv: quotes are read as text" in quotes.stdout
    )
    for name in ('"truncated"', '"corners"."S"', '"bad_line"', "deep"):
        out = run_cli("sql", root, f"SELECT * FROM {name}")
        assert out.returncode == 1, (name, out.stdout)
        assert out.stderr.startswith("lantide: error: ") and "Traceback" not in out.stderr
    assert _digest(root / "data") == before


@pytest.mark.slow
def test_a_real_decompression_bomb_with_default_limits(sample_workspace, open_service):
    """Sheet XML inflating past the default 1024 MB, 1-2 MB on disk: refused from the
    zip's directory, in the time it takes to read that directory."""
    data = sample_workspace / "data"
    bomb = with_sheet_xml(
        _workbook({"S": [["x"]]}), data / "bomb.xlsx", 1, repeated_sheet(1100 << 20)
    )  # 1.1 GB of XML
    assert bomb.stat().st_size < 8 << 20
    before = hashlib.sha256(bomb.read_bytes()).hexdigest()
    svc = open_service(sample_workspace)
    problem = {p["source"]: p["error"] for p in svc.show_tables()["problems"]}["data/bomb.xlsx"]
    assert "inflates to" in problem and "query.max_workbook_mb" in problem
    for sql, expected in GOOD_QUERIES.items():
        assert svc.run_query(sql)["preview"] == [[expected]], sql
    assert hashlib.sha256(bomb.read_bytes()).hexdigest() == before
