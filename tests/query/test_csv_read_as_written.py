"""A CSV's values are read as the file holds them, or the read says what it changed
(issue 27): each case is a small file written here, byte for byte."""

from __future__ import annotations

import json

import pytest

from tests.fakes.reading import assert_noted, listed, problem_of

# -- encoding ------------------------------------------------------------------------


def test_a_utf8_file_with_one_bad_byte_is_refused_with_its_line_and_offset(
    empty_workspace, open_service
):
    from lantide.query.file_rules import set_encoding

    data = empty_workspace / "data"
    body = "name,city\nJosé,Köln\n".encode() + b"Ren\xe9,Paris\n"
    (data / "mixed.csv").write_bytes(body)
    svc = open_service(empty_workspace)
    problem = problem_of(svc, "data/mixed.csv")
    assert "not valid UTF-8" in problem and "0xE9 on line 3, byte offset 25" in problem
    assert "lantide file encoding WORKSPACE data/mixed.csv latin-1" in problem
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT * FROM mixed")
    assert "byte offset 25" in info.value.message
    # The analyst's choice reads it, and says so.
    set_encoding(empty_workspace, "data/mixed.csv", "latin-1")
    notes = assert_noted(svc, '"mixed"', "read as Latin-1, as set for this file")
    assert len(notes) == 1
    assert svc.run_query("SELECT name FROM mixed ORDER BY name")["preview"] == [
        ["JosÃ©"],  # what the analyst asked for: the UTF-8 bytes as Latin-1
        ["René"],
    ]
    set_encoding(empty_workspace, "data/mixed.csv", None)  # auto: refused again
    assert "byte offset 25" in problem_of(svc, "data/mixed.csv")
    assert (data / "mixed.csv").read_bytes() == body


def test_a_file_that_is_not_utf8_anywhere_is_read_as_latin1_with_a_note(
    empty_workspace, open_service
):
    data = empty_workspace / "data"
    (data / "export.csv").write_bytes("name;city\nJosé;Köln\nAnna;München\n".encode("latin-1"))
    (data / "plain.csv").write_text("name,city\nJosé,Köln\n")  # UTF-8: no note
    svc = open_service(empty_workspace)
    assert_noted(
        svc, '"export"', "read as Latin-1: the file is not UTF-8 anywhere", "0xE9 on line 2"
    )
    assert svc.run_query("SELECT * FROM export ORDER BY name")["preview"] == [
        ["Anna", "München"],
        ["José", "Köln"],
    ]
    assert "notes" not in listed(svc, '"plain"')
    assert svc.run_query("SELECT * FROM plain")["preview"] == [["José", "Köln"]]


def test_windows_1252_bytes_are_refused_not_read_as_latin1(empty_workspace, open_service):
    """DuckDB's Latin-1 refuses 0x80-0x9F (the euro sign and curly quotes of Windows-1252):
    the problem names the byte and its line rather than "neither UTF-8 nor Latin-1"."""
    data = empty_workspace / "data"
    (data / "prices.csv").write_bytes("item;price\nCafé;3\n".encode("latin-1") + b"Tea;2 \x80\n")
    svc = open_service(empty_workspace)
    problem = problem_of(svc, "data/prices.csv")
    assert "neither UTF-8 nor Latin-1 text: the byte 0x80 on line 3, byte offset 24" in problem


def test_utf8_far_into_a_latin1_file_still_refuses_it(empty_workspace, open_service):
    """The sample that decides is the first megabyte; a file that is Latin-1 there is
    looked at whole before it is read as Latin-1."""
    data = empty_workspace / "data"
    latin = "id,name\n" + "".join(f"{i},Andr\xe9 {i}\n" for i in range(70_000))
    body = latin.encode("latin-1") + "70000,Zoë\n".encode()
    assert len(body) > 1 << 20
    (data / "long.csv").write_bytes(body)
    svc = open_service(empty_workspace)
    assert "0xE9 on line 2, byte offset 14" in problem_of(svc, "data/long.csv")


def test_cli_chooses_the_encoding(empty_workspace, run_cli):
    data = empty_workspace / "data"
    (data / "mixed.csv").write_bytes(b"a,b\n\xc3\xa9,1\n\xe9,2\n")
    listing = run_cli("tables", empty_workspace)
    assert "problem: data/mixed.csv: data/mixed.csv is not valid UTF-8" in listing.stderr
    chosen = run_cli("file", "encoding", empty_workspace, "data/mixed.csv", "latin1", "--json")
    assert chosen.returncode == 0, chosen.stderr
    out = json.loads(chosen.stdout)
    assert out["encoding"] == "latin-1" and out["columns"] == ["a", "b"]
    assert out["notes"] == ["read as Latin-1, as set for this file"]
    rules = json.loads((empty_workspace / ".lantide" / "data_files.json").read_text())
    assert rules["files"] == {"data/mixed.csv": {"encoding": "latin-1"}}
    bad = run_cli("file", "encoding", empty_workspace, "data/mixed.csv", "klingon")
    assert bad.returncode == 1 and "klingon" in bad.stderr and "latin-1" in bad.stderr
    auto = run_cli("file", "encoding", empty_workspace, "data/mixed.csv", "auto")
    assert auto.returncode == 0 and "not valid UTF-8" in auto.stderr


