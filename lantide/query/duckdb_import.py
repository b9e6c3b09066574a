"""Opening DuckDB with its compiled core, the ``duckdb`` package's Python layer later.

:func:`duckdb_core` is DuckDB's compiled core ``_duckdb``, which is what ``duckdb``
re-exports as ``connect``, the connection class and the exception classes. ``import
duckdb`` adds a Python layer on top (the relation API patched onto the connection class,
Arrow sources, expressions, ``importlib.metadata`` for its version string): about two
thirds of its import time, and nothing opening the database, registering the data files or
listing the tables uses. The query layer opens with the core; ``duckdb`` itself loads
with the first query or the query service's parts (:func:`import_duckdb`), a moment after
the desktop app is usable.

``_duckdb`` is a top-level module of the ``duckdb`` wheel, not a documented API: the
upper bound on ``duckdb`` in pyproject.toml is there for it. Without it, or when it lacks
a name the query layer uses, :func:`duckdb_core` is the plain ``import duckdb``.
"""

from __future__ import annotations

import sys
from typing import Any

# What the query layer takes from the core before ``duckdb`` is imported.
_CORE_NAMES = (
    "connect",
    "DuckDBPyConnection",
    "Error",
    "InterruptException",
    "CatalogException",
    "BinderException",
    "ParserException",
    "PermissionException",
    "OutOfMemoryException",
    "InvalidInputException",
    "ConversionException",
    "ConstraintException",
)


def duckdb_core() -> Any:
    """``duckdb`` if it is imported already, else DuckDB's compiled core ``_duckdb`` (the
    same ``connect`` and exception classes); the plain import when the core is not there
    under that name or lacks one of the names the query layer uses."""
    loaded = sys.modules.get("duckdb")
    if loaded is not None:
        return loaded
    try:
        import _duckdb
    except ImportError:
        return import_duckdb()
    if not all(hasattr(_duckdb, name) for name in _CORE_NAMES):
        return import_duckdb()
    return _duckdb


def import_duckdb() -> Any:
    """``import duckdb`` (the package's Python layer): one place, so the query layer's
    deferred imports of it read the same."""
    import duckdb

    return duckdb
