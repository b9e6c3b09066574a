"""A headless statement on local data imports only what its workspace holds (issue 33): the
CSV readers load with a text file, the workbook readers with a workbook, the connections'
modules (the keyring's too) with a connection string, the statement's analysis with a
statement to analyse. A workspace of Parquet files, or one whose files are registered
already, runs a plain statement without any of them."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from tests.conftest import run_script_json

REPO = Path(__file__).resolve().parents[2]

CSV = (
    "lantide.query.csv_dialect",
    "lantide.query.lost_records",
    "lantide.query.reading_notes",
    "lantide.query.text_encodings",
)
WORKBOOK = ("lantide.query.sheets", "lantide.query.workbook_limits", "lantide.query.typed_columns")
REMOTE = (
    "lantide.query.connection_secrets",
    "lantide.query.connections",
    "lantide.query.external",
    "lantide.query.remote_consent",
    "lantide.query.row_estimate",
)
ANALYSIS = ("lantide.query.checks.statement",)
WATCHED = CSV + WORKBOOK + REMOTE + ANALYSIS

# Each argument is one command line; after each, the watched modules loaded so far.
_SCRIPT = r"""
import contextlib, io, json, sys
from lantide.cli.main import main
watched = json.loads(sys.argv[1])
steps = []
for argv in json.loads(sys.argv[2]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    steps.append({"code": code, "out": out.getvalue(),
                  "loaded": sorted(m for m in watched if m in sys.modules)})
print(json.dumps(steps))
"""


def _run(*commands: list[str]) -> list[dict]:
    return run_script_json(_SCRIPT, json.dumps(WATCHED), json.dumps(list(commands)))


def _parquet(path: Path, rows: int) -> None:
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT range AS id, range % 7 AS kind FROM range({rows})) "
        f"TO '{path}' (FORMAT parquet)"
    )
    con.close()


def test_a_parquet_workspace_runs_a_plain_statement_without_the_other_readers(
    empty_workspace,
):
    _parquet(empty_workspace / "data" / "lineitem.parquet", 1000)
    ws = str(empty_workspace)
    plain, grouped = _run(
        ["sql", ws, "SELECT count(*) AS n FROM lineitem"],
        ["sql", ws, "SELECT kind, count(*) AS n FROM lineitem GROUP BY kind ORDER BY kind"],
    )
    assert plain["code"] == 0 and "1000" in plain["out"]
    assert plain["loaded"] == []
    assert grouped["code"] == 0 and "143" in grouped["out"]
    assert grouped["loaded"] == []


def test_a_text_file_brings_the_csv_readers_and_a_division_the_analysis(empty_workspace):
    _parquet(empty_workspace / "data" / "lineitem.parquet", 10)
    ws = str(empty_workspace)
    (empty_workspace / "data" / "notes.csv").write_text("id,note\n1,a\n2,b\n", encoding="utf-8")
    registered, divided = _run(
        ["sql", ws, "SELECT count(*) AS n FROM notes"],
        ["sql", ws, "SELECT id / 2 AS half FROM notes ORDER BY id"],
    )
    assert registered["code"] == 0 and "2" in registered["out"]
    assert registered["loaded"] == list(CSV)  # the text file's readers, nothing else
    assert divided["code"] == 0 and "0.5" in divided["out"]
    assert divided["loaded"] == sorted(CSV + ANALYSIS)


def test_a_configured_connection_brings_the_connections_modules(empty_workspace):
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace

    _parquet(empty_workspace / "data" / "lineitem.parquet", 10)
    workspace = Workspace.open(empty_workspace)
    add_connection(
        workspace,
        "warehouse",
        "Driver={PostgreSQL Unicode};Server=localhost;Port=1;Database=shop",
        dialect="postgres",
        user="analyst",
    )
    workspace.close()
    (step,) = _run(["sql", str(empty_workspace), "SELECT count(*) AS n FROM lineitem"])
    assert step["code"] == 0 and "10" in step["out"]
    # the secrets' migration reads the connection strings; a local statement reaches
    # no connection, so what connects stays unimported
    assert step["loaded"] == ["lantide.query.connection_secrets", "lantide.query.connections"]


def test_the_sample_workspace_once_registered_runs_a_plain_statement_without_them(
    sample_workspace,
):
    ws = str(sample_workspace)
    (first,) = _run(["sql", ws, "SELECT count(*) AS n FROM customers"])
    assert first["code"] == 0
    # the first open registered a CSV and a workbook: their readers loaded
    assert set(CSV + WORKBOOK) <= set(first["loaded"])
    again, sheet = _run(
        ["sql", ws, "SELECT count(*) AS n FROM customers"],
        ["sql", ws, 'SELECT count(*) AS n FROM targets."Regional"'],
    )
    assert again["code"] == 0 and again["out"] == first["out"]
    assert again["loaded"] == []
    assert sheet["code"] == 0 and "40" in sheet["out"]
    # a sheet named: its lazy reading, which finds it read by the first open already
    assert sheet["loaded"] == ["lantide.query.sheets"]
