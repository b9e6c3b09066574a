"""What a headless command does before its first statement (issue 33): it imports its own
command module only, and parses statements on the workspace's own database (no second
DuckDB database opened just to parse). Output, errors and exit codes stay as they were."""

from __future__ import annotations

import argparse
from pathlib import Path

from lantide.cli import main as cli_main
from tests.conftest import run_script_json

REPO = Path(__file__).resolve().parents[2]


def _registered(module_name: str) -> set[str]:
    import importlib

    parser = argparse.ArgumentParser(prog="lantide")
    subparsers = parser.add_subparsers(dest="command")
    importlib.import_module(f"lantide.cli.{module_name}").register(subparsers)
    return set(subparsers.choices)


def test_the_command_map_names_what_each_module_registers():
    by_module: dict[str, set[str]] = {}
    for command, module in cli_main.COMMANDS.items():
        by_module.setdefault(module, set()).add(command)
    assert set(by_module) == set(cli_main._MODULE_ORDER)
    for module in cli_main._MODULE_ORDER:
        assert _registered(module) == by_module[module], module


def test_the_whole_parser_still_lists_every_command():
    parser = cli_main.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == set(cli_main.COMMANDS)


_SCRIPT = r"""
import contextlib, io, json, sys
from lantide.cli.main import main
from lantide.query import guard_functions
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
print(json.dumps({
    "code": code,
    "out": out.getvalue(),
    "cli_modules": sorted(m for m in sys.modules if m.startswith("lantide.cli.")),
    "own_parser_database": guard_functions._parser is not None,
    "heavy": sorted(m for m in ("duckdb", "openai", "jinja2", "tiktoken", "mcp", "markdown_it",
                                "PySide6", "lantide.agent", "lantide.ui") if m in sys.modules),
}))
"""


def _run(*args: str) -> dict:
    return run_script_json(_SCRIPT, *args)


def test_sql_imports_its_own_command_module_and_parses_on_the_workspace_database(
    sample_workspace,
):
    report = _run("sql", str(sample_workspace), "SELECT count(*) AS n FROM customers")
    assert report["code"] == 0
    assert "2,000" in report["out"] or "2000" in report["out"]
    assert report["cli_modules"] == [
        "lantide.cli.common",
        "lantide.cli.main",
        "lantide.cli.output",
        "lantide.cli.query_commands",
    ]
    assert report["own_parser_database"] is False  # the guard parsed on the workspace's
    assert report["heavy"] == []  # nor the duckdb package's Python layer: DuckDB's core serves


def test_the_guard_still_refuses_what_duckdb_reads_differently(sample_workspace, run_cli):
    """The cross-check by DuckDB's parser runs on the workspace's database now: a file
    reader outside data/ is refused as before, with its exit code."""
    done = run_cli("sql", sample_workspace, "SELECT * FROM read_csv('/etc/passwd')")
    assert done.returncode == 1
    assert "code: " in done.stderr


def test_the_parser_falls_back_to_its_own_database_once_the_engine_is_closed(tmp_path):
    from lantide.query import guard_functions
    from lantide.query.engine import Engine

    engine = Engine(tmp_path / "cache.duckdb", allowed_dirs=[tmp_path], search_dir=tmp_path)
    calls = guard_functions.duckdb_calls("SELECT * FROM read_parquet('a.parquet')")
    assert calls is not None and [c.name for c in calls] == ["read_parquet"]
    engine.close()
    # the engine's database is closed (its file can be opened again at once) and parsing
    # goes on without it
    again = Engine(tmp_path / "cache.duckdb", allowed_dirs=[tmp_path], search_dir=tmp_path)
    again.close()
    calls = guard_functions.duckdb_calls("SELECT upper('x')")
    assert calls is not None and [c.name for c in calls] == ["upper"]


def test_the_bookkeeping_tables_are_made_once_and_a_hand_dropped_tab_is_forgotten(
    sample_workspace, open_service
):
    """Reopening reads which of Lantide's own tables exist instead of creating each again;
    what the catalog did on open (forget a cached table dropped by hand) still happens."""
    import duckdb

    from lantide.query import internal_tables

    service = open_service(sample_workspace)
    report = service.source_run_sql_tab("q3-churn", "q3_churn_by_region", "bench")
    assert report["ok"], report
    tables = internal_tables.existing(service.engine)
    assert {"sources", "cached_tables", "row_counts"} <= set(tables)
    assert {"notes", "options"} <= tables["sources"]
    service.close()
    service.workspace.close()

    con = duckdb.connect(str(sample_workspace / ".lantide" / "cache.duckdb"))
    con.execute('DROP TABLE "customer_quarters"')
    con.close()

    again = open_service(sample_workspace)
    assert again.catalog.cached("customer_quarters") is None
    assert again.catalog.cached("clean_orders") is not None
    states = {t["tab"]: t["state"] for t in again.list_sql_tabs("q3-churn")}
    assert states["customer_quarters"] == "never_run"
    # made only when missing: a table that is there is not made again
    assert internal_tables.ensure(again.engine, "row_counts", "SELECT 1/0") is False
