"""Browsing the tables of one workspace: the part of :class:`lantide.query.service.QueryService`
that describes tables and pages, profiles and exports their rows.

``show_tables()`` is :mod:`lantide.query.listing` (the listing alone, imported without the
browser's modules), called by the service directly.

``read_schema(table)``: ``{"table", "qualified_name", "kind", "columns": [{"name", "type",
"nullable"}], "ddl": 'CREATE TABLE "t" ("c" TYPE, ...)', "source"?}``.

For the explorer: ``table_columns(table)`` -> :class:`TableColumns` (each column with its
type and the quoted name to write in SQL; a table of a connection is described from the
connection's catalog, never staged; a table that cannot be described answers its
``problem`` instead of raising), ``column_profile(table, column)`` ->
:class:`ColumnBrief` (nulls, distinct, min/max in DuckDB, kept per table fingerprint so
a second look does not scan again).

For the desktop grid: ``fetch_rows(relation, offset, limit, order_by=None)`` -> list of
tuples (Python values), sorted by ``[(column, "asc"|"desc"), ...]`` when given,
``relation_info(relation)`` -> ``{"relation", "columns", "row_count"}``, ``profile_table``
(:mod:`lantide.query.profile`), ``export_table`` (:mod:`lantide.query.export`). Names are
parsed, never pasted into SQL.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

from lantide.errors import LantideError
from lantide.query import lineage as lin
from lantide.query import results
from lantide.query.catalog import Catalog
from lantide.query.engine import Engine
from lantide.query.errors import QueryError, QueryRefused, TableNotFound
from lantide.query.external import ExternalSources
from lantide.query.guard import TableRef
from lantide.query.names import INTERNAL_SCHEMA, qualified, quote_ident, quoted_path
from lantide.query.resolver import InputResolver
from lantide.query.sources import DataSources, DataTable

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Row
    from lantide.query.export import Exported
    from lantide.query.grid_filters import ColumnFilter
    from lantide.query.grid_queries import ColumnSummary, FilteredPage
    from lantide.query.profile import TableProfile
    from lantide.workspace.model import Workspace

PROFILES_KEPT = 256  # column summaries remembered (per table fingerprint)


class TableColumn(TypedDict):
    name: str
    type: str  # as DuckDB (or the connection's catalog) names it
    sql_name: str  # the name quoted for SQL: "order date"


class Problem(TypedDict):
    code: str
    message: str
    hint: str | None


class TableColumns(TypedDict):
    table: str  # as asked
    sql_name: str  # the table quoted for SQL: "book"."Sheet1"
    kind: str  # data_file / cached_table / external / table / unknown
    columns: list[TableColumn]
    problem: NotRequired[Problem]  # why there are no columns (an unreachable connection)


class ColumnBrief(TypedDict):
    table: str
    name: str
    type: str
    row_count: int
    null_count: int
    null_fraction: float
    distinct_count: int
    distinct_exact: bool
    min: object
    max: object
    fingerprint: str | None  # of the table when it was scanned (None: not kept)


class TableSchema(TypedDict):
    """``read_schema``: a table's columns and its DDL."""

    table: str  # as asked
    qualified_name: str
    kind: str  # data_file, cached_table, table, external
    columns: list[results.SchemaColumn]
    ddl: str
    source: NotRequired[str]  # a data file's path
    notes: NotRequired[list[str]]  # how its reader read it


class RelationInfo(TypedDict):
    """``relation_info``: what the grid's header and scroll bar need."""

    relation: str
    columns: list[results.Column]
    row_count: int


