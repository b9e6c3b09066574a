"""Renaming a tab rewrites the references to its cached table in the tabs that read it:
only table references (not a column, a string, a comment or a CTE of the same name), only
the name's span (the rest of the text byte for byte), atomically, refusing with nothing
changed when a reader cannot be parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from lantide.query.errors import TabError
from lantide.query.tab_refs import rewrite_table_refs

# The chain: orders.csv -> base -> middle -> top
BASE = "SELECT id, customer, amount FROM orders WHERE amount > 0\n"
MIDDLE = (
    "-- reads base; the column base is the customer's base\n"
    "SELECT customer AS base, 'from base' AS note, sum(amount) AS total\n"
    "FROM   base    -- the base tab\n"
    "GROUP BY customer\n"
)
TOP = (
    "WITH totals AS (SELECT * FROM middle)\r\n"
    'SELECT t.base, t.note, t.total, b.n FROM totals t, (SELECT count(*) n FROM "base") b\r\n'
)


@pytest.fixture
def chain(empty_workspace: Path, open_service):
    from lantide.workspace.model import Workspace

    (empty_workspace / "data" / "orders.csv").write_text(
        "id,customer,amount\n1,7,10.5\n2,7,3\n3,8,-1\n", encoding="utf-8"
    )
    ws = Workspace.open(empty_workspace)
    try:
        ws.create_project("p")
    finally:
        ws.close()
    service = open_service(empty_workspace)
    for name, sql in (("base", BASE), ("middle", MIDDLE), ("top", TOP)):
        service.create_sql_tab("p", name, sql)
    sql_dir = empty_workspace / "projects" / "p" / "sql"
    (sql_dir / "top.sql").write_bytes(TOP.encode("utf-8"))  # CRLF as an editor wrote it
    report = service.source_run_sql_tab("p", "top")
    assert report["ok"], report
    return service, sql_dir


def test_rename_rewrites_only_the_table_references_across_the_chain(chain):
    service, sql_dir = chain
    before = service.run_sql_tab("p", "top")["preview"]
    result = service.rename_sql_tab("p", "base", "clean_orders")
    assert result["new"] == "clean_orders" and result["cached_table_renamed"]
    assert result["dependents"] == ["middle", "top"]
    assert [(r["tab"], r["references"]) for r in result["rewritten"]] == [
        ("middle", 1),
        ("top", 1),
    ]
    assert set(result["changed_files"]) == {
        str(sql_dir / "clean_orders.sql"),
        str(sql_dir / "middle.sql"),
        str(sql_dir / "top.sql"),
    }
    assert "rename 'clean_orders' back to 'base'" in result["message"]
    assert "hint" not in result  # every dependent was updated
    assert (sql_dir / "middle.sql").read_text(encoding="utf-8") == MIDDLE.replace(
        "FROM   base    --", "FROM   clean_orders    --"
    )
    assert (sql_dir / "top.sql").read_bytes().decode("utf-8") == TOP.replace(
        '"base"', '"clean_orders"'
    )  # quoted stays quoted, the CRLF line ends stay
    assert not (sql_dir / "base.sql").exists()
    # the chain still runs, with the same rows
    assert service.source_run_sql_tab("p", "top")["ok"]
    assert service.run_sql_tab("p", "top")["preview"] == before


def test_a_reader_that_cannot_be_parsed_refuses_the_rename_with_nothing_changed(chain):
    service, sql_dir = chain
    broken = "SELECT customer FROM base WHERE (\n"
    (sql_dir / "broken.sql").write_text(broken, encoding="utf-8")
    files = {p.name: p.read_bytes() for p in sql_dir.iterdir()}
    with pytest.raises(TabError) as info:
        service.rename_sql_tab("p", "base", "clean_orders")
    assert info.value.code == "RENAME_DEPENDENT_UNPARSEABLE"
    assert "'broken'" in info.value.message
    assert {p.name: p.read_bytes() for p in sql_dir.iterdir()} == files
    assert service.catalog.cached("base") is not None
    assert service.catalog.cached("clean_orders") is None


def test_an_unparseable_tab_that_does_not_name_it_does_not_block(chain):
    service, sql_dir = chain
    (sql_dir / "draft.sql").write_text("SELECT amount FROM orders WHERE (\n", encoding="utf-8")
    result = service.rename_sql_tab("p", "base", "clean_orders")
    assert [r["tab"] for r in result["rewritten"]] == ["middle", "top"]
    assert (sql_dir / "draft.sql").read_text(
        encoding="utf-8"
    ) == "SELECT amount FROM orders WHERE (\n"


def test_a_failed_write_puts_everything_back(chain, monkeypatch):
    from lantide.query import tabs

    service, sql_dir = chain
    files = {p.name: p.read_bytes() for p in sql_dir.iterdir()}
    real = tabs._write_exactly
    calls = []

    def failing(path, text):
        calls.append(path.name)
        if len(calls) == 2:  # the second tab's write fails: the first is put back
            raise OSError("disk full")
        real(path, text)

    monkeypatch.setattr(tabs, "_write_exactly", failing)
    with pytest.raises(OSError):
        service.rename_sql_tab("p", "base", "clean_orders")
    assert {p.name: p.read_bytes() for p in sql_dir.iterdir()} == files


def test_tabs_of_other_projects_that_read_the_cached_table_follow(chain, empty_workspace):
    service, sql_dir = chain
    service.workspace.create_project("reader")
    service.workspace.create_project("shadow")
    projects = empty_workspace / "projects"
    reader = projects / "reader" / "sql" / "uses_base.sql"
    reader.write_text("SELECT count(*) FROM base -- from project p\n", encoding="utf-8")
    # a project with a tab named base of its own: its readers read that one
    (projects / "shadow" / "sql" / "base.sql").write_text("SELECT 1 AS x\n", encoding="utf-8")
    shadow_reader = projects / "shadow" / "sql" / "own.sql"
    shadow_reader.write_text("SELECT x FROM base\n", encoding="utf-8")
    result = service.rename_sql_tab("p", "base", "clean_orders")
    assert ("reader", "uses_base") in {(r["project"], r["tab"]) for r in result["rewritten"]}
    assert "reader/uses_base (1)" in result["message"]
    assert str(reader) in result["changed_files"]
    assert reader.read_text(encoding="utf-8") == (
        "SELECT count(*) FROM clean_orders -- from project p\n"
    )
    assert shadow_reader.read_text(encoding="utf-8") == "SELECT x FROM base\n"
    assert service.run_sql_tab("reader", "uses_base")["status"] == "ok"


@pytest.mark.parametrize(
    "sql, expected, count",
    [
        ("select * from base", "select * from clean", 1),
        ("select * from main.base", "select * from main.clean", 1),
        ("select * from other.base", "select * from other.base", 0),
        (
            "with base as (select 1) select * from base",
            "with base as (select 1) select * from base",
            0,
        ),
        ("select base.x, base.* from base", "select clean.x, clean.* from clean", 3),
        ("select base.x from orders base", "select base.x from orders base", 0),
        ("select b.base from base b", "select b.base from clean b", 1),
        (
            "select * from BASE b join base c using (id)",
            "select * from clean b join clean c using (id)",
            2,
        ),
        ("select * from read_csv('base')", "select * from read_csv('base')", 0),
        ("\ufeffselect * from base", "\ufeffselect * from clean", 1),
    ],
)
def test_rewrite_table_refs(sql, expected, count):
    assert rewrite_table_refs(sql, "base", "clean") == (expected or sql, count)


def test_a_new_name_that_needs_quotes_gets_them():
    assert rewrite_table_refs("select * from base", "base", "q3 orders")[0] == (
        'select * from "q3 orders"'
    )
    assert rewrite_table_refs("select * from base", "base", "select")[0] == (
        'select * from "select"'
    )


def test_a_qualifier_that_could_be_the_table_or_an_alias_is_not_guessed():
    from lantide.query.tab_refs import Unparseable

    with pytest.raises(Unparseable):
        rewrite_table_refs("select base.x from base, orders base", "base", "clean")
    with pytest.raises(Unparseable):  # a struct field of base's column s, or not
        rewrite_table_refs("select base.s.f from base", "base", "clean")
