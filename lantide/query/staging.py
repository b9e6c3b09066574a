"""Staging: one statement on one external connection, its result into a local table.

The remote result is fetched in batches of ``external.BATCH_ROWS`` rows and each batch is
appended to the cached table as typed columns (:mod:`lantide.query.typed_columns`) inside
one DuckDB transaction, so Python never holds more than one batch, and a failed or
cancelled staging keeps the previous table. A copy nobody consented to stage large stops
once more than the limit has arrived (:class:`~lantide.query.row_estimate.RowCap`: the
source's estimate was wrong) and answers ``LARGE_REMOTE_RESULT``; nothing is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lantide.query import external as remote
from lantide.query import results
from lantide.query.engine import Engine, transaction
from lantide.query.errors import LargeRemoteResult
from lantide.query.external import ExternalSources
from lantide.query.guard import ParsedQuery
from lantide.query.names import quote_ident
from lantide.query.row_estimate import RowCap, RowsOverLimit
from lantide.query.typed_columns import insert

if TYPE_CHECKING:
    from lantide.query.engine import Cursor


def stage(
    external: ExternalSources,
    engine: Engine,
    connection: str,
    parsed: ParsedQuery,
    table: str,
    bookkeeping: Callable[..., None],
    *,
    preview_rows: int,
    cell_chars: int | None = results.CELL_CHARS,
    cap: RowCap | None = None,
) -> results.Preview:
    """Copy the result of ``parsed`` on ``connection`` into ``table``; ``bookkeeping(cur,
    rows)`` runs in the same transaction. Answers the table's first ``preview_rows`` rows.
    ``cap``: at most that many rows, else :class:`LargeRemoteResult` and nothing kept."""
    remote_sql = external.remote_sql(connection, parsed)
    # capped: a fetch a row past the limit at most, so an over-large result stops early
    fetch = min(remote.BATCH_ROWS, cap.limit + 1) if cap is not None else None
    batches = external.stream_batches(
        connection, remote_sql, register_cancel=engine.cancel_hook, batch_rows=fetch
    )

    def work(cur: Cursor) -> results.Preview:
        try:
            with transaction(cur):
                schema, _ = next(batches)
                columns = ", ".join(f"{quote_ident(n)} {t}" for n, t in schema)
                cur.execute(f"CREATE OR REPLACE TABLE {quote_ident(table)} ({columns})")
                rows = 0
                for _, batch in batches:
                    assert batch is not None  # only the first item (the schema) has none
                    arrived = rows + (len(batch.columns[0]) if batch.columns else 0)
                    if cap is not None and arrived > cap.limit:
                        raise RowsOverLimit(arrived, cap.limit)
                    rows += insert(cur, quote_ident(table), batch)
                bookkeeping(cur, rows)
        except BaseException:
            batches.close()
            raise
        return results.read_preview(cur, table, preview_rows, rows, cell_chars)

    try:
        return engine.run(work, timeout=None, sql=parsed.sql)
    except RowsOverLimit as over:  # rolled back: the warning's id is issued outside it
        assert cap is not None  # only a capped copy raises it
        raise LargeRemoteResult(cap.warn(over.rows)) from None
