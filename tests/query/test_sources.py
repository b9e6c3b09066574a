"""Files in data/ are tables: formats, odd names, bad rows, changes on disk."""

from __future__ import annotations

import json
import time

import pytest


def _names(service):
    return {t["qualified_name"] for t in service.show_tables()["tables"]}


def test_sample_tables_and_sheets(sample_service):
    tables = sample_service.show_tables()
    names = {t["qualified_name"]: t for t in tables["tables"]}
    assert {
        '"customers"',
        '"orders"',
        '"products"',
        '"targets"."Regional"',
        '"targets"."Segments"',
    } <= set(names)
    assert names['"targets"."Regional"']["kind"] == "excel_sheet"
    assert names['"orders"']["source"] == "data/orders.parquet"
    json.dumps(tables)  # JSON-serializable as the agent sends it
    regional = sample_service.run_query(
        'SELECT count(*) AS n, sum(target_revenue) > 0 AS ok FROM "targets"."Regional"'
    )
    assert regional["preview"] == [[40, True]]
    schema = sample_service.read_schema('targets."Segments"')
    assert schema["ddl"] == (
        'CREATE TABLE "targets"."Segments" ("segment" VARCHAR, '
        '"year" BIGINT, "target_customers" BIGINT, "note" VARCHAR)'
    )


def test_formats_and_odd_names(empty_workspace, open_service):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = empty_workspace / "data"
    (data / "q3 sales.v2.csv").write_text("id,amount\n1,2.5\n2,3.5\n")
    (data / "order.csv").write_text("id\n1\n")  # a SQL keyword
    (data / "Städte.tsv").write_text("stadt\teinwohner\nKöln\t1084831\n")
    (data / "events.ndjson").write_text('{"e": "a", "n": 1}\n{"e": "b", "n": 2}\n')
    (data / "list.json").write_text('[{"k": 1}, {"k": 2}, {"k": 3}]')
    pq.write_table(pa.table({"x": [1, 2, 3, 4]}), data / "select.parquet")
    (data / "notes.md").write_text("# not data\n")
    svc = open_service(empty_workspace)
    names = _names(svc)
    assert {'"q3 sales.v2"', '"order"', '"Städte"', '"events"', '"list"', '"select"'} <= names
    assert '"notes"' not in names
    checks = {
        'SELECT sum(amount) FROM "q3 sales.v2"': 6.0,
        'SELECT count(*) FROM "order"': 1,
        'SELECT einwohner FROM "Städte"': 1084831,
        "SELECT sum(n) FROM events": 3,
        "SELECT count(*) FROM list": 3,
        'SELECT sum(x) FROM "select"': 10,
    }
    for sql, expected in checks.items():
        assert svc.run_query(sql)["preview"][0][0] == expected, sql


def test_name_collisions_fall_back_to_the_file_name(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "sales.csv").write_text("a\n1\n")
    (data / "Sales.json").write_text('[{"b": 2}]')
    svc = open_service(empty_workspace)
    names = _names(svc)
    # files are named in name order (case ignored): sales.csv first, then Sales.json
    assert '"sales"' in names and '"Sales.json"' in names
    assert svc.run_query('SELECT b FROM "Sales.json"')["preview"] == [[2]]


def test_bad_csv_row_is_reported_with_its_line(empty_workspace, open_service):
    rows = "".join(f"{i},{i * 2}\n" for i in range(1, 30000))
    (empty_workspace / "data" / "m.csv").write_text("id,v\n" + rows + "30000,not-a-number\n")
    svc = open_service(empty_workspace)
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT sum(v) FROM m")
    assert info.value.code == "DATA_ERROR"
    assert "30001" in info.value.message  # the line of the bad row, header included


