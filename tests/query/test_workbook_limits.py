"""Workbooks are read bounded (inflated size, cells), lazily (a sheet when first queried)
and in isolation (one bad sheet or workbook is a problem line; the rest keeps working)."""

from __future__ import annotations

import json

import pytest

from lantide.query.errors import DataFileUnreadable
from tests.fakes.bad_files import (
    bomb_sheet,
    lie_about_size,
    ods_bytes,
    sparse_corners_sheet,
    with_sheet_xml,
    workbook_bytes,
)

GOOD = {"Good": [["region", "amount"], ["DE", 10], ["FR", 7]], "Other": [["x"], [1]]}


def _problems(service) -> dict[str, str]:
    return {p["source"]: p["error"] for p in service.show_tables()["problems"]}


def _tables(service) -> set[str]:
    return {t["qualified_name"] for t in service.show_tables()["tables"]}


def test_a_workbook_that_inflates_past_the_limit_is_a_problem_line(empty_workspace, open_service):
    data = empty_workspace / "data"
    bomb = with_sheet_xml(
        workbook_bytes(GOOD), data / "bomb.xlsx", 2, bomb_sheet(600_000)
    )  # ~9 MB of sheet XML, ~40 KB on disk
    before = bomb.read_bytes()
    (data / "fine.csv").write_text("a\n1\n")
    svc = open_service(empty_workspace, max_workbook_mb=4)
    problem = _problems(svc)["data/bomb.xlsx"]
    assert "inflates to" in problem and "4 MB" in problem
    assert "query.max_workbook_mb" in problem
    assert svc.run_query("SELECT count(*) FROM fine")["preview"] == [[1]]
    with pytest.raises(Exception) as info:
        svc.run_query('SELECT * FROM "bomb"."Good"')
    assert info.value.code == "DATA_FILE_UNREADABLE" and "max_workbook_mb" in info.value.message
    assert bomb.read_bytes() == before


def test_a_zip_that_declares_a_huge_inflated_size_is_refused_with_default_limits(
    empty_workspace, open_service
):
    data = empty_workspace / "data"
    path = data / "liar.xlsx"
    path.write_bytes(workbook_bytes(GOOD))
    lie_about_size(path, "xl/worksheets/sheet1.xml", 2_000_000_000)
    svc = open_service(empty_workspace)
    problem = _problems(svc)["data/liar.xlsx"]
    assert "inflates to 1.9 GB" in problem and "query.max_workbook_mb" in problem


def test_sheets_are_read_when_first_queried_and_a_large_one_fails_alone(
    empty_workspace, open_service
):
    data = empty_workspace / "data"
    # ~6 MB of sheet XML: more than a workbook read while listing, so nothing is read yet
    with_sheet_xml(
        workbook_bytes({**GOOD, "Huge": [["y"]]}), data / "book.xlsx", 3, bomb_sheet(400_000)
    )
    (data / "fine.csv").write_text("a\n1\n")
    svc = open_service(empty_workspace, max_sheet_cells=100_000)
    listing = svc.show_tables()
    assert listing["problems"] == []  # nothing was read yet, so nothing failed yet
    sheets = {t["qualified_name"]: t for t in listing["tables"] if t["kind"] == "excel_sheet"}
    assert set(sheets) == {'"book"."Good"', '"book"."Other"', '"book"."Huge"'}
    assert sheets['"book"."Good"']["row_count"] is None  # unknown until it is read
    assert svc.run_query('SELECT sum(amount) FROM "book"."Good"')["preview"] == [[17]]
    with pytest.raises(Exception) as info:
        svc.run_query('SELECT count(*) FROM "book"."Huge"')
    err = info.value
    assert err.code == "DATA_FILE_TOO_LARGE"
    assert "data/book.xlsx" in err.message and "'Huge'" in err.message
    assert "100,000 cells" in err.message and "query.max_sheet_cells" in err.message
    assert "max_sheet_cells" in err.hint
    problems = _problems(svc)
    assert list(problems) == ["data/book.xlsx"] and "Huge" in problems["data/book.xlsx"]
    with pytest.raises(Exception) as again:
        svc.read_schema('"book"."Huge"')
    assert again.value.code == "DATA_FILE_UNREADABLE"
    assert svc.run_query('SELECT count(*) FROM "book"."Other"')["preview"] == [[1]]
    assert svc.run_query("SELECT count(*) FROM fine")["preview"] == [[1]]
    rows = {t["qualified_name"]: t["row_count"] for t in svc.show_tables()["tables"]}
    assert rows['"book"."Good"'] == 2


def test_raising_the_limit_reads_the_sheet_at_the_next_open(empty_workspace, open_service):
    data = empty_workspace / "data"
    with_sheet_xml(workbook_bytes({"Big": [["y"]]}), data / "book.xlsx", 1, bomb_sheet(2_000))
    svc = open_service(empty_workspace, max_sheet_cells=1_000)
    with pytest.raises(DataFileUnreadable):
        svc.run_query('SELECT count(*) FROM "book"."Big"')
    svc.close()
    svc.workspace.close()
    again = open_service(empty_workspace, max_sheet_cells=5_000)
    assert again.show_tables()["problems"] == []
    # 2,000 cells of 16 a row: 125 rows, the first read as data (it holds numbers)
    assert again.run_query('SELECT count(*) FROM "book"."Big"')["preview"] == [[125]]


