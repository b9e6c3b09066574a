"""The installed build ships without pyarrow (87 MB of 365): the sample, workbook sheets,
ODBC rows and exports reach DuckDB and files through DuckDB itself and typed Python
columns (lantide.query.typed_columns). These run the product in a fresh interpreter where
``import pyarrow`` fails, as it does in the bundle."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from datetime import date, datetime, time, timedelta
from decimal import Decimal

import pytest

from tests.conftest import REPO, cli_env

# What the subprocess does: every path that used pyarrow, with pyarrow made unimportable.
_SCRIPT = r"""
import json, sys
sys.modules["pyarrow"] = None        # `import pyarrow` now raises ImportError
from pathlib import Path
from lantide.query import QueryService
from lantide.workspace.model import Workspace
from lantide.workspace.sample import create_sample
from lantide.workspace.settings import QuerySettings

root, out = Path(sys.argv[1]), Path(sys.argv[2])
create_sample(root).close()
ws = Workspace.open(root)
svc = QueryService(ws, QuerySettings())
try:
    report = {}
    report["orders"] = svc.run_query(
        "SELECT count(*), count(discount), min(order_date)::VARCHAR FROM orders")["preview"][0]
    report["sheet"] = svc.run_query(
        'SELECT count(*), sum(target_revenue), count(owner) FROM targets."Regional"')["preview"][0]
    report["sheet_types"] = svc.run_query(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'targets' AND table_name = 'Segments' ORDER BY ordinal_position"
    )["preview"]
    for suffix in ("csv", "parquet", "xlsx"):
        report[suffix] = svc.export_table("customers", out / f"customers.{suffix}",
                                          order_by=[("customer_id", "desc")])["row_count"]
    report["pyarrow_loaded"] = "pyarrow" in sys.modules and sys.modules["pyarrow"] is not None
finally:
    svc.close()
    ws.close()
print(json.dumps(report))
"""


@pytest.mark.slow
def test_sample_sheets_and_exports_work_without_pyarrow(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path / "ws"), str(out)],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=str(REPO),
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["orders"][0] == 120_000 and 0 < report["orders"][1] < 120_000
    assert report["orders"][2] == "2024-01-01"
    assert report["sheet"][0] == 40 and report["sheet"][1] > 0 and report["sheet"][2] < 40
    assert report["sheet_types"] == [
        ["segment", "VARCHAR"],
        ["year", "BIGINT"],
        ["target_customers", "BIGINT"],
        ["note", "VARCHAR"],
    ]
    assert report["csv"] == report["parquet"] == report["xlsx"] == 2000
    assert report["pyarrow_loaded"] is False

    import duckdb
    from python_calamine import CalamineWorkbook

    con = duckdb.connect()
    csv_ids = [
        r[0]
        for r in con.execute(
            f"SELECT customer_id FROM read_csv('{out / 'customers.csv'}')"
        ).fetchall()
    ]
    parquet_ids = [
        r[0]
        for r in con.execute(
            f"SELECT customer_id FROM read_parquet('{out / 'customers.parquet'}')"
        ).fetchall()
    ]
    assert csv_ids == parquet_ids == list(range(2000, 0, -1))  # the grid's order kept
    rows = (
        CalamineWorkbook.from_path(str(out / "customers.xlsx"))
        .get_sheet_by_name("data")
        .to_python()
    )
    assert rows[0][0] == "customer_id" and [r[0] for r in rows[1:4]] == [2000, 1999, 1998]
    assert not list(out.glob("*.lantide-tmp"))


def test_no_product_module_imports_pyarrow():
    """A new ``import pyarrow`` anywhere in lantide/ would break the installed build."""
    offenders = []
    for path in sorted((REPO / "lantide").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "import pyarrow" in text or "from pyarrow" in text:
            offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


# -- typed columns: the path ODBC rows take (PostgreSQL tests run it end to end) ---------


def _table(con):
    return con.execute("SELECT * FROM t ORDER BY 1").fetchall()


def test_typed_columns_carry_every_odbc_type_into_duckdb():
    import duckdb

    from lantide.query.typed_columns import ColumnBatch, conform, create_table

    batch = conform(
        ColumnBatch(
            ["i", "f", "d", "ts", "day", "t", "b", "s", "ok", "u"],
            [
                "BIGINT",
                "DOUBLE",
                "DECIMAL(12,3)",
                "TIMESTAMP",
                "DATE",
                "TIME",
                "BLOB",
                "VARCHAR",
                "BOOLEAN",
                "VARCHAR",
            ],
            [
                [1, None],
                [2.5, 3],
                [Decimal("12.345"), None],
                [datetime(2025, 1, 2, 3, 4, 5), None],
                [date(2025, 1, 2), None],
                [time(1, 2, 3), None],
                [b"\x00x", None],
                ["é", None],
                [True, None],
                [uuid.UUID(int=7), None],
            ],
        )
    )
    con = duckdb.connect()
    create_table(con, "t", batch)
    assert _table(con) == [
        (
            1,
            2.5,
            Decimal("12.345"),
            datetime(2025, 1, 2, 3, 4, 5),
            date(2025, 1, 2),
            time(1, 2, 3),
            b"\x00x",
            "é",
            True,
            "00000000-0000-0000-0000-000000000007",
        ),
        (None, 3.0, None, None, None, None, None, None, None, None),
    ]


def test_a_driver_object_goes_through_text_and_a_bad_value_names_its_column():
    import duckdb

    from lantide.query.typed_columns import ColumnBatch, ColumnTypeError, conform, insert

    con = duckdb.connect()
    con.execute("CREATE TABLE t (n BIGINT, span INTERVAL)")
    con.execute("BEGIN")
    # a number handed over as text, an interval as its text: cast by DuckDB
    insert(
        con,
        "t",
        conform(
            ColumnBatch(
                ["n", "span"], ["BIGINT", "INTERVAL"], [["41", 42], ["1 day", timedelta(hours=1)]]
            )
        ),
    )
    # NUMERIC without a precision: Decimals in a DOUBLE column
    assert conform(ColumnBatch(["x"], ["DOUBLE"], [[Decimal("1.5"), None, 2]])).columns == [
        [1.5, None, 2.0]
    ]
    with pytest.raises(ColumnTypeError) as info:
        conform(ColumnBatch(["n", "span"], ["BIGINT", "INTERVAL"], [["x"], [None]]))
    assert info.value.column == "n" and "BIGINT" in str(info.value)
    # the check ran before anything was written: the transaction is still usable
    con.execute("COMMIT")
    assert _table(con) == [(41, timedelta(days=1)), (42, timedelta(hours=1))]


def test_insert_in_chunks_keeps_every_row_in_order():
    import duckdb

    from lantide.query.typed_columns import ColumnBatch, insert

    con = duckdb.connect()
    con.execute("CREATE TABLE t (n BIGINT, s VARCHAR)")
    n = 2_503
    assert (
        insert(
            con,
            "t",
            ColumnBatch(
                ["n", "s"], ["BIGINT", "VARCHAR"], [list(range(n)), [str(i) for i in range(n)]]
            ),
            chunk_rows=1000,
        )
        == n
    )
    rows = con.execute("SELECT n, s FROM t").fetchall()
    assert rows == [(i, str(i)) for i in range(n)]
