"""The guard's plain reading (DuckDB's parser alone) and its full reading (sqlglot's tree,
checked on DuckDB's) side by side: where the plain one accepts, the full one accepts too
and both say the same (body, kind, tables, CTEs, whether the output divides for the result
checks); every refusal stays the full reading's. And a plain statement runs with sqlglot
never imported, which is what the plain reading is for."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lantide.query.checks.statement import analyse_without_joins
from lantide.query.guard import MAX_NESTING, _analyse_full, check
from lantide.query.guard_plain import read_plain
from tests.conftest import run_script_json
from tests.query.conftest import BENCHDATA
from tests.query.test_guard import REFUSED
from tests.security.test_hostile_statements import CORPUS, _statement

REPO = Path(__file__).resolve().parents[2]

PLAIN = [
    "select 42",
    "SELECT 42 AS answer;",
    "select 42;;  -- done\n",
    "-- a comment first\n/* and a block */ select 1 as one",
    "SELECT count(*) AS n FROM lineitem",
    "from orders",
    "SELECT Status FROM Orders AS O WHERE O.Amount > 1",
    "FROM orders SELECT status, count(*) GROUP BY ALL",
    "select status, sum(amount) as total from orders where amount > 10 group by status "
    "having sum(amount) > 100 order by total desc limit 5 offset 1",
    'select "Région", \'é;ü\' as "ünïcode" from "targets"."Regional"',
    "select * from book.main.sheet1",
    "with a as (select 1 as x), b as (select x + 1 as y from a) select * from b",
    "with a as (select 1 as x) select x from a union all select 2",
    "select 1 except select 2",
    "select 1 intersect select 1",
    "select 1 union by name select 2",
    "select sum(x) over (partition by y order by z) as running from t",
    "select row_number() over () as n, x from t qualify n < 3",
    "select (select max(x) from t) as m",
    "select * from (select x from t) as s where x in (select 1)",
    "select list_transform([1, 2], v -> v * 2) as doubled",
    "select x::int, cast(y as varchar), x between 1 and 2, case when x then 1 else 0 end from t",
    "select x collate nocase from t order by 1",
    "select x::decimal(10, 2), y::varchar[], z::struct(a int), w::my_enum from t",
    "select * from range(10)",
    "select * from generate_series(1, 3) as g(n)",
    "select x / y as ratio from t",
    "select x // 2 as half, x % 3 as rest, 100.0 * x / y as pct from t",
    "select count(*) filter (where x > 1) from t",
    "select distinct on (x) x, y from t",
    "select $$a;b$$ as s",
    "select e'it''s' as s",
    "select {'a': 1} as st, [1, 2][1] as first",
    "select * exclude (x) from t",
    "select columns('a.*') from t",
    'select 1 as "select" -- trailing ; in a comment;',
    "select 1 /* unterminated",
    "select 1 /* a /* nested */ still a comment */",
    "-- lead\nselect 1 /* nested /* unterminated */",
    "SELECT\n  o.status\nFROM orders o\nWHERE o.status <> 'cancelled'\n",
    "select * from t using sample 10%",
    "select * from t as x(a, b)",
    "select * from 'data/orders.parquet'",
    "select * from 'secret.xlsx'",
    'select * from "notes.zst"',
    "select * from '~secret'",
    "select * from read_csv('data/customers.csv')",
    "select * from t1, t2",
    "select * from t1 join t2 using (id)",
    "(select 1)",
    "describe orders",
    "summarize orders",
    "values (1), (2)",
    "pivot orders on status using sum(amount)",
    "with recursive r(n) as (select 1 union all select n + 1 from r where n < 3) select * from r",
    "select * from t at (version => 1)",
    "select getvariable('x')",
    "select main.f(1)",
    "explain select 1",
]


def _agree(sql: str) -> bool:
    """Both readings of ``sql``; True when the plain one accepted (and agreed)."""
    plain = read_plain(sql, MAX_NESTING)
    if plain is None:
        return False
    full = _analyse_full(sql)
    assert full.error is None, f"the plain reading accepted what the full one refuses: {sql!r}"
    assert plain.body == full.body and plain.body_start == full.body_start, sql
    assert plain.kind == full.kind, sql
    assert plain.cte_count == full.cte_count, sql
    assert full.join_count == 0, sql
    assert not full.file_literals and not full.duckdb_paths, sql
    assert [(r.catalog, r.schema, r.name) for r, _ in full.candidates] == list(plain.tables), sql
    if not plain.divides:
        statement = analyse_without_joins(full.root)
        assert not statement.divisions and not statement.fraction_outputs, sql
    return True


@pytest.mark.parametrize("sql", PLAIN)
def test_the_plain_reading_agrees_with_the_full_one(sql):
    _agree(sql)


def test_the_plain_reading_takes_the_plain_and_leaves_the_rest():
    accepted = {sql for sql in PLAIN if read_plain(sql, MAX_NESTING) is not None}
    assert {"select 42", "SELECT count(*) AS n FROM lineitem", "select x / y as ratio from t"} <= (
        accepted
    )
    for left in (
        "select * from 'data/orders.parquet'",
        "select * from read_csv('data/customers.csv')",
        "select * from 'secret.xlsx'",
        'select * from "notes.zst"',
        "select * from '~secret'",
        "select * from t1 join t2 using (id)",
        "select * from t1, t2",
        "describe orders",
        "values (1), (2)",
        "pivot orders on status using sum(amount)",
        "(select 1)",
        "explain select 1",
        "select main.f(1)",
    ):
        assert left not in accepted, left
    assert read_plain("select x / y as ratio from t", MAX_NESTING).divides
    assert not read_plain("select count(*) from t", MAX_NESTING).divides


@pytest.mark.parametrize("sql,code", REFUSED)
def test_every_refusal_stays_the_full_readings(tmp_path, sql, code):
    assert read_plain(sql, MAX_NESTING) is None
    (tmp_path / "data").mkdir()
    with pytest.raises(Exception) as info:
        check(sql, data_dir=tmp_path / "data", workspace_root=tmp_path, known_table=lambda r: False)
    assert info.value.code == code


@pytest.mark.parametrize("case", CORPUS, ids=[c[0] for c in CORPUS])
def test_the_hostile_corpus_is_decided_as_before(tmp_path, case):
    _id, sql, code = case
    text = _statement(sql, tmp_path)
    if code is not None:
        assert read_plain(text, MAX_NESTING) is None, text
    else:
        _agree(text)


@pytest.mark.parametrize(
    "path",
    sorted(BENCHDATA.glob("tpch/q*.sql")) + sorted(BENCHDATA.glob("tpcds/q*.sql")),
    ids=lambda p: f"{p.parent.name}-{p.stem}",
)
def test_the_benchmark_queries_read_alike(path):
    _agree(path.read_text())


def test_deep_statements_are_left_to_the_full_reading():
    deep = "select " + "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1)
    assert read_plain(deep, MAX_NESTING) is None
    with pytest.raises(Exception) as info:
        check(deep)
    assert info.value.code == "SQL_TOO_DEEP"
    shallow = "select " + "(" * MAX_NESTING + "1" + ")" * MAX_NESTING
    assert _agree(shallow)


_names = st.sampled_from(["t", "orders", '"Odd Name"', "s.t", "x", "a.b.c"])
_columns = st.sampled_from(["x", "y", '"z z"', "count(*)", "sum(x)", "1", "'a;b'", "x / y"])
_gap = st.sampled_from([" ", "\n", "  ", " /* c */ ", " -- c\n", "\t"])


@st.composite
def _statements(draw):
    cols = draw(st.lists(_columns, min_size=1, max_size=3))
    gap = draw(_gap)
    sql = "select" + gap + ", ".join(cols)
    if draw(st.booleans()):
        sql += gap + "from" + gap + draw(_names)
    if draw(st.booleans()):
        sql += gap + "where x > " + draw(st.sampled_from(["1", "(select 1)", "'é'"]))
    if draw(st.booleans()):
        sql += gap + draw(st.sampled_from(["union all", "union", "except"])) + gap + "select 1"
    if draw(st.booleans()):
        sql = f"with {draw(st.sampled_from(['t', 'c']))} as (select 1 as x){gap}{sql}"
    lead = draw(st.sampled_from(["", "-- lead\n", "\n\n", "/* x */"]))
    tail = draw(st.sampled_from(["", ";", ";;", " ; -- end", "\n", "-- end"]))
    return lead + sql + tail


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_statements())
def test_generated_statements_read_alike(sql):
    _agree(sql)


_SCRIPT = r"""
import json, sys
from pathlib import Path
from lantide.query import QueryService
from lantide.workspace.model import Workspace
ws = Workspace.open(Path(sys.argv[1]))
report = {}
with QueryService(ws) as service:
    report["answer"] = service.run_query("SELECT 42 AS n")["preview"]
    report["count"] = service.run_query("SELECT count(*) AS n FROM customers")["preview"]
    report["plain_imported_sqlglot"] = "sqlglot" in sys.modules
    joined = service.run_query(
        "SELECT count(*) AS n FROM orders o JOIN customers c USING (customer_id)"
    )
    report["joined"] = joined["preview"]
    report["join_imported_sqlglot"] = "sqlglot" in sys.modules
print(json.dumps(report))
"""


def test_a_plain_statement_runs_without_sqlglot(sample_workspace):
    report = run_script_json(_SCRIPT, str(sample_workspace))
    assert report["answer"] == [[42]]
    assert report["count"] == [[2000]]
    assert report["plain_imported_sqlglot"] is False
    assert report["joined"][0][0] > 0 and report["join_imported_sqlglot"] is True