@pytest.mark.slow
def test_a_sheet_whose_cells_span_a_huge_grid_is_refused_before_reading(empty_workspace, run_cli):
    # Two cells, at A1 and XFD1048576: read as a dense grid this aborted the process.
    data = empty_workspace / "data"
    with_sheet_xml(
        workbook_bytes({**GOOD, "Corners": [["z"]]}), data / "book.xlsx", 3, sparse_corners_sheet()
    )
    (data / "fine.csv").write_text("a\n1\n")
    listing = run_cli("tables", empty_workspace, "--json")
    assert listing.returncode == 0, listing.stderr
    problems = json.loads(listing.stdout)["problems"]  # a small book: read while listing
    assert [p["source"] for p in problems] == ["data/book.xlsx"]
    assert "'Corners' spans 1,048,576 rows x 16,384 columns" in problems[0]["error"]
    count = run_cli("sql", empty_workspace, "SELECT count(*) AS n FROM fine", "--json")
    assert count.returncode == 0 and json.loads(count.stdout)["preview"] == [[1]]
    corners = run_cli("sql", empty_workspace, 'SELECT * FROM "book"."Corners"')
    assert corners.returncode == 1, corners.stderr
    assert "data/book.xlsx sheet 'Corners'" in corners.stderr
    assert "1,048,576 rows x 16,384 columns" in corners.stderr
    assert "query.max_sheet_cells" in corners.stderr
    assert "Traceback" not in corners.stderr
    good = run_cli("sql", empty_workspace, 'SELECT sum(amount) FROM "book"."Good"', "--json")
    assert good.returncode == 0 and json.loads(good.stdout)["preview"] == [[17]]


def test_a_sheet_that_is_not_xml_fails_alone_when_queried(empty_workspace, open_service):
    data = empty_workspace / "data"
    with_sheet_xml(
        workbook_bytes(GOOD),
        data / "book.xlsx",
        2,
        [b"<worksheet><sheetData><row r='1'><c><v>1</v></c><oops"],
    )
    svc = open_service(empty_workspace)
    assert svc.run_query('SELECT count(*) FROM "book"."Good"')["preview"] == [[2]]
    with pytest.raises(Exception) as info:
        svc.run_query('SELECT * FROM "book"."Other"')
    # a small book is read while registering: the query meets the problem it left
    assert info.value.code == "DATA_FILE_UNREADABLE"
    assert "data/book.xlsx" in info.value.message and "Other" in info.value.message
    assert "Other" in _problems(svc)["data/book.xlsx"]


def test_an_entry_that_inflates_past_what_it_declares_is_damaged(empty_workspace, open_service):
    data = empty_workspace / "data"
    path = with_sheet_xml(workbook_bytes(GOOD), data / "book.xlsx", 1, bomb_sheet(3_000))
    lie_about_size(path, "xl/worksheets/sheet1.xml", 100)
    svc = open_service(empty_workspace)
    with pytest.raises(Exception) as info:
        svc.run_query('SELECT * FROM "book"."Good"')
    assert info.value.code == "DATA_FILE_UNREADABLE"  # found while registering (small)
    assert "data/book.xlsx is not a readable workbook" in info.value.message
    assert "sheet 'Good' is damaged" in _problems(svc)["data/book.xlsx"]
    assert svc.run_query('SELECT * FROM "book"."Other"')["preview"] == [[1]]


def test_an_ods_whose_repeated_cells_span_a_huge_grid_is_refused_at_listing(
    empty_workspace, run_cli
):
    # ~1 KB: one cell repeated 10,000 times in each of 9,000 rows; read, it aborted the
    # process (calamine allocates the whole grid when the book is opened)
    data = empty_workspace / "data"
    (data / "bomb.ods").write_bytes(ods_bytes(9_000, 10_000))
    (data / "small.ods").write_bytes(ods_bytes(3, 2))
    (data / "fine.csv").write_text("a\n1\n")
    listing = run_cli("tables", empty_workspace, "--json")
    assert listing.returncode == 0, listing.stderr
    problems = {p["source"]: p["error"] for p in json.loads(listing.stdout)["problems"]}
    assert list(problems) == ["data/bomb.ods"]
    assert "'S' spans 9,000 rows x 10,000 columns" in problems["data/bomb.ods"]
    assert "query.max_sheet_cells" in problems["data/bomb.ods"]
    small = run_cli("sql", empty_workspace, 'SELECT count(*) AS n FROM "small"."S"', "--json")
    assert small.returncode == 0, small.stderr
    assert json.loads(small.stdout)["preview"] == [[3]]
