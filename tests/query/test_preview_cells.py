"""A preview cell is cut inside DuckDB: a huge value never crosses into Python.

The cut cell ends with a marker saying where it was cut; the result says how many were
cut, and each surface says how to get the whole value (the agent: max_cell_chars or
substr; the command line: --max-cell-chars; the grid: its cell viewer).
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from lantide.query.results import CELL_CHARS, cut_marker

BIG = 2_000_000
ROWS = 50  # 100 MB of text in the result


def _big_sql(rows: int = ROWS) -> str:
    return (
        f"SELECT i, repeat('x', {BIG}) AS big, 'small' AS s, "
        f"repeat('ab', {BIG // 2})::BLOB AS raw FROM range({rows}) t(i)"
    )


def _assert_cut(cell: str, cap: int) -> None:
    assert cell.endswith(cut_marker(cap))
    assert len(cell) <= cap * 2 + len(cut_marker(cap))  # BLOBs may be hex or base64


@pytest.mark.parametrize("label", [None, "big_cells"])
def test_preview_cells_are_cut_inside_duckdb(sample_service, label):
    tracemalloc.start()
    try:
        result = sample_service.run_query(_big_sql(), result_label=label)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 100 MB of cells, of which at most 200 rows x 2 x 10,001 characters reach Python
    assert peak < 30_000_000, f"{peak:,} bytes allocated in Python for the preview"
    assert result["row_count"] == ROWS and len(result["preview"]) == ROWS
    for row in result["preview"]:
        assert row[0] in range(ROWS) and row[2] == "small"
        assert row[1] == "x" * CELL_CHARS + cut_marker(CELL_CHARS)
        _assert_cut(row[3], CELL_CHARS)
    assert result["cells_cut"] == ROWS * 2 and result["cell_chars"] == CELL_CHARS
    assert any("cut at 10,000 characters" in w for w in result["warnings"])
    assert [c["name"] for c in result["columns"]] == ["i", "big", "s", "raw"]
    assert [c["type"] for c in result["columns"]][1:] == ["VARCHAR", "VARCHAR", "BLOB"]
    json.dumps(result)
    if label:  # the cached table keeps the whole values
        whole = sample_service.run_query("SELECT max(length(big)) FROM big_cells")
        assert whole["preview"] == [[BIG]]


def test_the_cap_can_be_changed_or_lifted(sample_service):
    short = sample_service.run_query("SELECT repeat('y', 500) AS v, 'ok' AS w", max_cell_chars=100)
    assert short["preview"][0] == ["y" * 100 + cut_marker(100), "ok"]
    whole = sample_service.run_query("SELECT repeat('y', 50000) AS v", max_cell_chars=0)
    assert whole["preview"] == [["y" * 50000]] and whole["cells_cut"] == 0
    exact = sample_service.run_query("SELECT repeat('z', 100) AS v", max_cell_chars=100)
    assert exact["preview"] == [["z" * 100]] and exact["cells_cut"] == 0


def test_duplicate_names_json_and_nulls_survive_the_projection(sample_service):
    sql = "SELECT 1 AS a, repeat('q', 20) AS a, NULL::VARCHAR AS n, '{\"k\": 1}'::JSON AS j"
    result = sample_service.run_query(sql, max_cell_chars=10)
    assert result["columns"] == sample_service.run_query(sql, max_cell_chars=0)["columns"]
    assert result["columns"][3]["type"] == "JSON"
    assert result["preview"] == [[1, "q" * 10 + cut_marker(10), None, '{"k": 1}']]


def test_a_tab_preview_is_capped_too(sample_workspace, open_service):
    from lantide.query import tabs as tab_files
    from lantide.workspace.model import Project

    svc = open_service(sample_workspace)
    tab_files.write_new_tab(
        Project.load(sample_workspace, "q3-churn"), "wide", "SELECT repeat('w', 30000) AS v\n"
    )
    result = svc.run_sql_tab("q3-churn", "wide")
    assert result["preview"] == [["w" * CELL_CHARS + cut_marker(CELL_CHARS)]]
    assert svc.run_sql_tab("q3-churn", "wide", max_cell_chars=0)["preview"] == [["w" * 30000]]


def test_cli_json_is_capped_and_says_how_to_get_the_whole_value(sample_workspace, run_cli):
    out = run_cli("sql", sample_workspace, "SELECT repeat('x', 1000000) AS big", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["preview"] == [["x" * CELL_CHARS + cut_marker(CELL_CHARS)]]
    assert any("--max-cell-chars" in w for w in result["warnings"])
    out = run_cli(
        "sql",
        sample_workspace,
        "SELECT repeat('x', 30000) AS big",
        "--json",
        "--max-cell-chars",
        "0",
    )
    assert json.loads(out.stdout)["preview"] == [["x" * 30000]]
    text = run_cli("sql", sample_workspace, "SELECT repeat('x', 30000) AS big")
    assert "--max-cell-chars" in text.stdout and len(text.stdout) < 25_000


def test_a_column_profile_cuts_long_values_inside_duckdb(sample_service):
    """The table browser's profile shows min, max and top values: cut like preview cells."""
    sample_service.run_query(
        "SELECT i % 3 AS k, repeat(chr(97 + (i % 3)::INTEGER), 3000000) AS big FROM range(30) t(i)",
        result_label="huge_text",
    )
    tracemalloc.start()
    try:
        profile = sample_service.profile_table("huge_text")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"{peak:,} bytes allocated in Python for the profile"
    big = next(c for c in profile["columns"] if c["name"] == "big")
    assert big["min"] == "a" * CELL_CHARS + cut_marker(CELL_CHARS)
    assert big["max"] == "c" * CELL_CHARS + cut_marker(CELL_CHARS)
    values = big["histogram"]["values"]
    assert [v["count"] for v in values] == [10, 10, 10]  # grouped on the whole values
    assert all(v["value"].endswith(cut_marker(CELL_CHARS)) for v in values)


