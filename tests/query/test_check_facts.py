"""Key facts measured in DuckDB agree with counting in Python, whatever the keys (property
tests), and are kept per version of a relation."""

from __future__ import annotations

import itertools
from collections import Counter

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

_names = itertools.count()

int_keys = st.lists(st.one_of(st.none(), st.integers(-50, 50)), max_size=60)
wide_int_keys = st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), max_size=30)
text_keys = st.lists(
    st.one_of(st.none(), st.sampled_from(["a", "b", "c", "é", "", "a b"])), max_size=40
)


def _table(svc, sql_type: str, values: list) -> str:
    name = f"keys_{next(_names)}"

    def work(cur):
        cur.execute(f'CREATE TABLE "{name}" (k {sql_type}, other INTEGER)')
        if values:
            cur.executemany(f'INSERT INTO "{name}" VALUES (?, 1)', [[v] for v in values])

    svc.engine.run(work)
    return name


def _expected(values: list):
    present = [v for v in values if v is not None]
    counts = Counter(present)
    return len(present), len(counts), max(counts.values(), default=0)


def _measure(svc, name: str, *, with_max: bool):
    from lantide.query.checks.facts import Relation, RelationFacts

    facts = RelationFacts(svc.engine)  # a fresh cache: measured, not remembered
    rel = Relation(f"cached:{name}", f'"{name}"', "v1")
    return svc.engine.run(lambda cur: facts.keys(cur, rel, ["k"], with_max=with_max))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.one_of(int_keys, wide_int_keys))
@example(values=[-48, 271720713])  # DuckDB's estimate of their distinct count is 1
def test_integer_keys(empty_service, values):
    name = _table(empty_service, "BIGINT", values)
    non_null, distinct, most = _expected(values)
    quick = _measure(empty_service, name, with_max=False)
    assert quick.unique == (distinct == non_null)
    assert quick.non_null == non_null
    exact = _measure(empty_service, name, with_max=True)
    assert (exact.non_null, exact.distinct, exact.max_repeat) == (non_null, distinct, most)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=text_keys)
def test_text_keys(empty_service, values):
    name = _table(empty_service, "VARCHAR", values)
    non_null, distinct, most = _expected(values)
    assert _measure(empty_service, name, with_max=False).unique == (distinct == non_null)
    exact = _measure(empty_service, name, with_max=True)
    assert (exact.non_null, exact.distinct, exact.max_repeat) == (non_null, distinct, most)


def test_facts_are_remembered_per_version_and_across_engines(empty_workspace, open_service):
    from lantide.query.checks.facts import Relation, RelationFacts

    svc = open_service(empty_workspace)
    name = _table(svc, "INTEGER", [1, 2, 2, 3])
    facts = RelationFacts(svc.engine)
    v1 = Relation(f"data:{name}", f'"{name}"', "v1")  # a data file's facts are written
    first = svc.engine.run(lambda cur: facts.keys(cur, v1, ["k"], with_max=True))
    cached = Relation(f"cached:{name}", f'"{name}"', "v1")  # a cached table's stay in memory
    svc.engine.run(lambda cur: facts.keys(cur, cached, ["k"]))
    svc.engine.run(facts.flush)
    stored = svc.engine.execute("SELECT subject FROM _lantide.check_facts")
    assert (v1.subject,) in stored and (cached.subject,) not in stored
    assert (first.distinct, first.max_repeat) == (3, 2)
    svc.engine.run(lambda cur: cur.execute(f'DELETE FROM "{name}" WHERE k = 2'))
    # the same version: the remembered fact (another process reads it from the database)
    again = RelationFacts(svc.engine)
    assert svc.engine.run(lambda cur: again.keys(cur, v1, ["k"])).distinct == 3
    # a new version is measured afresh
    v2 = Relation(v1.subject, v1.sql, "v2")
    fresh = svc.engine.run(lambda cur: again.keys(cur, v2, ["k"], with_max=True))
    assert (fresh.non_null, fresh.distinct, fresh.max_repeat) == (2, 2, 1)


