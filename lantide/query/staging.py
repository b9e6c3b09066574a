"""Staging: one statement on one external connection, its result into a local table.

The remote result is fetched in Arrow batches of ``external.BATCH_ROWS`` rows and each
batch is appended to the cached table inside one DuckDB transaction, so Python never holds
more than one batch, and a failed or cancelled staging keeps the previous table.
"""

from __future__ import annotations

from typing import Callable

from lantide.query import results
from lantide.query.engine import Engine, transaction
from lantide.query.external import ExternalSources
from lantide.query.guard import ParsedQuery
from lantide.query.names import quote_ident


def stage(external: ExternalSources, engine: Engine, connection: str, parsed: ParsedQuery,
          table: str, bookkeeping: Callable[..., None], *, preview_rows: int,
          cell_chars: int | None = results.CELL_CHARS) -> results.Preview:
    """Copy the result of ``parsed`` on ``connection`` into ``table``; ``bookkeeping(cur,
    rows)`` runs in the same transaction. Answers the table's first ``preview_rows`` rows."""
    remote_sql = external.remote_sql(connection, parsed)
    batches = external.stream_batches(connection, remote_sql,
                                      register_cancel=engine.cancel_hook)

    def work(cur):
        alias = f"__lantide_stage_{id(cur)}"
        try:
            with transaction(cur):
                schema, _ = next(batches)
                import pyarrow as pa

                cur.register(alias, pa.Table.from_batches([], schema=schema))
                cur.execute(f"CREATE OR REPLACE TABLE {quote_ident(table)} AS "
                            f"SELECT * FROM {quote_ident(alias)}")
                cur.unregister(alias)
                rows = 0
                for _, batch in batches:
                    cur.register(alias, pa.Table.from_batches([batch]))
                    cur.execute(f"INSERT INTO {quote_ident(table)} "
                                f"SELECT * FROM {quote_ident(alias)}")
                    cur.unregister(alias)
                    rows += batch.num_rows
                bookkeeping(cur, rows)
        except BaseException:
            batches.close()
            raise
        return results.read_preview(cur, table, preview_rows, rows, cell_chars)

    return engine.run(work, timeout=None, sql=parsed.sql)