def test_lists_and_structs_holding_long_text_are_cut_too(sample_service):
    sql = (
        "SELECT i, [repeat('x', 3000000)] AS l, {'k': repeat('y', 3000000), 'n': 1} AS st, "
        "[1, 2] AS small, NULL::VARCHAR[] AS none FROM range(20) t(i)"
    )
    tracemalloc.start()
    try:
        result = sample_service.run_query(sql)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 120 MB of text in the result; whole, it would all cross over
    assert peak < 30_000_000, f"{peak:,} bytes allocated in Python for the preview"
    first = result["preview"][0]
    for cell, start in ((first[1], "[xxx"), (first[2], "{'k': yyy")):
        assert cell.startswith(start) and cell.endswith(cut_marker(CELL_CHARS))
        assert len(cell) == CELL_CHARS + len(cut_marker(CELL_CHARS))
    assert first[3:] == [[1, 2], None]
    assert result["cells_cut"] == 40
    assert [c["type"] for c in result["columns"]][1:] == [
        "VARCHAR[]",
        "STRUCT(k VARCHAR, n INTEGER)",
        "INTEGER[]",
        "VARCHAR[]",
    ]


def test_the_cli_tells_the_preview_warnings_by_code_not_wording(sample_service, capsys):
    """`lantide sql` leaves out the preview's row note (its row line says it) and adds its
    own way to the whole value to a cut cell's warning, by the warnings' codes."""
    from lantide.cli.query_commands import CELL_HINT, _print_result, _with_cell_hint

    # 1,000 of the 120,000 orders: past the 200-row preview (its row note) without
    # 2.4 GB of repeated text (the whole table took 6-8 s for the same two warnings)
    result = sample_service.run_query(
        "SELECT repeat('x', 20000) AS v, o.* FROM orders o LIMIT 1000"
    )
    assert result["warning_codes"][:2] == ["PREVIEW_CUT", "PREVIEW_CELLS_CUT"]
    result["warnings"][:2] = ["Rows: reworded.", "Cells: reworded"]
    _print_result(_with_cell_hint(result))
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert lines[0] == f"warning: Cells: reworded; {CELL_HINT}"
    assert not any("Rows: reworded." in line for line in lines)
