"""Checks on every result: cheap facts about a query's result and statement.

Every ``run_query``, ``run_sql_tab`` and Source Run result carries ``checks``, a list of
``{"code", "severity", "message", "evidence"}`` (DESIGN.md section 6), errors first:

- ``JOIN_FAN_OUT`` (error): a join repeats rows of the side a COUNT/SUM/AVG reads, grouped
  or as a window (``sum(x) OVER (…)``) (:mod:`.fan_out`);
- ``TOTAL_EXCEEDS_SOURCE`` (error): a SUM over a join is above the same SUM over its base
  table;
- ``EMPTY_RESULT`` (warning): no rows;
- ``ALL_NULL_COLUMN`` (warning): a column is NULL in every row;
- ``NAN_OR_INF`` (warning): NaN or infinite values, per column;
- ``DIVISION_BY_ZERO_RISK`` (warning / info): an unguarded divisor; a warning when values
  of that column are NULL/NaN/inf;
- ``IMPLAUSIBLE_RATIO`` (warning): a percent/share/rate column outside [0, 100] or [0, 1],
  or above 1,000x its median; a share or rate is read as written in percent (up to 100)
  unless the statement computes it as a ratio with no factor of 100 (then over 1 fires);
- ``ROW_COUNT_DRIFT`` (warning): the same step (same SQL, same tab) ran before with a row
  count more than ``query.row_count_drift_factor`` (2) apart.

The statement is read with sqlglot (:mod:`.statement`); the inputs' key uniqueness and
totals are measured in DuckDB and kept per table version (:mod:`.facts`); the result's
column facts come from one aggregate over its cached table, or from the preview rows
(:mod:`.result_stats`). A check that cannot be computed (an unusual statement, an
external table) is left out; computing checks never fails the query itself, but a cancel
still stops it.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING

from lantide.query.checks import result_stats, rules
from lantide.query.checks.facts import Relation, RelationFacts, RelationKey, StatementMemo
from lantide.query.errors import QueryCancelled

if TYPE_CHECKING:
    from collections.abc import Iterable

    from sqlglot import exp

    from lantide.query import lineage as lin
    from lantide.query.catalog import CachedTable, Catalog
    from lantide.query.checks.rules import Check
    from lantide.query.checks.statement import Statement
    from lantide.query.engine import Cursor, Engine
    from lantide.query.guard import ParsedQuery
    from lantide.query.results import Column, Preview
    from lantide.query.sources import DataSources

log = logging.getLogger(__name__)

SEVERITIES = ("error", "warning", "info")
METADATA_STATEMENTS = {"Describe", "Summarize", "Show"}
__all__ = ["RelationFacts", "compute", "remember_columns", "step_key", "SEVERITIES"]


def step_key(parsed: ParsedQuery) -> str:
    """What identifies "the same step" of ``run_query`` across runs: the statement's tokens
    by DuckDB's tokenizer (so comments, spacing and the case of keywords and plain names do
    not matter; quoted names and strings keep theirs). A tab's step is its tab with the same
    SQL; its last row count is in the catalog."""
    from lantide.query.guard_plain import duckdb_tokens

    tokens = duckdb_tokens(parsed.body)
    try:
        words = [
            text.decode("utf-8")
            if kind == "string_const" or text.startswith(b'"')
            else text.decode("utf-8").upper()
            for _start, _end, kind, text in tokens or ()
            if kind != "comment"
        ]
    except UnicodeDecodeError:
        words = []
    # a text DuckDB cannot tokenize: its words as written
    text = " ".join(words) if words else " ".join(parsed.body.split())
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    return f"sql:{digest}"


def compute(
    *,
    engine: Engine,
    facts: RelationFacts,
    sources: DataSources,
    catalog: Catalog,
    parsed: ParsedQuery,
    inputs: Iterable[lin.Input],
    preview: Preview,
    table: str | None,
    key: str | None,
    connection: str | None,
    drift_factor: float = rules.DRIFT_FACTOR,
    previous_row_count: int | None = None,
) -> list[Check]:
    """The checks of one result (see the module docstring), measured on ``engine`` and
    kept in ``facts``. ``inputs``: the statement's resolved tables
    (:class:`lantide.query.lineage.Input`), versioned by ``sources`` and ``catalog``;
    ``table``: the cached table holding the result, or None when only the preview
    exists. ``key``: the step's identity (:func:`step_key`) whose last row count the
    cache database keeps; a tab passes None and its last run's ``previous_row_count``
    instead (its bookkeeping row has it already)."""
    store = facts
    if parsed.kind in METADATA_STATEMENTS:
        return []  # a description of a table, not a result: its NULL "default" column is no news

    def work(cur: Cursor) -> list[Check]:
        checks: list[Check] = []
        statement: Statement | None = None
        relations: dict[RelationKey, Relation] = {}
        if not connection:
            try:
                relations = _relations(sources, catalog, inputs)
                statement = _analyse(cur, store, parsed, relations)
            except QueryCancelled:
                raise
            except Exception as exc:  # a statement sqlglot cannot qualify: no AST checks
                log.debug("result checks: statement not analysed: %s", exc)
        columns = preview.columns
        detail = rules.ratio_columns(columns)
        totals = {s.column for s in statement.sum_outputs} if statement else set()
        if table:
            facts = result_stats.from_table(
                cur, table, columns, preview.row_count, detail=detail, totals=totals
            )
        else:
            facts = result_stats.from_rows(
                columns, preview.rows, preview.row_count, detail=detail, totals=totals
            )
        if statement is not None and statement.has_joins:
            from lantide.query.checks.fan_out import FanOutAnalysis

            def relation_of(node: exp.Table) -> Relation | None:
                return relations.get(((node.db or "").casefold() or None, node.name.casefold()))

            analysis = FanOutAnalysis(cur, store, statement, relation_of)
            try:
                checks += analysis.fan_out_checks()
                checks += analysis.total_checks(facts)
            except QueryCancelled:
                raise
            except Exception as exc:
                log.warning("result checks: fan-out not measured: %s", exc)
        checks += rules.empty_result(facts)
        checks += rules.all_null_columns(facts)
        checks += rules.nan_or_inf(facts)
        if statement is not None:
            checks += rules.division_by_zero(facts, statement.divisions)
        checks += rules.implausible_ratios(
            facts, statement.fraction_outputs if statement is not None else None
        )
        previous = store.previous_row_count(key) if key else previous_row_count
        checks += rules.row_count_drift(previous, preview.row_count, drift_factor)
        if key:
            store.record_row_count(cur, key, preview.row_count)
        store.flush(cur)
        return sorted(checks, key=lambda c: SEVERITIES.index(c["severity"]))

    try:
        return engine.run(work)
    except QueryCancelled:
        raise
    except Exception as exc:  # never lose a result because a check failed
        log.warning("result checks failed: %s", exc)
        return []


def cached_relation(cached: CachedTable) -> Relation:
    """The :class:`Relation` of a cached table as its bookkeeping row describes it: one
    version per run (its fingerprint or creation time, and its step)."""
    from lantide.query.names import quote_ident

    version = cached.fingerprint or (cached.created_at.isoformat() if cached.created_at else "")
    return Relation(
        f"cached:{cached.name.casefold()}", quote_ident(cached.name), f"{version}|{cached.step_id}"
    )


def remember_columns(facts: RelationFacts, cached: CachedTable, columns: Iterable[Column]) -> None:
    """``columns`` (as ``DESCRIBE`` named them) are those of the table ``cached`` was just
    committed with: a later statement joining it is qualified without describing it again
    (issue 33: a join tab of Source Run described each input tab that had just run)."""
    facts.know_columns(cached_relation(cached), [c["name"] for c in columns])


def _relations(
    sources: DataSources, catalog: Catalog, inputs: Iterable[lin.Input]
) -> dict[RelationKey, Relation]:
    """(schema or None, name) of each table the statement reads -> its :class:`Relation`."""
    from lantide.query import lineage as lin
    from lantide.query.sources import DataTable

    out: dict[RelationKey, Relation] = {}
    for inp in inputs:
        if inp.kind == lin.DATA:
            table = inp.detail
            assert isinstance(table, DataTable)  # a data input's detail is its table
            key = ((table.schema or "").casefold() or None, table.name.casefold())
            out[key] = Relation(
                f"data:{table.qualified_name}", table.qualified_name, sources.fingerprint(table)
            )
            continue
        if inp.kind in (lin.TAB, lin.CACHED):
            cached = catalog.cached(inp.target)
            if cached is None:
                continue
            rel = cached_relation(cached)
            out[(None, inp.name.strip('"').casefold())] = rel
            out[(None, cached.name.casefold())] = rel
    return out


def _analyse(
    cur: Cursor, store: RelationFacts, parsed: ParsedQuery, relations: dict[RelationKey, Relation]
) -> Statement | None:
    """The statement's analysis, kept per statement text and input versions (a re-run of
    the same step, as Source Run does, does not qualify it again). None when there is
    nothing to analyse: the checks then read as for an analysis that found nothing (no
    joins, divisions or sums), and the analysis's module is not imported."""
    if not parsed.join_count and parsed.divides is False:
        # read by DuckDB's parser alone and nothing divides: nothing here needs a tree
        return None
    import sqlglot

    from lantide.query.checks.statement import analyse, analyse_without_joins
    from lantide.query.guard import too_deep

    if not parsed.join_count:
        return analyse_without_joins(parsed.expression)
    memo: StatementMemo = (
        parsed.body,
        tuple(sorted((k, r.version) for k, r in relations.items() if k[0] is None)),
    )
    known = store.remembered_statement(memo)
    if known is not None:
        return known
    schema: dict[str, dict[str, str]] = {}
    for (db, name), rel in relations.items():
        if db is None:
            schema[name] = store.columns(cur, rel)
    # parsed again rather than copied: the compiled parser is faster than a deep copy,
    # and the guard's tree stays untouched
    try:
        statement = analyse(sqlglot.parse_one(parsed.body, read="duckdb"), schema)
    except RecursionError:  # the guard read it with a little less stack in use
        raise too_deep("more levels of expressions than the result checks follow") from None
    store.remember_statement(memo, statement)
    return statement
