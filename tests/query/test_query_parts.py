"""The parts QueryService is composed of stand on their own (issue 14, item 2).

Each part is built here from what its constructor asks for, on a real workspace and its
real DuckDB file, without a QueryService: the statement runner runs statements through the
guard, the SQL tabs run a Source Run. And no part reaches into another one's private
methods: the modules of the parts only touch underscore names they define themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from lantide.query import backend
from lantide.query.errors import QueryRefused
from lantide.query.external import ExternalSources
from lantide.query.remote_consent import RemoteConsents
from lantide.query.resolver import InputResolver
from lantide.query.runner import StatementRunner
from lantide.query.tab_service import SqlTabs
from lantide.workspace.model import Workspace
from lantide.workspace.settings import QuerySettings

QUERY = Path(__file__).resolve().parents[2] / "lantide" / "query"
# The facade and its parts, and what they hand work to.
PART_MODULES = [
    "service.py",
    "resolver.py",
    "runner.py",
    "tab_service.py",
    "browse.py",
    "sourcerun.py",
    "staging.py",
    "projects.py",
    "checks/__init__.py",
]


@pytest.fixture
def parts(empty_workspace):
    (empty_workspace / "data" / "orders.csv").write_text("id,kind,amount\n1,a,10\n2,b,20\n3,a,30\n")
    ws = Workspace.open(empty_workspace)
    settings = QuerySettings(preview_rows=2)
    external = ExternalSources(ws, timeout_seconds=settings.timeout_seconds)
    shared = backend.acquire(ws, settings, reserved_names=external.names)
    try:
        shared.sources.refresh()
        inputs = InputResolver(ws, shared.sources, shared.catalog, external)
        consents = RemoteConsents(shared.engine)
        runner = StatementRunner(
            ws,
            settings,
            engine=shared.engine,
            catalog=shared.catalog,
            sources=shared.sources,
            external=lambda: external,  # the remote parts are called for when needed
            consents=lambda: consents,
            inputs=inputs,
            check_facts=lambda: shared.check_facts,
        )
        tabs = SqlTabs(
            ws,
            settings,
            engine=shared.engine,
            catalog=shared.catalog,
            sources=shared.sources,
            inputs=inputs,
            runner=runner,
        )
        yield SimpleNamespace(ws=ws, runner=runner, tabs=tabs, catalog=shared.catalog)
    finally:
        backend.release(shared)
        ws.close()


def test_the_runner_alone_runs_a_statement_through_the_guard(parts):
    with pytest.raises(QueryRefused) as refused:
        parts.runner.run_query("DELETE FROM orders")
    assert refused.value.code == "QUERY_REFUSED_DML"

    result = parts.runner.run_query(
        "SELECT kind, sum(amount) AS total FROM orders GROUP BY kind ORDER BY kind",
        result_label="Totals by kind",
    )
    assert result["status"] == "ok" and result["row_count"] == 2
    assert result["preview"] == [["a", 40], ["b", 20]]
    assert result["cached_table_name"] == "totals_by_kind"
    assert result["step"]["materialize_reason"] == result["reason_code"]
    assert parts.catalog.cached("totals_by_kind").row_count == 2
    # the preview is cut at the setting's rows; the cached table holds every row
    big = parts.runner.run_query("SELECT * FROM orders ORDER BY id")
    assert big["row_count"] == 3 and len(big["preview"]) == 2 and big["truncated"]
    assert parts.runner.validate_query("SELECT nope FROM orders")["ok"] is False


def test_the_runner_writes_the_result_into_the_workspace_database(parts):
    parts.runner.run_query("SELECT id FROM orders WHERE amount > 15", result_label="big")
    parts.runner.engine.close()
    con = duckdb.connect(str(parts.ws.cache_db_path), read_only=True)
    try:
        assert con.execute("SELECT id FROM big ORDER BY id").fetchall() == [(2,), (3,)]
    finally:
        con.close()


def test_sql_tabs_alone_source_run_a_chain_then_skip_it(parts):
    project = parts.ws.create_project("sales")
    parts.tabs.create_sql_tab(project, "clean", "SELECT * FROM orders WHERE amount > 15")
    parts.tabs.create_sql_tab(project, "summary", "SELECT count(*) AS n FROM clean")

    first = parts.tabs.source_run_sql_tab("sales", "summary")
    assert first["order"] == ["clean", "summary"] and first["ran"] == 2 and first["ok"]
    assert parts.runner.engine.execute("SELECT n FROM summary") == [(2,)]
    again = parts.tabs.source_run_sql_tab("sales", "summary")
    assert [e["status"] for e in again["tabs"]] == ["skipped", "skipped"]
    assert [t["state"] for t in parts.tabs.list_sql_tabs("sales")] == ["up_to_date"] * 2


def _foreign_private_names(path: Path) -> list[str]:
    """``x._name`` in ``path`` where no ``_name`` is defined in that module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
    return [
        f"{path.name}:{node.lineno} {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and node.attr not in own
    ]


@pytest.mark.parametrize("module", PART_MODULES)
def test_no_part_calls_another_parts_private_methods(module):
    assert _foreign_private_names(QUERY / module) == []