def test_bad_rows_that_fool_the_sniffer_still_fail_with_their_line(empty_workspace, open_service):
    rows = ["id,name,amount"] + [f"{i},n{i},{i * 1.5}" for i in range(1, 200)]
    rows.insert(120, "999,broken")  # file line 121: a field short
    rows.insert(150, "1000,extra,1,2")  # a field too many
    data = empty_workspace / "data"
    (data / "sales.csv").write_text("\n".join(rows) + "\n")
    # one real column whose values hold commas and semicolons: left as DuckDB reads it
    (data / "notes.csv").write_text('note\n"a, b"\n"c; d"\nplain\n')
    svc = open_service(empty_workspace)
    assert [(c["name"], c["type"]) for c in svc.read_schema("sales")["columns"]] == [
        ("id", "BIGINT"),
        ("name", "VARCHAR"),
        ("amount", "DOUBLE"),
    ]
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT sum(amount) FROM sales")
    assert info.value.code == "DATA_ERROR"
    assert "Line: 121" in info.value.message and "999,broken" in info.value.message
    assert "Possible fixes" not in info.value.message and "sales.csv" in info.value.message
    assert "number of fields" in info.value.hint
    assert svc.run_query("SELECT count(*) FROM notes")["preview"] == [[3]]
    assert [c["name"] for c in svc.read_schema("notes")["columns"]] == ["note"]


def test_latin1_and_utf16_files_are_read_and_a_title_line_is_still_skipped(
    empty_workspace, open_service
):
    data = empty_workspace / "data"
    (data / "export.csv").write_bytes("name;city\nJosé;Köln\nAnna;München\n".encode("latin-1"))
    (data / "wide.csv").write_bytes("id,v\n1,é\n".encode("utf-16"))
    (data / "titled.csv").write_text(
        "Report for Q1, 2025\nid,v,w\n" + "".join(f"{i},{i},{i}\n" for i in range(50))
    )
    svc = open_service(empty_workspace)
    assert svc.run_query("SELECT * FROM export ORDER BY name")["preview"] == [
        ["Anna", "München"],
        ["José", "Köln"],
    ]
    assert svc.run_query("SELECT * FROM wide")["preview"] == [[1, "é"]]
    assert svc.run_query("SELECT count(*), sum(w) FROM titled")["preview"] == [[50, 1225]]
    assert svc.show_tables()["problems"] == []


def test_a_reader_problem_names_its_cause_on_one_line(tmp_path):
    import duckdb

    from lantide.query.sources import _brief

    path = tmp_path / "export.csv"
    path.write_bytes("name;city\nJosé;Köln\n".encode("latin-1"))
    with pytest.raises(duckdb.Error) as info:  # DuckDB's own message, options and all
        duckdb.connect().execute(f"SELECT * FROM read_csv('{path}')")
    assert "\n" in str(info.value) and "file = " in str(info.value)
    brief = _brief(str(info.value))
    assert brief.startswith("Invalid Input Error: CSV Error on Line: 2")
    assert "not utf-8 encoded" in brief and "\n" not in brief
    assert "file = " not in brief and "Original Line" not in brief


def test_unreadable_file_is_a_problem_not_a_failure(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "broken.parquet").write_bytes(b"this is not parquet")
    (data / "fine.csv").write_text("a\n1\n")
    svc = open_service(empty_workspace)
    tables = svc.show_tables()
    assert [p["source"] for p in tables["problems"]] == ["data/broken.parquet"]
    assert '"fine"' in {t["qualified_name"] for t in tables["tables"]}
    assert (data / "broken.parquet").read_bytes() == b"this is not parquet"  # left as it is


def test_changed_added_and_removed_files_are_re_registered(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "t.csv").write_text("a\n1\n")
    svc = open_service(empty_workspace)
    assert svc.run_query("SELECT * FROM t")["columns"] == [{"name": "a", "type": "BIGINT"}]
    (data / "t.csv").write_text("a,b\n1,x\n2,y\n")
    (data / "new.csv").write_text("z\n9\n")
    report = svc.refresh_sources()
    assert report["changed"] == [str(data / "t.csv")] and report["added"] == [str(data / "new.csv")]
    assert [c["name"] for c in svc.run_query("SELECT * FROM t")["columns"]] == ["a", "b"]
    (data / "new.csv").unlink()
    assert svc.refresh_sources()["removed"] == [str(data / "new.csv")]
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT * FROM new")
    assert info.value.code in ("TABLE_NOT_FOUND", "QUERY_REFUSED_OUTSIDE_WORKSPACE")


