"""Go to definition: the table named under the cursor in a SQL tab, and what defines it.

:func:`table_at` finds the table reference at a character offset from sqlglot's parse of
the text (each identifier knows its span), so a column, a string or a comment that spells
a table's name is never taken for it, and a CTE name points at the CTE. The reference is
then resolved like a run resolves it (:meth:`lantide.query.resolver.InputResolver.resolve`,
the project's own tabs first, as lineage does) by :func:`definition_of`:

| the name is                          | ``kind``  | the app opens                      |
| ------------------------------------ | --------- | ---------------------------------- |
| a tab of the project                 | ``sql_tab`` | that tab                         |
| the cached table of another project's tab | ``sql_tab`` | that tab, in its project    |
| a data file, a sheet, a cached result | ``table`` | its table browser                 |
| a table of a connection              | ``table`` | its table browser                  |
| a CTE of the statement               | ``cte``   | the cursor moves to its definition |
| nothing known                        | ``unknown`` | a message saying so              |
| a name in a remote tab               | ``unknown`` | a message: it is the connection's |

(A remote tab starts with ``-- lantide: connection=NAME``: its names are that database's.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict

from lantide.query import lineage as lin
from lantide.query.catalog import TAB
from lantide.query.guard import TableRef
from lantide.query.sql_format import header_connection

if TYPE_CHECKING:
    from lantide.query.catalog import Catalog
    from lantide.query.resolver import InputResolver


class Definition(TypedDict):
    kind: Literal["sql_tab", "table", "cte", "unknown"]
    name: str  # the tab, the table as the browser takes it, the CTE, or what was written
    project: str | None  # the project of a sql_tab
    offset: int | None  # where a CTE is defined (a character offset in the text)
    message: str  # one line for the status bar


@dataclass(frozen=True)
class TableAt:
    ref: TableRef
    start: int  # the reference's span in the text (quotes included), end exclusive
    end: int
    cte_offset: int | None = None  # where the statement defines it, when it is a CTE's name
    remote: str | None = None  # the connection a remote tab runs on: its names are that DB's


def table_at(sql: str, offset: int, *, dialect: str = "duckdb") -> TableAt | None:
    """The table reference whose name spans ``offset`` (the cursor just after it counts),
    or None: no table there, or text sqlglot cannot parse (being typed)."""
    import sqlglot
    from sqlglot import exp

    try:
        statements = [e for e in sqlglot.parse(sql, read=dialect) if e is not None]
    except Exception:  # sqlglot's ParseError / TokenError, or too deep: no definition
        return None
    for statement in statements:
        for table in statement.find_all(exp.Table):
            if not isinstance(table.this, exp.Identifier):
                continue  # a table function: read_csv(...)
            spans = [p.meta for p in table.parts if "start" in p.meta and "end" in p.meta]
            if not spans:
                continue
            start, end = spans[0]["start"], spans[-1]["end"] + 1
            if not start <= offset <= end:
                continue
            ref = TableRef(table.name, table.db or None, table.catalog or None)
            return TableAt(ref, start, end, _cte_offset(table, ref), _connection(sql))
    return None


def _connection(sql: str) -> str | None:
    """The tab's connection; none for an unclear header (a run of the tab says why)."""
    from lantide.errors import LantideError

    try:
        return header_connection(sql)
    except LantideError:
        return None


def _cte_offset(table: object, ref: TableRef) -> int | None:
    """Where the CTE ``ref`` names is defined, in the statement ``table`` is part of."""
    from sqlglot import exp

    if ref.schema or ref.catalog or not isinstance(table, exp.Expr):
        return None
    node: exp.Expr | None = table
    while node is not None:
        with_ = node.args.get("with_") or node.args.get("with")
        if isinstance(with_, exp.With):
            for cte in with_.expressions:
                alias = cte.args.get("alias")
                ident = alias.this if isinstance(alias, exp.TableAlias) else None
                if (
                    isinstance(ident, exp.Identifier)
                    and ident.name.casefold() == ref.name.casefold()
                    and "start" in ident.meta
                ):
                    start: int = ident.meta["start"]
                    return start
        node = node.parent
    return None


def definition_of(
    found: TableAt,
    *,
    project: str,
    project_tabs: list[str],
    inputs: InputResolver,
    catalog: Catalog,
) -> Definition:
    """What defines the table ``found`` names (the table in the module docstring)."""
    written = found.ref.display()
    if found.remote:
        return _definition(
            "unknown",
            written,
            None,
            None,
            f"{written} is a table of the connection {found.remote!r} this tab runs on: "
            "the explorer's Connections list it",
        )
    if found.cte_offset is not None:
        return _definition("cte", found.ref.name, None, found.cte_offset, f"CTE {written}")
    resolved = inputs.resolve(found.ref, project_tabs)
    if resolved.kind == lin.TAB:
        return _definition("sql_tab", resolved.target, project, None, f"SQL tab {resolved.target}")
    if resolved.kind == lin.CACHED:
        cached = catalog.cached(resolved.target)
        if cached is not None and cached.kind == TAB and cached.tab and cached.project:
            return _definition(
                "sql_tab",
                cached.tab,
                cached.project,
                None,
                f"SQL tab {cached.tab} of project {cached.project}",
            )
        return _definition("table", written, None, None, f"cached table {written}")
    if resolved.kind == lin.DATA:
        return _definition("table", written, None, None, f"data file table {written}")
    if resolved.kind == lin.EXTERNAL:
        return _definition(
            "table", written, None, None, f"table {written} of connection {resolved.target}"
        )
    return _definition(
        "unknown",
        written,
        None,
        None,
        f"{written} is not a table Lantide knows: no tab, data file, cached table or "
        "connection has that name",
    )


def _definition(
    kind: Literal["sql_tab", "table", "cte", "unknown"],
    name: str,
    project: str | None,
    offset: int | None,
    message: str,
) -> Definition:
    return {"kind": kind, "name": name, "project": project, "offset": offset, "message": message}
