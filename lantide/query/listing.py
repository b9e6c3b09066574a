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

from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from lantide.errors import LantideError
from lantide.query.external import ExternalTable  # the listing reaches the connections
from lantide.query.names import quote_ident
from lantide.query.sources import DataTableDict

if TYPE_CHECKING:
    from lantide.query.catalog import Catalog
    from lantide.query.engine import Engine
    from lantide.query.external import ExternalSources
    from lantide.query.row_counts import RowCounts
    from lantide.query.sources import DataSources
    from lantide.workspace.model import Workspace


class DataFileEntry(DataTableDict):
    row_count: int | None  # None while unknown
    row_count_pending: bool  # a large text file is being counted


class CachedTableEntry(TypedDict):
    name: str
    schema: None
    qualified_name: str
    project: str | None
    tab: str | None
    step_id: str | None
    row_count: int | None
    duration_ms: int | None
    created_at: str | None
    cache_kind: str  # tab, result, staged
    kind: Literal["cached_table"]


class AttachedEntry(TypedDict):
    name: str
    schema: None
    qualified_name: str
    kind: Literal["attached_database"]
    type: str


# A table of the listing; its ``kind`` tells which (the module docstring).
TableEntry = DataFileEntry | CachedTableEntry | AttachedEntry | ExternalTable


class TableProblem(TypedDict):
    """A data file that failed to register (``source``) or a connection that cannot be
    listed (``connection``), with the error in words."""

    source: NotRequired[str]
    connection: NotRequired[str]
    error: str
    hint: NotRequired[str | None]


class TableListing(TypedDict):
    """``show_tables``'s answer."""

    tables: list[TableEntry]
    problems: list[TableProblem]
    counts: dict[str, int]  # tables per kind
    connections: list[str]  # the connections' names


def list_tables(
    workspace: Workspace,
    *,
    engine: Engine,
    catalog: Catalog,
    sources: DataSources,
    row_counts: RowCounts,
    external: ExternalSources,
) -> TableListing:
    """The tables and problems of ``workspace`` (see the module docstring for the shape)."""
    if sources.needs_refresh():  # a watcher event can be missed; a stat of data/ is cheap
        sources.refresh()
    sources.read_small_sheets()  # their row counts; large workbooks wait for a query
    root = workspace.root
    tables: list[TableEntry] = []
    problems: list[TableProblem] = []
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
        if t.format == "excel":
            row_count = sizes.get(((t.schema or "").casefold(), t.name.casefold()))
            pending = False
        else:
            row_count, pending = counts.get(t.qualified_name, (None, False))
        tables.append({**t.to_dict(root), "row_count": row_count, "row_count_pending": pending})
    main_sizes = {name: n for (schema, name), n in sizes.items() if schema == "main"}
    for c in catalog.all_cached():
        kept = c.to_dict()
        tables.append(
            {  # in this order: the bookkeeping row's fields, its kind as cache_kind, last
                "name": c.name,
                "schema": None,
                "qualified_name": quote_ident(c.name),
                "project": kept["project"],
                "tab": kept["tab"],
                "step_id": kept["step_id"],
                "row_count": kept["row_count"]
                if kept["row_count"] is not None
                else main_sizes.get(c.name.casefold()),
                "duration_ms": kept["duration_ms"],
                "created_at": kept["created_at"],
                "cache_kind": kept["kind"],
                "kind": "cached_table",
            }
        )
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
