"""Staging: one statement on one external connection, its result into a local table.

The remote result is fetched in batches of ``external.BATCH_ROWS`` rows and each batch is
appended to the cached table as typed columns (:mod:`lantide.query.typed_columns`) inside
one DuckDB transaction, so Python never holds more than one batch, and a failed or
cancelled staging keeps the previous table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lantide.query import results
from lantide.query.engine import Engine, transaction
from lantide.query.external import ExternalSources
from lantide.query.guard import ParsedQuery
from lantide.query.names import quote_ident
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
) -> results.Preview:
    """Copy the result of ``parsed`` on ``connection`` into ``table``; ``bookkeeping(cur,
    rows)`` runs in the same transaction. Answers the table's first ``preview_rows`` rows."""
    remote_sql = external.remote_sql(connection, parsed)
    batches = external.stream_batches(connection, remote_sql, register_cancel=engine.cancel_hook)

    def work(cur: Cursor) -> results.Preview:
        try:
            with transaction(cur):
                schema, _ = next(batches)
                columns = ", ".join(f"{quote_ident(n)} {t}" for n, t in schema)
                cur.execute(f"CREATE OR REPLACE TABLE {quote_ident(table)} ({columns})")
                rows = 0
                for _, batch in batches:
                    assert batch is not None  # only the first item (the schema) has none
                    rows += insert(cur, quote_ident(table), batch)
                bookkeeping(cur, rows)
        except BaseException:
            batches.close()
            raise
        return results.read_preview(cur, table, preview_rows, rows, cell_chars)

    return engine.run(work, timeout=None, sql=parsed.sql)
