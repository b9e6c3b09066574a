"""A sheet's values are read as the workbook holds them, or the read says what it changed
(issue 27): workbooks written here with xlsxwriter, or as OpenDocument XML
(tests/fakes/ods.py); python-calamine reads both."""

from __future__ import annotations

import datetime

import pytest

from tests.fakes.ods import Error, ods_bytes
from tests.fakes.reading import assert_noted


def _xlsx(path, sheets) -> None:
    """``sheets``: {name: [(row, column, value or ("=formula", "#ERR!"), format), ...]}."""
    import xlsxwriter

    book = xlsxwriter.Workbook(str(path))
    for name, cells in sheets.items():
        sheet = book.add_worksheet(name)
        for row, column, value, *number_format in cells:
            fmt = book.add_format({"num_format": number_format[0]}) if number_format else None
            if isinstance(value, tuple):
                sheet.write_formula(row, column, value[0], fmt, value[1])
            elif isinstance(value, datetime.datetime):
                sheet.write_datetime(row, column, value, fmt)
            else:
                sheet.write(row, column, value, fmt)
    book.close()


def _columns(svc, table: str) -> list[tuple[str, str]]:
    return [(c["name"], c["type"]) for c in svc.read_schema(table)["columns"]]


# -- error cells ---------------------------------------------------------------------


def test_error_cells_are_null_with_their_text_beside_and_a_note(empty_workspace, open_service):
    _xlsx(
        empty_workspace / "data" / "book.xlsx",
        {
            "S": [
                (0, 0, "v"),
                (0, 1, "w"),
                (1, 0, 10),
                (1, 1, "x"),
                (2, 0, ("=1/0", "#DIV/0!")),
                (2, 1, ("=NA()", "#N/A")),
                (3, 0, 20),
                (3, 1, ('=1+"a"', "#VALUE!")),
            ],
            "OnlyErrors": [(0, 0, ("=1/0", "#DIV/0!")), (1, 0, ("=NA()", "#N/A"))],
        },
    )
    svc = open_service(empty_workspace)
    assert _columns(svc, '"book"."S"') == [
        ("v", "BIGINT"),
        ("v__error", "VARCHAR"),
        ("w", "VARCHAR"),
        ("w__error", "VARCHAR"),
    ]
    result = svc.run_query('SELECT sum(v) AS total, count(v__error) AS errors FROM "book"."S"')
    assert result["preview"] == [[30, 1]]
    note = (
        "sheet 'S': 3 error cell(s) read as NULL, their text kept in v__error, w__error: "
        "A3 (#DIV/0!), B3 (#N/A), B4 (#VALUE!)"
    )
    assert f"data/book.xlsx: {note}" in result["warnings"]
    assert assert_noted(svc, '"book"."S"', note) == [note]
    only = svc.run_query('SELECT * FROM "book"."OnlyErrors"')
    assert only["row_count"] == 2 and only["preview"] == [[None, "#DIV/0!"], [None, "#N/A"]]
    assert_noted(svc, '"book"."OnlyErrors"', "A1 (#DIV/0!), A2 (#N/A)")


def test_error_cells_of_an_opendocument_sheet(empty_workspace, open_service):
    (empty_workspace / "data" / "calc.ods").write_bytes(
        ods_bytes({"S": [["v"], [10], [Error("#DIV/0!")], [20]]})
    )
    svc = open_service(empty_workspace)
    result = svc.run_query('SELECT * FROM "calc"."S"')
    assert result["preview"] == [[10, None], [None, "#DIV/0!"], [20, None]]
    assert_noted(svc, '"calc"."S"', "1 error cell(s) read as NULL", "A3 (#DIV/0!)")


# -- the size guard counts the range in use ------------------------------------------


def test_a_libreoffice_sheet_is_not_refused_for_its_filler(empty_workspace, open_service):
    """LibreOffice runs each sheet's rows to column XFD and the sheet to row 1,048,576
    with empty filler; only the cells in use count against query.max_sheet_cells."""
    data = empty_workspace / "data"
    (data / "saved.ods").write_bytes(
        ods_bytes({"Data": [["region", "amount"], ["DE", 10], ["FR", 7]], "Notes": [["n"]]})
    )
    svc = open_service(empty_workspace)
    assert svc.show_tables()["problems"] == []
    assert svc.run_query('SELECT sum(amount) FROM "saved"."Data"')["preview"] == [[17]]


def test_the_guard_still_counts_a_large_range_in_use(empty_workspace):
    from lantide.query.workbook_limits import ReadLimits, sheet_names

    path = empty_workspace / "data" / "wide.ods"
    path.write_bytes(ods_bytes({"S": [[1] * 200 for _ in range(60)]}))
    assert sheet_names(path, ReadLimits(max_sheet_cells=12_000)) == ["S"]
    with pytest.raises(Exception) as info:
        sheet_names(path, ReadLimits(max_sheet_cells=11_999))
    assert "spans 60 rows x 200 columns in use (12,000 cells)" in info.value.message


# -- the shape of the table ----------------------------------------------------------


def test_blank_rows_inside_the_table_are_kept(empty_workspace, open_service):
    _xlsx(
        empty_workspace / "data" / "gaps.xlsx",
        {"S": [(0, 0, "id"), (0, 1, "v"), (1, 0, 1), (1, 1, 10), (3, 0, 3), (3, 1, 30)]},
    )
    svc = open_service(empty_workspace)
    assert svc.run_query('SELECT * FROM "gaps"."S"')["preview"] == [
        [1, 10],
        [None, None],
        [3, 30],
    ]


