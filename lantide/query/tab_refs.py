"""Renaming a tab's cached table in the SQL of the tabs that read it.

:func:`rewrite_table_refs` changes the references to one cached table in a statement and
nothing else: the tables are found in sqlglot's parse (so a column, a string, a comment
or a CTE that happens to share the name is left alone; a column qualified by the table's
name, ``old.col`` where the table is read without an alias, follows it), and only each
reference's span in the original text is replaced (found from the identifier's position
in sqlglot's tokens), so the analyst's formatting, comments and spelling of everything else stay as
written. A reference written quoted stays quoted; a bare one stays bare when the new name
allows it.

:func:`plan_rewrites` does it for the tabs given (the renamed tab's project, and the other
projects' tabs, which read it as a cached table) before anything is written, and refuses
(``RENAME_DEPENDENT_UNPARSEABLE``, nothing changed) when a tab that may read the table
cannot be parsed. Remote tabs (a ``-- lantide: connection=`` header) name the
connection's tables, not cached tables, and are never rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lantide.errors import LantideError
from lantide.query.errors import TabError
from lantide.query.names import quote_ident, same_name

if TYPE_CHECKING:
    from sqlglot import exp

_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
REMOTE_HEADER = "-- lantide: connection="


class Unparseable(Exception):
    """sqlglot cannot parse the text, so its references cannot be found."""


@dataclass(frozen=True)
class Rewrite:
    project: str  # the tab's project (folder name)
    tab: str
    old_text: str
    new_text: str
    references: int  # how many references were renamed


def _identifier_text(new: str, quoted: bool) -> str:
    from sqlglot.dialects.duckdb import DuckDB

    bare = _BARE.fullmatch(new) and new.upper() not in DuckDB.Tokenizer.KEYWORDS
    return new if bare and not quoted else quote_ident(new)


def _cte_names(statement: exp.Expr) -> set[str]:
    from sqlglot import exp

    return {str(c.alias).casefold() for c in statement.find_all(exp.CTE)}


def rewrite_table_refs(sql: str, old: str, new: str) -> tuple[str, int]:
    """``sql`` with each reference to the table ``old`` (bare or ``main.old``, not a CTE of
    that name) renamed to ``new``, and how many there were; :class:`Unparseable` when
    sqlglot cannot parse ``sql``."""
    import sqlglot
    from sqlglot import exp

    if sql.startswith("\ufeff"):  # a byte-order mark stays where it is
        text, count = rewrite_table_refs(sql[1:], old, new)
        return "\ufeff" + text, count
    try:
        statements = [e for e in sqlglot.parse(sql, read="duckdb") if e is not None]
    except Exception as exc:  # ParseError / TokenError / RecursionError
        raise Unparseable(str(exc).splitlines()[0] if str(exc) else "cannot parse") from None
    spans: list[tuple[int, int, bool]] = []
    for statement in statements:
        ctes = _cte_names(statement)
        aliases = {str(a.name).casefold() for a in statement.find_all(exp.TableAlias)}
        reads_it = False
        for table in statement.find_all(exp.Table):
            ident = table.this
            if not isinstance(ident, exp.Identifier) or not same_name(ident.name, old):
                continue
            if table.catalog or (table.db and not same_name(table.db, "main")):
                continue  # another schema or database: not the cached table
            if not table.db and ident.name.casefold() in ctes:
                continue  # the statement's own CTE of that name
            spans.append(_span(sql, ident, old))
            reads_it = reads_it or not table.alias
        # ``old.col`` names the table when it is read without an alias; a qualifier that
        # could be an alias of that name as well is not guessed at
        for column in statement.find_all(exp.Column):
            outer = [column.args.get("catalog"), column.args.get("db")]
            if reads_it and any(
                isinstance(p, exp.Identifier) and same_name(p.name, old) for p in outer
            ):  # base.s.f: a field of column s, or column f of a table s in schema base
                raise Unparseable(f"{column.sql()} can be read more than one way")
            qualifier = column.args.get("table")
            if not isinstance(qualifier, exp.Identifier) or not same_name(qualifier.name, old):
                continue
            if column.args.get("catalog") or (
                column.args.get("db") and not same_name(column.args["db"].name, "main")
            ):
                continue
            if old.casefold() in aliases or old.casefold() in ctes:
                if reads_it:
                    raise Unparseable(f"{old!r} names both the table and an alias or CTE")
                continue  # the qualifier is the alias's or the CTE's
            if reads_it:
                spans.append(_span(sql, qualifier, old))
    text = sql
    for start, end, quoted in sorted(set(spans), reverse=True):
        text = text[:start] + _identifier_text(new, quoted) + text[end:]
    return text, len(set(spans))


def _span(sql: str, ident: exp.Identifier, old: str) -> tuple[int, int, bool]:
    """Where ``ident`` is written in ``sql`` (end exclusive) and whether it is quoted."""
    start, end = ident.meta.get("start"), ident.meta.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        raise Unparseable(f"no position for the reference to {old!r}")
    quoted = bool(ident.args.get("quoted"))
    if sql[start : end + 1] != (quote_ident(ident.name) if quoted else ident.name):
        raise Unparseable(f"the reference to {old!r} is not where the parser says")
    return start, end + 1, quoted


def may_read(sql: str, old: str) -> bool:
    """Whether unparseable ``sql`` may name ``old``: an identifier token of that name, or
    when even the tokens cannot be read, the name anywhere in the text."""
    from sqlglot import TokenType
    from sqlglot.dialects.duckdb import DuckDB

    try:
        tokens = DuckDB().tokenize(sql)
    except Exception:
        return old.casefold() in sql.casefold()
    names = (TokenType.VAR, TokenType.IDENTIFIER)
    return any(
        t.token_type in names
        and same_name(t.text, old)
        or (t.token_type not in names and t.text.casefold() == old.casefold())
        for t in tokens
    )


def is_remote(sql: str) -> bool:
    """Whether the tab runs on a connection: the runner's rule
    (:func:`lantide.query.remote_tabs.tab_connection`), which refuses an unclear header."""
    from lantide.query.remote_tabs import tab_connection

    return tab_connection(sql) is not None


def plan_rewrites(texts: dict[tuple[str, str], str], old: str, new: str) -> list[Rewrite]:
    """The rewrite of each tab ((project, tab) -> SQL) that reads ``old``, computed before
    anything is written; refuses when a tab that may read it cannot be parsed."""
    out: list[Rewrite] = []
    stuck: list[str] = []
    for (project, tab), sql in texts.items():
        try:
            if is_remote(sql):
                continue
        except LantideError as exc:  # an unclear header: local or remote is not known
            if may_read(sql, old):
                stuck.append(f"{tab!r} of project {project!r} ({exc.message})")
            continue
        try:
            new_text, count = rewrite_table_refs(sql, old, new)
        except Unparseable as exc:
            if may_read(sql, old):
                stuck.append(f"{tab!r} of project {project!r} ({exc})")
            continue
        if count:
            out.append(Rewrite(project, tab, sql, new_text, count))
    if stuck:
        raise TabError(
            f"cannot rename {old!r}: the references to it in {', '.join(stuck)} cannot be "
            "found for certain, so they cannot be updated; nothing was changed",
            code="RENAME_DEPENDENT_UNPARSEABLE",
            hint="Fix that tab's SQL (Run shows a syntax error), or give the table an alias "
            "there, then rename again.",
        )
    return out
