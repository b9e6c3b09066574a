"""Lantide's own tables in a cache database (schema ``_lantide``), made when missing.

Each part of the query layer keeps its bookkeeping in a table of its own (the catalog's
``sources`` and ``cached_tables``, ``row_counts``, ``check_facts``, ``remote_consents``).
A ``CREATE ... IF NOT EXISTS`` per table on every open was a catalog write transaction
each: 1-8 ms apiece before a headless command's first statement (issue 33). Instead, the
tables and columns there are read once per engine (:func:`existing`) and a table is made
only when it is missing (:func:`ensure`). The engine owns its database (the workspace
lock; DuckDB locks the file against other processes), so what it read stays true but for
what it makes itself, which :func:`ensure` adds.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

from lantide.query.names import INTERNAL_SCHEMA

if TYPE_CHECKING:
    from lantide.query.engine import Engine

# engine -> {table name: its column names}, of schema _lantide
_seen: weakref.WeakKeyDictionary[Engine, dict[str, set[str]]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def existing(engine: Engine) -> dict[str, set[str]]:
    """The tables of schema ``_lantide`` and their columns (read once per engine)."""
    with _lock:
        known = _seen.get(engine)
    if known is not None:
        return known
    rows = engine.execute(
        "SELECT table_name, column_name FROM duckdb_columns() "
        f"WHERE database_name = current_database() AND schema_name = '{INTERNAL_SCHEMA}'"
    )
    found: dict[str, set[str]] = {}
    for table, column in rows:
        found.setdefault(str(table), set()).add(str(column))
    with _lock:
        return _seen.setdefault(engine, found)


def ensure(engine: Engine, table: str, ddl: str) -> bool:
    """Run ``ddl`` (which makes ``_lantide.<table>``, and the schema before it when
    needed) unless the table is there; True when it was made now."""
    if table in existing(engine):
        return False
    engine.execute(f'CREATE SCHEMA IF NOT EXISTS "{INTERNAL_SCHEMA}"')
    engine.execute(ddl)
    made(engine, table)
    return True


def made(engine: Engine, table: str, columns: set[str] | None = None) -> None:
    """``table`` exists now (made by this engine), with ``columns`` when they matter."""
    known = existing(engine)
    with _lock:
        known.setdefault(table, set()).update(columns or ())