def test_watcher_re_registers_a_changed_workbook(sample_workspace, open_service):
    import xlsxwriter

    svc = open_service(sample_workspace)
    svc.start_watching(debounce=0.1)
    book = xlsxwriter.Workbook(str(sample_workspace / "data" / "targets.xlsx"))
    sheet = book.add_worksheet("Regional")
    sheet.write_row(0, 0, ["region", "target"])
    sheet.write_row(1, 0, ["XX", 5])
    book.close()
    deadline = time.monotonic() + 10
    names = set()
    while time.monotonic() < deadline:
        # the sources' own table list, which only the watcher's refresh updates
        names = {t.qualified_name for t in svc.sources.tables()}
        if '"targets"."Segments"' not in names:
            break
        time.sleep(0.1)
    assert '"targets"."Segments"' not in names and '"targets"."Regional"' in names
    rows = svc.fetch_rows('"targets"."Regional"', 0, 10)
    assert rows == [("XX", 5)]


def test_sheet_without_header_gets_excel_column_names(empty_workspace, open_service):
    import xlsxwriter

    book = xlsxwriter.Workbook(str(empty_workspace / "data" / "raw.xlsx"))
    sheet = book.add_worksheet("Sheet 1")
    sheet.write_row(0, 0, [1, "a", 2.5])
    sheet.write_row(1, 0, [2, "b", None])
    book.close()
    svc = open_service(empty_workspace)
    schema = svc.read_schema('"raw"."Sheet 1"')
    assert [(c["name"], c["type"]) for c in schema["columns"]] == [
        ("A", "BIGINT"),
        ("B", "VARCHAR"),
        ("C", "DOUBLE"),
    ]


def test_a_header_with_blank_or_repeated_names_is_still_a_header(empty_workspace, open_service):
    import xlsxwriter

    book = xlsxwriter.Workbook(str(empty_workspace / "data" / "sales.xlsx"))
    sheet = book.add_worksheet("Q1")
    sheet.write_row(0, 0, ["region", "amount", "amount", ""])
    sheet.write_row(1, 0, ["DE", 10, 12.5, 1])
    sheet.write_row(2, 0, ["FR", 7, 3.5, 2])
    words = book.add_worksheet("Words")  # only text: a repeated first row is data
    words.write_row(0, 0, ["yes", "yes"])
    words.write_row(1, 0, ["no", "maybe"])
    book.close()
    svc = open_service(empty_workspace)
    schema = svc.read_schema('"sales"."Q1"')
    assert [(c["name"], c["type"]) for c in schema["columns"]] == [
        ("region", "VARCHAR"),
        ("amount", "BIGINT"),
        ("amount_2", "DOUBLE"),
        ("D", "BIGINT"),
    ]
    assert svc.run_query('SELECT sum(amount_2) FROM "sales"."Q1"')["preview"] == [[16.0]]
    assert svc.run_query('SELECT count(*) FROM "sales"."Words"')["preview"] == [[2]]


def test_decimal_commas_in_a_semicolon_file_are_numbers(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "umsatz.csv").write_text(
        "datum;betrag;menge;notiz\n03.01.2025;1.234,50;3;a,b\n04.01.2025;99,9;4;c\n"
    )
    # decimal points already in use: a comma in another column must not change them
    (data / "points.csv").write_text("price;code\n1.5;3,4\n2.25;5,6\n")
    svc = open_service(empty_workspace)
    schema = {c["name"]: c["type"] for c in svc.read_schema("umsatz")["columns"]}
    assert schema == {"datum": "DATE", "betrag": "DOUBLE", "menge": "BIGINT", "notiz": "VARCHAR"}
    assert svc.run_query("SELECT sum(betrag) FROM umsatz")["preview"] == [[1334.4]]
    assert svc.run_query("SELECT list(price ORDER BY price), list(code ORDER BY code) FROM points")[
        "preview"
    ] == [[[1.5, 2.25], ["3,4", "5,6"]]]