def test_a_header_below_a_title_names_the_columns(empty_workspace, open_service):
    _xlsx(
        empty_workspace / "data" / "report.xlsx",
        {
            "Q1": [
                (0, 0, "Sales report Q1"),
                (2, 2, "region"),
                (2, 3, "amount"),
                (3, 2, "DE"),
                (3, 3, 10),
                (4, 2, "FR"),
                (4, 3, 7),
            ],
            "Bare": [(2, 2, 1), (2, 3, "a"), (3, 2, 2), (3, 3, "b")],  # no header, from C3
        },
    )
    svc = open_service(empty_workspace)
    assert _columns(svc, '"report"."Q1"') == [("region", "VARCHAR"), ("amount", "BIGINT")]
    assert svc.run_query('SELECT sum(amount) FROM "report"."Q1"')["preview"] == [[17]]
    assert_noted(
        svc,
        '"report"."Q1"',
        "sheet 'Q1': row 1 (A1) skipped: taken for a title above the table; the column "
        "names are on row 3",
    )
    assert _columns(svc, '"report"."Bare"') == [("C", "BIGINT"), ("D", "VARCHAR")]


# -- mixed columns spelled as the sheet shows them -----------------------------------


def test_a_mixed_column_spells_values_as_the_sheet_shows_them(empty_workspace, open_service):
    _xlsx(
        empty_workspace / "data" / "mixed.xlsx",
        {
            "S": [
                (0, 0, "m"),
                (1, 0, True),
                (2, 0, "text"),
                (3, 0, 1.5),
                (4, 0, datetime.datetime(2024, 1, 2, 3, 4, 5), "yyyy-mm-dd hh:mm:ss"),
                (5, 0, 10.652893518518518, "[h]:mm:ss"),
                (6, 0, 0.1 + 0.2),
            ]
        },
    )
    svc = open_service(empty_workspace)
    assert svc.run_query('SELECT m FROM "mixed"."S"')["preview"] == [
        ["TRUE"],
        ["text"],
        ["1.5"],
        ["2024-01-02 03:04:05"],
        ["255:40:10"],
        ["0.3"],
    ]


def test_a_sheet_read_on_first_query_carries_its_notes_from_that_query_on(
    empty_workspace, open_service, monkeypatch
):
    """A large workbook's sheet is read when a query first names it: that query's
    warnings already have the note, and the listing keeps it across a reopen."""
    from lantide.query import sheets

    monkeypatch.setattr(sheets, "INLINE_WORKBOOK_BYTES", 0)  # every book read lazily
    _xlsx(
        empty_workspace / "data" / "big.xlsx",
        {"S": [(0, 0, "v"), (1, 0, 1), (2, 0, ("=1/0", "#DIV/0!"))]},
    )
    svc = open_service(empty_workspace)
    assert svc.run_query('SELECT * FROM "big"."S"')["warnings"] == [
        "data/big.xlsx: sheet 'S': 1 error cell(s) read as NULL, their text kept in "
        "v__error: A3 (#DIV/0!)"
    ]
    svc.close()
    svc.workspace.close()
    again = open_service(empty_workspace)
    assert_noted(again, '"big"."S"', "A3 (#DIV/0!)")


def test_a_repeated_error_cell_is_counted_not_spelled_out(empty_workspace, open_service):
    """An error cell repeated over 9,000 x 10,000 cells (a few hundred bytes) is refused by
    the size guard without listing its 90 million cells; a small grid of it is read."""
    import time

    from tests.fakes.ods import error_grid, package

    data = empty_workspace / "data"
    (data / "bomb.ods").write_bytes(package(error_grid(9_000, 10_000)))
    (data / "small.ods").write_bytes(package(error_grid(2, 3)))
    started = time.monotonic()
    svc = open_service(empty_workspace)
    problems = {p["source"]: p["error"] for p in svc.show_tables()["problems"]}
    assert time.monotonic() - started < 60  # (was: a dict of 90 million cells)
    assert "spans 9,000 rows x 10,000 columns in use" in problems["data/bomb.ods"]
    result = svc.run_query('SELECT * FROM "small"."S"')
    assert result["row_count"] == 2 and result["preview"][0] == [None, "#N/A"] * 3


def test_empty_styled_cells_at_the_sheets_far_end_are_not_counted(empty_workspace, open_service):
    """An .xlsx saved by LibreOffice can carry empty styled cells to row 1,048,576 and
    column XFD; calamine does not read them and the size guard does not count them."""
    from tests.fakes.bad_files import _HEAD, _TAIL, with_sheet_xml, workbook_bytes

    def sheet():
        yield _HEAD + b'<row r="1"><c r="A1" t="inlineStr"><is><t>v</t></is></c></row>'
        yield b'<row r="2"><c r="A2"><v>3</v></c><c r="B2" s="1"/></row>'
        yield b'<row r="1048576"><c r="A1048576" s="1"/><c r="XFD1048576" s="1"/></row>' + _TAIL

    with_sheet_xml(workbook_bytes({"S": [["x"]]}), empty_workspace / "data" / "lo.xlsx", 1, sheet())
    svc = open_service(empty_workspace)
    assert svc.run_query('SELECT * FROM "lo"."S"')["preview"] == [[3]]