# -- decimal commas ------------------------------------------------------------------


def test_decimal_commas_only_where_every_value_is_written_so(empty_workspace, open_service):
    data = empty_workspace / "data"
    body = (
        "datum;betrag;version;mixed;menge\n"
        "03.01.2025;1.234,50;2.2.2;5.555;3\n"
        "04.01.2025;99,9;1.0.1;1,5;4\n"
        "05.01.2025;;3.1.4;2;5\n"
    )
    (data / "umsatz.csv").write_text(body)
    svc = open_service(empty_workspace)
    schema = {c["name"]: c["type"] for c in svc.read_schema("umsatz")["columns"]}
    assert schema == {
        "datum": "DATE",
        "betrag": "DOUBLE",
        "version": "VARCHAR",
        "mixed": "VARCHAR",
        "menge": "BIGINT",
    }
    rows = svc.run_query("SELECT betrag, version, mixed FROM umsatz ORDER BY datum")["preview"]
    assert rows == [[1234.5, "2.2.2", "5.555"], [99.9, "1.0.1", "1,5"], [None, "3.1.4", "2"]]
    notes = assert_noted(svc, '"umsatz"', "column 'betrag' read as numbers with a decimal comma")
    assert notes == [
        "column 'betrag' read as numbers with a decimal comma ('1.234,50' is 1234.5); "
        "all 2 of its values are written so"
    ]


def test_two_separators_of_a_kind_keep_a_column_as_text(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "big.csv").write_text("id;amount\n1;1.234.567,89\n2;12,5\n")
    (data / "codes.csv").write_text("id;code;name\n1;12,5;anna\n2;12,5,1;bob\n3;7,25;carl\n")
    svc = open_service(empty_workspace)
    assert svc.run_query("SELECT amount FROM big ORDER BY id")["preview"] == [
        ["1.234.567,89"],
        ["12,5"],
    ]
    assert svc.run_query("SELECT code FROM codes ORDER BY id")["preview"] == [
        ["12,5"],
        ["12,5,1"],
        ["7,25"],
    ]
    assert "notes" not in listed(svc, '"big"') and "notes" not in listed(svc, '"codes"')


# -- rows lost to quotes -------------------------------------------------------------

# DuckDB's data/csv/unescaped_quotes/unescaped_quote_new_line.csv: quotes that are not
# escaped, across line breaks. DuckDB reads it as 11 lines of one column.
UNESCAPED_QUOTES_ACROSS_LINES = b"".join(
    b'%d;"pedro "pdet" \n%s"\n' % (i, b"ho;landa" if i == 3 else b"holanda") for i in range(1, 7)
).rstrip(b"\n")


def test_quotes_across_line_breaks_are_never_an_empty_table(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "pedro.csv").write_bytes(UNESCAPED_QUOTES_ACROSS_LINES)
    svc = open_service(empty_workspace)
    entry = listed(svc, '"pedro"')
    assert entry["row_count"] != 0  # no count: reading it fails, it is not "0 rows"
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT * FROM pedro")
    assert "Line: 2" in info.value.message and "Expected Number of Columns: 2" in (
        info.value.message
    )


def _columns(svc, table: str) -> list[tuple[str, str]]:
    return [(c["name"], c["type"]) for c in svc.read_schema(table)["columns"]]


def _view(svc, name: str, reader: str) -> None:
    svc.engine.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM {reader}')


def test_a_reader_that_reads_no_rows_from_lines_of_data_is_refused(empty_workspace, open_service):
    """The check behind every registration, against a reader that DuckDB lets read the
    file above into no rows without an error (the quote left at its default)."""
    from lantide.query import lost_records

    path = empty_workspace / "data" / "pedro.csv"
    path.write_bytes(UNESCAPED_QUOTES_ACROSS_LINES + b'\n7;"fine"\n8;ok\n')
    svc = open_service(empty_workspace)
    _view(
        svc,
        "swallowed",
        f"read_csv('{path}', delim = ';', header = true, auto_detect = false, "
        "columns = {'id': 'VARCHAR', 'name': 'VARCHAR'})",
    )
    assert svc.engine.execute('SELECT count(*) FROM "swallowed"') == [(0,)]
    with pytest.raises(Exception) as info:
        svc.engine.run(lambda cur: lost_records.check(cur, path, "swallowed", 1))
    assert info.value.code == "DATA_FILE_NO_ROWS"
    assert "13 lines of data" in info.value.message and "line 2 has an odd number" in (
        info.value.message
    )