class TableBrowser:
    """The tables of one workspace as the grid and ``read_schema`` see them."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        engine: Engine,
        catalog: Catalog,
        sources: DataSources,
        external: ExternalSources,
        inputs: InputResolver,
    ):
        self.workspace = workspace
        self.engine = engine
        self.catalog = catalog
        self.sources = sources
        self.external = external
        self.inputs = inputs
        self._summaries: OrderedDict[tuple[str, str, str], ColumnBrief] = OrderedDict()
        self._summaries_lock = threading.Lock()

    # -- read_schema ------------------------------------------------------------------
    def _table_ref(self, table: str) -> TableRef:
        import sqlglot
        from sqlglot import exp

        text = (table or "").strip()
        if not text:
            raise TableNotFound("no table name given", hint="show_tables lists the tables.")
        try:
            node = sqlglot.parse_one(text, read="duckdb", into=exp.Table)
        except Exception:
            node = None
        if node is None or not isinstance(node.this, exp.Identifier):
            return TableRef(text)
        return TableRef(node.name, node.db or None, node.catalog or None)

    def _local_relation(self, table: str) -> tuple[str, lin.Input]:
        ref = self._table_ref(table)
        resolved = self.inputs.resolve(ref)
        self.inputs.check_inputs([resolved])
        if resolved.kind in (lin.DATA, lin.CACHED):
            if isinstance(resolved.detail, DataTable):
                return resolved.detail.qualified_name, resolved
            return quote_ident(resolved.target), resolved
        if resolved.kind == lin.UNKNOWN:
            exists = self.engine.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE lower(table_name) = lower(?) "
                "AND lower(schema_name) = lower(?)",
                [ref.name, ref.schema or "main"],
            )[0][0]
            if exists and (ref.schema or "main").lower() != INTERNAL_SCHEMA:
                return qualified(ref.schema, ref.name), resolved
        if resolved.kind == lin.EXTERNAL:
            return "", resolved
        raise TableNotFound(
            f"no table {table!r} in this workspace",
            hint='show_tables lists the tables; a sheet is "book"."Sheet1".',
        )

    def read_schema(self, table: str) -> TableSchema:
        self.inputs.refresh_if_stale()
        relation, resolved = self._local_relation(table)
        if resolved.kind == lin.EXTERNAL:
            assert isinstance(resolved.detail, TableRef)  # an external input's detail
            columns: list[results.SchemaColumn] = self.external.describe(
                resolved.target, resolved.detail
            )
            if not columns:
                raise TableNotFound(
                    f"connection {resolved.target!r} has no table {table!r}",
                    hint="show_tables lists the connection's tables.",
                )
            name = resolved.name
            kind = "external"
        else:
            rows = self.engine.execute(f"DESCRIBE SELECT * FROM {relation}")
            columns = [{"name": r[0], "type": r[1], "nullable": r[2] != "NO"} for r in rows]
            name = relation
            kind = {lin.DATA: "data_file", lin.CACHED: "cached_table"}.get(resolved.kind, "table")
        ddl = "CREATE TABLE {} ({})".format(
            name, ", ".join(f"{quote_ident(c['name'])} {c['type']}" for c in columns)
        )
        out: TableSchema = {
            "table": table,
            "qualified_name": name,
            "kind": kind,
            "columns": columns,
            "ddl": ddl,
        }
        if resolved.kind == lin.DATA and isinstance(resolved.detail, DataTable):
            out["source"] = resolved.detail.to_dict(self.workspace.root)["source"]
            if resolved.detail.notes:
                out["notes"] = list(resolved.detail.notes)
        return out

    # -- the explorer: columns and their summaries -------------------------------------
    def table_columns(self, table: str) -> TableColumns:
        """The columns of ``table`` with their types and quoted names (see module doc)."""
        ref = self._table_ref(table)
        sql_name = quoted_path(ref.catalog, ref.schema, ref.name)
        try:
            schema = self.read_schema(table)
        except LantideError as exc:
            return {
                "table": table,
                "sql_name": sql_name,
                "kind": "unknown",
                "columns": [],
                "problem": {"code": exc.code, "message": exc.message, "hint": exc.hint},
            }
        columns: list[TableColumn] = [
            {"name": c["name"], "type": str(c["type"]), "sql_name": quote_ident(c["name"])}
            for c in schema["columns"]
        ]
        return {"table": table, "sql_name": sql_name, "kind": schema["kind"], "columns": columns}

    def table_fingerprint(self, resolved: lin.Input) -> str | None:
        """What changes when a local table's content may have changed: a data file's path,
        size and mtime (and reading rule); a cached table's recorded fingerprint and the
        time it was made. None for any other table (its summaries are not kept)."""
        if resolved.kind == lin.DATA and isinstance(resolved.detail, DataTable):
            return "data:" + self.sources.fingerprint(resolved.detail)
        if resolved.kind == lin.CACHED:
            row = self.catalog.cached(resolved.target)
            if row is not None:
                return f"cached:{row.name.casefold()}:{row.fingerprint}:{row.created_at}"
        return None

    def column_profile(self, table: str, column: str) -> ColumnBrief:
        """Nulls, distinct count, min and max of one column, computed in DuckDB
        (:func:`lantide.query.profile.column_summary`); the answer is kept per table
        fingerprint, so asking again for an unchanged table does not scan it."""
        from lantide.query.profile import column_summary

        self.inputs.refresh_if_stale()
        relation, resolved = self._local_relation(table)
        if resolved.kind == lin.EXTERNAL:
            raise QueryError(
                f"{table!r} is a table of connection {resolved.target!r}; "
                "only local tables are profiled",
                code="PROFILE_REMOTE_TABLE",
                hint="Stage it first (run_query with a result_label), then "
                "profile the cached table.",
            )
        types = {r[0]: str(r[1]) for r in self.engine.execute(f"DESCRIBE SELECT * FROM {relation}")}
        name = next((n for n in types if n.casefold() == column.casefold()), None)
        if name is None:
            raise QueryError(
                f"{table!r} has no column {column!r}",
                code="COLUMN_NOT_FOUND",
                hint=f"Its columns: {', '.join(types)}.",
            )
        fingerprint = self.table_fingerprint(resolved)
        key = (relation, name, fingerprint or "")
        if fingerprint is not None:
            with self._summaries_lock:
                kept = self._summaries.get(key)
                if kept is not None:
                    self._summaries.move_to_end(key)
                    return kept
        rows, nulls, distinct, exact, lo, hi = column_summary(
            self.engine, relation, name, types[name]
        )
        summary: ColumnBrief = {
            "table": table,
            "name": name,
            "type": types[name],
            "row_count": rows,
            "null_count": nulls,
            "null_fraction": (nulls / rows) if rows else 0.0,
            "distinct_count": distinct,
            "distinct_exact": exact,
            "min": lo,
            "max": hi,
            "fingerprint": fingerprint,
        }
        if fingerprint is not None:
            with self._summaries_lock:
                self._summaries[key] = summary
                while len(self._summaries) > PROFILES_KEPT:
                    self._summaries.popitem(last=False)
        return summary

    # -- browsing ------------------------------------------------------------------
    def fetch_rows(
        self,
        relation_name: str,
        offset: int = 0,
        limit: int = 200,
        order_by: Sequence[tuple[str, str]] | None = None,
        filters: Sequence[ColumnFilter] | None = None,
    ) -> list[Row]:
        """Rows ``offset``..``offset+limit`` of a table, as tuples of Python values.

        ``order_by``: None (the table's own order) or a list of ``(column_name, "asc" |
        "desc")``, most significant first, e.g. ``[("amount", "desc"), ("name", "asc")]``.
        Names must be columns of the relation (case does not count) and are quoted, never
        pasted; an unknown name raises ``UNKNOWN_COLUMN``, a bad shape or direction
        ``BAD_ORDER_BY``. Nulls sort last either way, and ties are broken the same way on
        every call (row id or the other columns), so consecutive pages neither repeat nor
        skip rows. ``filters``: only the rows passing them (:mod:`lantide.query.grid_filters`).
        """
        from lantide.query.ordering import normalize_order_by

        keys = normalize_order_by(order_by)
        if filters or keys:  # a sorted page is narrowed (lantide.query.grid_sorted_pages)
            return self.filtered_page(
                relation_name, offset, limit, order_by=keys, filters=filters, count=False
            )["rows"]
        relation, _ = self.resolve_for_grid(relation_name)
        offset, limit = max(0, int(offset)), max(0, min(int(limit), 100_000))

        def work(cur: Cursor) -> list[Row]:
            return cur.execute(f"SELECT * FROM {relation} LIMIT {limit} OFFSET {offset}").fetchall()

        return self.engine.run(work)

    def resolve_for_grid(self, relation_name: str) -> tuple[str, bool]:
        """``(relation as SQL, has a row id)`` of a local table the grid pages; an
        external table is refused (it is paged after staging)."""
        relation, resolved = self._local_relation(relation_name)
        if resolved.kind == lin.EXTERNAL:
            raise QueryRefused(
                "external tables are paged after staging",
                code="EXTERNAL_NOT_STAGED",
                hint="Stage the table with run_query first, then page its cached table.",
            )
        return relation, _has_rowid(resolved)

    def filtered_page(
        self,
        relation_name: str,
        offset: int = 0,
        limit: int = 256,
        *,
        order_by: Sequence[tuple[str, str]] | None = None,
        filters: Sequence[ColumnFilter] | None = None,
        count: bool = True,
    ) -> FilteredPage:
        """The rows of a table passing ``filters`` (count and page, in one go): see
        :func:`lantide.query.grid_queries.filtered_page`."""
        from lantide.query import grid_queries

        relation, has_rowid = self.resolve_for_grid(relation_name)
        return self.engine.run(
            lambda cur: grid_queries.filtered_page(
                cur,
                relation,
                filters=filters,
                order_by=order_by,
                offset=offset,
                limit=limit,
                has_rowid=has_rowid,
                count=count,
            )
        )

    def count_filtered(
        self, relation_name: str, filters: Sequence[ColumnFilter] | None = None
    ) -> int:
        """How many rows of a table pass ``filters``."""
        from lantide.query import grid_queries

        relation, _ = self.resolve_for_grid(relation_name)
        return self.engine.run(
            lambda cur: grid_queries.filtered_count(cur, relation, filters=filters)
        )

    def summarize_column(
        self, relation_name: str, column: str, filters: Sequence[ColumnFilter] | None = None
    ) -> ColumnSummary:
        """Count, NULLs, sum, avg, min, max of a column over the rows passing ``filters``."""
        from lantide.query import grid_queries

        relation, has_rowid = self.resolve_for_grid(relation_name)
        return self.engine.run(
            lambda cur: grid_queries.summarize_column(
                cur, relation, column, filters=filters, has_rowid=has_rowid
            )
        )

    def rows_as_csv(
        self,
        relation_name: str,
        *,
        filters: Sequence[ColumnFilter] | None = None,
        order_by: Sequence[tuple[str, str]] | None = None,
        max_rows: int,
        max_bytes: int,
    ) -> tuple[str, int]:
        """The rows passing ``filters`` as CSV (DuckDB's COPY), under a size cap."""
        from lantide.query import grid_queries

        relation, has_rowid = self.resolve_for_grid(relation_name)
        return self.engine.run(
            lambda cur: grid_queries.filtered_csv(
                cur,
                relation,
                filters=filters,
                order_by=order_by,
                has_rowid=has_rowid,
                max_rows=max_rows,
                max_bytes=max_bytes,
            )
        )

    def relation_info(self, relation_name: str) -> RelationInfo:
        """Columns and row count of a table, for the grid's header and scroll bar."""
        relation, _ = self._local_relation(relation_name)

        def work(cur: Cursor) -> RelationInfo:
            cur.execute(f"SELECT * FROM {relation} LIMIT 0")
            columns = results.columns_of(cur.description)
            count = cur.execute(f"SELECT count(*) FROM {relation}").fetchall()[0][0]
            return {"relation": relation, "columns": columns, "row_count": int(count)}

        return self.engine.run(work)

    def profile_table(
        self, relation_name: str, *, bins: int = 10, top: int = 10, columns: list[str] | None = None
    ) -> TableProfile:
        """The column profile (:mod:`lantide.query.profile`); ``columns``: only these,
        matched without regard to case; an unknown name is refused with the real ones."""
        from lantide.query.profile import profile_relation

        self.inputs.refresh_if_stale()
        relation, resolved = self._local_relation(relation_name)
        if resolved.kind == lin.EXTERNAL:
            raise QueryError(
                f"{relation_name!r} is a table of connection {resolved.target!r}; "
                "only local tables are profiled",
                code="PROFILE_REMOTE_TABLE",
                hint="Stage it first (run_query with a result_label), then "
                "profile the cached table.",
            )
        only = None
        if columns:
            names = [r[0] for r in self.engine.execute(f"DESCRIBE SELECT * FROM {relation}")]
            by_key = {n.casefold(): n for n in names}
            missing = [c for c in columns if c.casefold() not in by_key]
            if missing:
                raise QueryError(
                    f"{relation_name!r} has no column {', '.join(map(repr, missing))}",
                    code="COLUMN_NOT_FOUND",
                    hint=f"Its columns: {', '.join(names)}.",
                )
            only = list(dict.fromkeys(by_key[c.casefold()] for c in columns))
        return profile_relation(self.engine, relation, bins=bins, top=top, only=only)

    def export_table(
        self,
        relation_name: str,
        path: str | Path,
        fmt: str | None = None,
        *,
        order_by: Sequence[tuple[str, str]] | None = None,
    ) -> Exported:
        """Write a table to a file; ``order_by`` as for :meth:`fetch_rows` (the grid's sort)."""
        from lantide.query.export import export_relation
        from lantide.query.ordering import normalize_order_by

        keys = normalize_order_by(order_by)
        relation, resolved = self._local_relation(relation_name)
        has_rowid = _has_rowid(resolved)
        return export_relation(
            self.engine, relation, Path(path), fmt, order_by=keys, has_rowid=has_rowid
        )


def _has_rowid(resolved: lin.Input) -> bool:
    """Data files (other than workbooks) are views, which have no row id."""
    return not (
        isinstance(resolved.detail, DataTable)
        and resolved.kind == lin.DATA
        and resolved.detail.format != "excel"
    )
