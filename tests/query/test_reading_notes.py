"""A CSV read differently from what it says is never silent: what the reader skipped,
which header it ignored and how it changed quoting reach the listing and every result;
the analyst can choose the header row (kept in the workspace, never in the file)."""

from __future__ import annotations

import json

import pytest


def _entry(service, name: str) -> dict:
    return next(t for t in service.show_tables()["tables"] if t["name"] == name)


def test_a_dropped_header_and_a_stray_quote_are_reported(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "q.csv").write_text('a;b\n"unterminated,1\n')
    svc = open_service(empty_workspace)
    notes = _entry(svc, "q")["notes"]
    assert any(n.startswith("line 1 skipped") for n in notes), notes
    assert any(n.startswith("no header line found: line 2 is read as data") for n in notes)
    assert any("quotes are read as text" in n and "line 2" in n for n in notes)
    result = svc.run_query("SELECT * FROM q")
    assert [f"data/q.csv: {n}" for n in notes] == [
        w for w in result["warnings"] if w.startswith("data/q.csv")
    ]
    assert result["step"]["warnings"] == result["warnings"]  # the ledger keeps them too
    assert svc.validate_query("SELECT * FROM q")["warnings"][: len(notes)] == [
        f"data/q.csv: {n}" for n in notes
    ]
    assert svc.read_schema("q")["notes"] == notes


def test_a_title_line_skipped_is_reported_with_its_line(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "titled.csv").write_text(
        "Report for Q1, 2025\nid,v,w\n" + "".join(f"{i},{i},{i}\n" for i in range(50))
    )
    (data / "plain.csv").write_text("id,v\n1,2\n")
    svc = open_service(empty_workspace)
    assert _entry(svc, "titled")["notes"] == ["line 1 skipped: taken for a title above the table"]
    assert "notes" not in _entry(svc, "plain")
    result = svc.run_query("SELECT sum(w) FROM titled JOIN plain USING (id)")
    assert result["warnings"] == [
        "data/titled.csv: line 1 skipped: taken for a title above the table"
    ]
    assert svc.run_query("SELECT * FROM plain")["warnings"] == []


def test_the_sample_workspace_reads_without_notes(sample_service):
    assert [t["source"] for t in sample_service.show_tables()["tables"] if t.get("notes")] == []


def test_the_analyst_chooses_the_header_row(empty_workspace, open_service):
    from lantide.query.file_rules import set_header_row

    data = empty_workspace / "data"
    text = "exported 2025-01-03\nby: finance\nid,amount\n1,10\n2,32\n"
    (data / "export.csv").write_text(text)
    svc = open_service(empty_workspace)
    set_header_row(empty_workspace, "data/export.csv", 3)
    result = svc.run_query("SELECT sum(amount) AS total FROM export")
    assert result["preview"] == [[42]]
    assert result["warnings"] == [
        "data/export.csv: the column names are on line 3, as set for this file; lines 1-2 skipped"
    ]
    set_header_row(empty_workspace, "data/export.csv", 0)
    rows = svc.run_query("SELECT * FROM export")
    # every line is data: as one column (no delimiter on the first lines), five rows
    assert [c["name"] for c in rows["columns"]] == ["column0"] and rows["row_count"] == 5
    assert rows["warnings"][0].startswith("data/export.csv: no header line, as set for this file")
    set_header_row(empty_workspace, "data/export.csv", None)
    assert not any("as set" in n for n in _entry(svc, "export").get("notes", []))
    assert (data / "export.csv").read_text() == text  # the data file is never edited
    rules = json.loads((empty_workspace / ".lantide" / "data_files.json").read_text())
    assert rules == {"version": 1, "files": {}}


def test_a_rule_survives_a_reopen_and_a_broken_rules_file_is_kept(empty_workspace, open_service):
    from lantide.query.file_rules import set_header_row

    data = empty_workspace / "data"
    (data / "t.csv").write_text("x\ny\n1\n2\n")
    set_header_row(empty_workspace, "t.csv", 2)
    svc = open_service(empty_workspace)
    assert [c["name"] for c in svc.run_query("SELECT * FROM t")["columns"]] == ["y"]
    rules = empty_workspace / ".lantide" / "data_files.json"
    rules.write_text('{"version": 1, "files": {')  # a hand edit gone wrong
    with pytest.raises(Exception) as info:
        set_header_row(empty_workspace, "t.csv", 1)
    assert info.value.code == "RULES_UNREADABLE" and "not overwritten" in info.value.message
    assert rules.read_text() == '{"version": 1, "files": {'
    for bad in ("../outside.csv", "data/missing.csv"):
        with pytest.raises(Exception) as info:
            set_header_row(empty_workspace, bad, 1)
        assert info.value.code == "NOT_A_DATA_FILE"


def test_cli_lists_notes_and_sets_the_header_row(empty_workspace, run_cli):
    data = empty_workspace / "data"
    (data / "q.csv").write_text('a;b\n"unterminated,1\n')
    before = (data / "q.csv").read_bytes()
    listing = run_cli("tables", empty_workspace)
    assert listing.returncode == 0
    assert "note: data/q.csv: line 1 skipped" in listing.stderr
    assert "lantide file header" in listing.stderr
    as_json = json.loads(run_cli("tables", empty_workspace, "--json").stdout)
    assert any("line 1 skipped" in n for n in as_json["tables"][0]["notes"])
    chosen = run_cli("file", "header", empty_workspace, "data/q.csv", "1", "--json")
    assert chosen.returncode == 0, chosen.stderr
    out = json.loads(chosen.stdout)
    assert out["header_row"] == 1 and out["columns"] == ["a;b"]
    assert out["notes"][0] == "the column names are on line 1, as set for this file"
    query = run_cli("sql", empty_workspace, "SELECT count(*) FROM q")
    assert "warning: data/q.csv: the column names are on line 1" in query.stdout
    bad = run_cli("file", "header", empty_workspace, "data/q.csv", "first")
    assert bad.returncode == 2 and "'first'" in bad.stderr
    assert (data / "q.csv").read_bytes() == before


def test_a_new_header_row_recounts_the_rows_and_makes_reading_tabs_stale(
    sample_workspace, open_service
):
    from lantide.query import tabs as tab_files
    from lantide.query.file_rules import set_header_row

    (sample_workspace / "data" / "plain.csv").write_text("id,v\n1,2\n3,4\n")
    svc = open_service(sample_workspace)
    project = svc.workspace.project("q3-churn")
    tab_files.write_new_tab(project, "reads_plain", "SELECT count(*) AS n FROM plain")
    assert svc.run_sql_tab(project.dirname, "reads_plain")["preview"] == [[2]]
    assert _entry(svc, "plain")["row_count"] == 2
    set_header_row(sample_workspace, "data/plain.csv", 0)  # the header line becomes data
    assert _entry(svc, "plain")["row_count"] == 3
    states = {t["tab"]: t["state"] for t in svc.list_sql_tabs(project.dirname)}
    assert states["reads_plain"] == "stale"
    assert svc.run_sql_tab(project.dirname, "reads_plain")["preview"] == [[3]]