def test_a_reader_that_drops_lines_says_how_many(empty_workspace, open_service):
    from lantide.query import lost_records

    data = empty_workspace / "data"
    (data / "dropped.csv").write_bytes(b'id,name\n1,"multi\nline"\n2,"open\n3,x,extra\n4,y\n')
    (data / "whole.csv").write_bytes(b'id,name\n1,"multi\nline"\n2,ok\n')
    svc = open_service(empty_workspace)
    for name in ("dropped", "whole"):
        _view(
            svc,
            f"{name}_view",
            f"read_csv('{data / name}.csv', ignore_errors = true, delim = ',', header = true, "
            "auto_detect = false, columns = {'id': 'VARCHAR', 'name': 'VARCHAR'})",
        )
    assert svc.engine.execute('SELECT * FROM "dropped_view"') == [("1", "multi\nline")]
    note = svc.engine.run(
        lambda cur: lost_records.check(cur, data / "dropped.csv", "dropped_view", 1)
    )
    assert note == (
        "1 rows read from 5 lines of data: 3 lines are in no row (line 2 has an odd number "
        "of quotes); quotes across line breaks may have joined or dropped them"
    )
    assert svc.engine.execute('SELECT count(*) FROM "whole_view"') == [(2,)]
    assert (
        svc.engine.run(lambda cur: lost_records.check(cur, data / "whole.csv", "whole_view", 1))
        is None
    )


# -- a header line that ends with a delimiter ---------------------------------------


def test_a_header_with_a_trailing_comma_reads_as_duckdb_pads_it(empty_workspace, open_service):
    data = empty_workspace / "data"
    # DuckDB's data/csv/locations_header_trailing_comma.csv, and an export like it
    (data / "locations.csv").write_bytes(b"id,name,lat,lon,\n1,name,0,0\n")
    (data / "export.csv").write_bytes(b"id,name,amount,\n1,a,2.5\n2,b,3\n")
    (data / "short.csv").write_bytes(b"id,name,amount,\n1,a,2.5\n2,b\n")
    svc = open_service(empty_workspace)
    result = svc.run_query("SELECT * FROM locations")
    assert [(c["name"], c["type"]) for c in result["columns"]] == [
        ("id", "BIGINT"),
        ("name", "VARCHAR"),
        ("lat", "BIGINT"),
        ("lon", "BIGINT"),
        ("column4", "VARCHAR"),
    ]
    assert result["preview"] == [[1, "name", 0, 0, None]]
    assert_noted(svc, '"export"', "line 1, the header, ends with ',' and the data lines do not")
    assert svc.run_query("SELECT sum(amount) FROM export")["preview"] == [[5.5]]
    with pytest.raises(Exception) as info:  # a line short of more than the empty name:
        svc.run_query("SELECT * FROM short")  # nothing padded, the strict reader stands
    assert "Line: 2" in info.value.message and "Expected Number of Columns: 4" in (
        info.value.message
    )


def test_a_file_registered_by_an_older_reader_is_read_anew(empty_workspace, open_service):
    """A cache made before these rules holds the old reader's view (Latin-1 for a mixed
    file): the registration records the readers' version, so it is read anew."""
    data = empty_workspace / "data"
    (data / "mixed.csv").write_bytes("a\nJosé\n".encode() + b"Ren\xe9\n")
    svc = open_service(empty_workspace)
    assert "not valid UTF-8" in problem_of(svc, "data/mixed.csv")
    svc.engine.execute(
        "UPDATE _lantide.sources SET error = NULL, options = NULL, notes = '[]'"
    )  # as the older reader left it
    svc.engine.execute(
        f"CREATE VIEW mixed AS SELECT * FROM read_csv('{data / 'mixed.csv'}', encoding = 'latin-1')"
    )
    svc.close()
    svc.workspace.close()
    again = open_service(empty_workspace)
    assert "not valid UTF-8" in problem_of(again, "data/mixed.csv")


def test_a_bad_row_far_down_a_semicolon_file_fails_its_query_not_its_listing(
    empty_workspace, open_service
):
    """The decimal-comma scan reads the whole file on a scratch connection: a bad row does
    not end the registration (nor is the column, not read whole, turned into numbers);
    the query names the row."""
    data = empty_workspace / "data"
    rows = "".join(f"{i};{i},5;x\n" for i in range(30_000))  # past the sniffer's sample
    (data / "long.csv").write_text("id;amount;note\n" + rows + "30000;1,5;x;extra\n")
    svc = open_service(empty_workspace)
    assert svc.show_tables()["problems"] == []
    assert dict(_columns(svc, "long"))["amount"] == "VARCHAR"
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT * FROM long")
    assert "Line: 30002" in info.value.message
