"""A data file that cannot be read is one problem line, named and explained: links out of
data/ are refused without being walked, and querying a failed file says why it failed."""

from __future__ import annotations

import json
import os

import pytest


def _problems(service) -> dict[str, str]:
    return {p["source"]: p["error"] for p in service.show_tables()["problems"]}


@pytest.fixture
def outside(tmp_path):
    """A folder outside the workspace, with data files and a subfolder."""
    root = tmp_path / "elsewhere"
    (root / "deep" / "deeper").mkdir(parents=True)
    (root / "a.csv").write_text("x\n1\n")
    (root / "deep" / "deeper" / "b.csv").write_text("x\n2\n")
    (tmp_path / "secret.csv").write_text("password\nhunter2\n")
    return root


def test_a_link_out_of_data_is_refused_without_walking_it(
    empty_workspace, open_service, outside, monkeypatch
):
    data = empty_workspace / "data"
    (data / "ext").symlink_to(outside, target_is_directory=True)
    (data / "secret.csv").symlink_to(outside.parent / "secret.csv")
    (data / "fine.csv").write_text("a\n1\n")
    listed = []
    real_scandir, real_listdir = os.scandir, os.listdir

    def scandir(path="."):
        listed.append(os.fspath(path))
        return real_scandir(path)

    def listdir(path="."):
        listed.append(os.fspath(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "listdir", listdir)
    svc = open_service(empty_workspace)
    problems = _problems(svc)
    svc.run_query("SELECT * FROM fine")  # every command checks data/ for changes
    assert set(problems) == {"data/ext", "data/secret.csv"}
    for source in problems:
        assert "outside" in problems[source] and "data/" in problems[source]
    assert str(outside) in problems["data/ext"]
    walked = [p for p in listed if p.startswith(str(outside)) or "/data/ext" in p]
    assert walked == []  # the refused folder was never listed
    names = {t["name"] for t in svc.show_tables()["tables"]}
    assert names == {"fine"}


def test_a_link_inside_data_still_reads(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "real").mkdir()
    (data / "real" / "p.csv").write_text("x\n5\n")
    (data / "alias").symlink_to(data / "real", target_is_directory=True)
    svc = open_service(empty_workspace)
    assert svc.run_query("SELECT sum(x) FROM alias")["preview"] == [[5]]


def test_querying_a_file_that_failed_says_it_failed_and_why(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "broken.parquet").write_bytes(b"PAR1 this is not parquet")
    (data / "products.csv").write_text("id\n1\n")
    svc = open_service(empty_workspace)
    problem = _problems(svc)["data/broken.parquet"]
    for call in (
        lambda: svc.run_query("SELECT * FROM broken"),
        lambda: svc.read_schema("broken"),
        lambda: svc.fetch_rows("broken", 0, 10),
    ):
        with pytest.raises(Exception) as info:
            call()
        err = info.value
        assert err.code == "DATA_FILE_UNREADABLE"
        assert "data/broken.parquet" in err.message and problem in err.message
        assert "Did you mean" not in err.message and "does not exist" not in err.message
        assert "data/" in err.hint
    result = svc.validate_query("SELECT * FROM broken")
    assert result["ok"] is False and result["error"] == "DATA_FILE_UNREADABLE"
    assert svc.run_query("SELECT count(*) FROM products")["preview"] == [[1]]


def test_querying_a_sheet_of_a_broken_workbook_says_the_workbook_failed(
    empty_workspace, open_service
):
    data = empty_workspace / "data"
    (data / "book.xlsx").write_bytes(b"PK\x03\x04 not really a zip")
    svc = open_service(empty_workspace)
    assert "data/book.xlsx" in _problems(svc)
    for sql in ('SELECT * FROM "book"."Sheet1"', "SELECT * FROM book"):
        with pytest.raises(Exception) as info:
            svc.run_query(sql)
        assert info.value.code == "DATA_FILE_UNREADABLE"
        assert "data/book.xlsx" in info.value.message


def test_a_workbook_named_without_a_sheet_lists_its_sheets(sample_service):
    with pytest.raises(Exception) as info:
        sample_service.run_query("SELECT * FROM targets")
    assert info.value.code == "TABLE_NOT_FOUND"
    assert '"targets"."Regional"' in info.value.message and "Did you mean" not in info.value.message


def test_a_failed_tab_input_names_the_file(sample_workspace, open_service):
    from lantide.query import tabs as tab_files

    (sample_workspace / "data" / "bad.json").write_text('{"a": [1, 2')
    svc = open_service(sample_workspace)
    project = svc.workspace.project("q3-churn")
    tab_files.write_new_tab(project, "reads_bad", "SELECT * FROM bad")
    with pytest.raises(Exception) as info:
        svc.run_sql_tab(project.dirname, "reads_bad")
    assert info.value.code == "DATA_FILE_UNREADABLE" and "data/bad.json" in info.value.message


def test_a_huge_line_is_a_problem_or_a_short_error_for_that_file_alone(
    empty_workspace, open_service
):
    data = empty_workspace / "data"
    (data / "early.csv").write_text("a,b\n1," + "y" * 3_000_000 + "\n")
    rows = "".join(f"{i},x\n" for i in range(30_000))
    (data / "late.csv").write_text("a,b\n" + rows + "2," + "y" * 3_000_000 + "\n")
    (data / "fine.csv").write_text("k\n1\n")
    svc = open_service(empty_workspace)
    problems = {p["source"]: p["error"] for p in svc.show_tables()["problems"]}
    assert "Maximum line size" in problems["data/early.csv"]
    with pytest.raises(Exception) as info:
        svc.run_query("SELECT count(*) FROM late")
    err = info.value
    assert err.code == "DATA_ERROR" and "late.csv" in err.message
    assert "Maximum line size" in err.message and "30002" in err.message
    assert len(err.message) < 1000  # the 3 MB line is not echoed back (nor to the model)
    assert "Possible" not in err.message and "longer than the reader takes" in err.hint
    assert svc.run_query("SELECT count(*) FROM fine")["preview"] == [[1]]


def test_a_json_file_of_huge_objects_is_refused_quickly_and_alone(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / "big.json").write_text(json.dumps([{"a": "x" * 20_000_000}]))
    (data / "fine.json").write_text(json.dumps([{"a": 1}, {"a": 2}]))
    svc = open_service(empty_workspace)
    problems = {p["source"]: p["error"] for p in svc.show_tables()["problems"]}
    assert "a JSON object of 19.1 MB, above the limit of 16 MB" in problems["data/big.json"]
    assert "query.max_json_object_mb" in problems["data/big.json"]
    assert svc.run_query("SELECT sum(a) FROM fine")["preview"] == [[3]]
