"""Listing the tables of one workspace: what the explorer, ``lantide tables`` and the
agent's ``show_tables`` see.

``list_tables(...)``::

    {"tables": [{"name", "schema", "qualified_name", "kind", ...}], "problems": [...],
     "counts": {kind: n}, "connections": [names]}

    kind data_file / excel_sheet: + "format", "source" (path relative to the workspace),
    "row_count" (int, or None while unknown) and "row_count_pending" (True while a large
    text file is being counted in the background; ``RowCounts.wait``, then list again;
    see :mod:`lantide.query.row_counts`);
    kind cached_table: + "cache_kind" (tab / result / staged), "project", "tab",
    "step_id", "row_count", "duration_ms", "created_at"; kind external: + "connection",
    "remote_kind"; kind attached_database: + "type". A data file that failed to register
    is in "problems" with its error, so is an unreachable connection.

Apart from :mod:`lantide.query.browse` (reading schemas, the grid's rows) so that listing,
the last step before the desktop app is usable, imports none of the guard, lineage or
result modules the browser needs: they load a moment later with the service's parts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lantide.errors import LantideError
from lantide.query.names import quote_ident

if TYPE_CHECKING:
    from lantide.query.catalog import Catalog
    from lantide.query.engine import Engine
    from lantide.query.external import ExternalSources
    from lantide.query.row_counts import RowCounts
    from lantide.query.sources import DataSources
    from lantide.workspace.model import Workspace


def list_tables(
    workspace: Workspace,
    *,
    engine: Engine,
    catalog: Catalog,
    sources: DataSources,
    row_counts: RowCounts,
    external: ExternalSources,
) -> dict[str, Any]:
    """The tables and problems of ``workspace`` (see the module docstring for the shape)."""
    if sources.needs_refresh():  # a watcher event can be missed; a stat of data/ is cheap
        sources.refresh()
    sources.read_small_sheets()  # their row counts; large workbooks wait for a query
    root = workspace.root
    tables: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    # A table's estimated_size is its row count (sheets and cached tables are tables).
    sizes = {
        (r[0].casefold(), r[1].casefold()): r[2]
        for r in engine.execute(
            "SELECT schema_name, table_name, estimated_size FROM duckdb_tables() "
            "WHERE database_name = current_database()"
        )
    }
    data = sources.tables()
    counts = row_counts.lookup(data)
    for t in data:
        if t.error:
            problems.append({"source": t.to_dict(root)["source"], "error": t.error})
            continue
        entry = t.to_dict(root)
        if t.format == "excel":
            entry["row_count"] = sizes.get(((t.schema or "").casefold(), t.name.casefold()))
            entry["row_count_pending"] = False
        else:
            entry["row_count"], entry["row_count_pending"] = counts.get(
                t.qualified_name, (None, False)
            )
        tables.append(entry)
    main_sizes = {name: n for (schema, name), n in sizes.items() if schema == "main"}
    for c in catalog.all_cached():
        entry = {
            "name": c.name,
            "schema": None,
            "qualified_name": quote_ident(c.name),
            "kind": "cached_table",
            **{k: v for k, v in c.to_dict().items() if k != "name"},
        }
        entry["cache_kind"] = entry.pop("kind")
        entry["kind"] = "cached_table"
        if entry["row_count"] is None:
            entry["row_count"] = main_sizes.get(c.name.casefold())
        tables.append(entry)
    for row in engine.execute(
        "SELECT database_name, type FROM duckdb_databases() WHERE NOT internal "
        "AND database_name <> current_database()"
    ):
        tables.append(
            {
                "name": row[0],
                "schema": None,
                "qualified_name": quote_ident(row[0]),
                "kind": "attached_database",
                "type": row[1],
            }
        )
    connections_of = getattr(external, "workspace", None)  # the workspace.json it read
    for problem in getattr(connections_of, "connection_problems", []):
        problems.append(
            {
                "source": ".lantide/workspace.json",
                "error": problem,
                "hint": "Fix it in Settings > Connections or by hand.",
            }
        )
    for name in external.names():
        try:
            tables.extend(external.list_tables(name))
        except LantideError as exc:
            problems.append({"connection": name, "error": exc.message, "hint": exc.hint})
    by_kind: dict[str, int] = {}
    for table in tables:
        by_kind[table["kind"]] = by_kind.get(table["kind"], 0) + 1
    return {
        "tables": tables,
        "problems": problems,
        "counts": by_kind,
        "connections": external.names(),
    }