def test_a_folder_that_cannot_be_one_table_is_listed_with_the_reason(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "mixed").mkdir()
    (data / "mixed" / "a.csv").write_text("x\n1\n")
    (data / "mixed" / "b.json").write_text('[{"x": 2}]')
    (data / "parts" / "year=2025").mkdir(parents=True)
    (data / "parts" / "year=2025" / "p.csv").write_text("x\n3\n")
    (data / "notes").mkdir()  # no data files at all: not a table, not a problem
    (data / "notes" / "readme.md").write_text("hello")
    svc = open_service(empty_workspace)
    listing = svc.show_tables()
    assert [p["source"] for p in listing["problems"]] == ["data/mixed"]
    assert "mixes csv, json files" in listing["problems"][0]["error"]
    assert svc.run_query("SELECT x, year FROM parts")["preview"] == [[3, 2025]]
    assert "notes" not in {t["name"] for t in listing["tables"]}


def _write_parquet(path, select: str, mtime_ns: int) -> None:
    import os

    import duckdb

    con = duckdb.connect()
    con.execute(f"COPY ({select}) TO '{path}' (FORMAT parquet, COMPRESSION uncompressed)")
    con.close()
    os.utime(path, ns=(mtime_ns, mtime_ns))


def _footer_cache(svc) -> bool:
    return svc.engine.execute("SELECT current_setting('parquet_metadata_cache')")[0][0]


def test_a_command_line_process_reads_a_rewritten_parquet_file_anew(empty_workspace):
    """A process that ends with its command keeps Parquet footers (issue 33). A file
    replaced by another (other rows, other columns, an older time, as a copy that keeps its
    source's time makes) is still read afresh."""
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    path = empty_workspace / "data" / "t.parquet"
    hour_ago = time.time_ns() - 3600 * 10**9  # DuckDB keeps no footer of a file under 10 s old
    _write_parquet(path, "SELECT range AS a FROM range(3)", hour_ago)
    ws = Workspace.open(empty_workspace)
    svc = QueryService(ws, QuerySettings(), short_lived=True)
    try:
        assert _footer_cache(svc) is True
        assert svc.run_query("SELECT count(*) AS n, sum(a) AS s FROM t")["preview"] == [[3, 3]]
        _write_parquet(
            path, "SELECT range AS a, 'x' || range AS b FROM range(1000)", hour_ago - 600 * 10**9
        )
        svc.refresh_sources()
        result = svc.run_query("SELECT count(*) AS n, sum(a) AS s, max(b) AS b FROM t")
        assert result["preview"] == [[1000, 499500, "x999"]]
    finally:
        svc.close()
        ws.close()


def test_the_app_reads_a_parquet_file_rewritten_in_place_with_its_time_set_back(
    empty_workspace, open_service
):
    """A long-lived process keeps no Parquet footer: a file overwritten in place at the same
    size, its modification time set back to the old one (``rsync --inplace -t`` can), is
    read with its new statistics and rows. With DuckDB's footer cache on, the same engine
    answered from the old footer: min 0, max 999, and no row above 4000."""
    path = empty_workspace / "data" / "t.parquet"
    other = empty_workspace / "other.parquet"
    hour_ago = time.time_ns() - 3600 * 10**9
    _write_parquet(path, "SELECT range::INT AS a FROM range(1000)", hour_ago)
    _write_parquet(other, "SELECT (range + 5000)::INT AS a FROM range(1000)", hour_ago)
    assert path.stat().st_size == other.stat().st_size
    svc = open_service(empty_workspace)
    assert _footer_cache(svc) is False
    assert svc.run_query("SELECT min(a) AS lo, max(a) AS hi FROM t")["preview"] == [[0, 999]]
    with open(path, "r+b") as f:
        f.write(other.read_bytes())
    import os

    os.utime(path, ns=(hour_ago, hour_ago))
    svc.refresh_sources()
    assert svc.run_query("SELECT min(a) AS lo, max(a) AS hi FROM t")["preview"] == [[5000, 5999]]
    assert svc.run_query("SELECT count(*) AS n FROM t WHERE a > 4000")["preview"] == [[1000]]