def test_a_step_row_count_is_updated_in_place_and_survives_a_row_written_meanwhile(
    empty_workspace, open_service
):
    """Facts are written by UPDATE when their row is there and INSERT when not; a row
    another writer put there after this store read the table is replaced, not lost."""
    from lantide.query.checks.facts import RelationFacts

    svc = open_service(empty_workspace)
    facts = RelationFacts(svc.engine)

    def rows():
        return svc.engine.execute(
            "SELECT subject, fact, value FROM _lantide.check_facts ORDER BY subject, fact"
        )

    svc.engine.run(lambda cur: facts.record_row_count(cur, "sql:a", 10))
    svc.engine.run(facts.flush)
    svc.engine.run(lambda cur: facts.record_row_count(cur, "sql:a", 12))
    svc.engine.run(lambda cur: facts.record_row_count(cur, "sql:b", 7))
    svc.engine.run(facts.flush)
    assert [(s, f) for s, f, _ in rows()] == [("step", "sql:a"), ("step", "sql:b")]
    assert RelationFacts(svc.engine).previous_row_count("sql:a") == 12
    assert RelationFacts(svc.engine).previous_row_count("sql:b") == 7

    # another store (another service of the workspace) writes a row this one never read
    other = RelationFacts(svc.engine)
    svc.engine.run(lambda cur: other.record_row_count(cur, "sql:c", 1))
    svc.engine.run(other.flush)
    svc.engine.run(lambda cur: facts.record_row_count(cur, "sql:c", 99))
    svc.engine.run(facts.flush)  # INSERT conflicts: the upsert replaces the row
    assert len(rows()) == 3
    assert RelationFacts(svc.engine).previous_row_count("sql:c") == 99

    # a row this store wrote is gone when it writes the fact again: it is inserted anew
    svc.engine.execute("DELETE FROM _lantide.check_facts WHERE fact = 'sql:a'")
    svc.engine.run(lambda cur: facts.record_row_count(cur, "sql:a", 13))
    svc.engine.run(facts.flush)
    assert RelationFacts(svc.engine).previous_row_count("sql:a") == 13


dims = st.sets(st.integers(1, 20), min_size=1, max_size=8)
fact_keys = st.lists(st.one_of(st.none(), st.integers(1, 25)), min_size=1, max_size=30)


def _values(rows: list) -> str:
    return ", ".join("(NULL)" if v is None else f"({v})" for v in rows)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(dim_ids=dims, fact_ids=fact_keys)
def test_an_inflated_count_always_fires(empty_service, dim_ids, fact_ids):
    """Whenever ``count(*) AS dims`` over the join is above the dims it really matched,
    JOIN_FAN_OUT fires, and its bound is at least the real repeat."""
    n = next(_names)
    empty_service.run_query(
        f"SELECT * FROM (VALUES {_values(sorted(dim_ids))}) t(id)", result_label=f"dim_{n}"
    )
    empty_service.run_query(
        f"SELECT * FROM (VALUES {_values(fact_ids)}) t(dim_id)", result_label=f"fact_{n}"
    )
    result = empty_service.run_query(
        f"SELECT count(*) AS dims, count(DISTINCT d.id) AS matched FROM dim_{n} d "
        f"JOIN fact_{n} f ON f.dim_id = d.id"
    )
    counted, matched = result["preview"][0]
    fired = [c for c in result["checks"] if c["code"] == "JOIN_FAN_OUT"]
    present = Counter(v for v in fact_ids if v is not None)
    if counted > matched:
        assert fired, (dim_ids, fact_ids)
        assert fired[0]["evidence"]["max_repeat"] >= max(present[d] for d in dim_ids)
    if max(present.values(), default=0) <= 1:  # a unique key on the fact side repeats nothing
        assert not fired
