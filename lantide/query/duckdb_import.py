"""Importing ``duckdb`` without ``importlib.metadata``.

``duckdb/_version.py`` asks ``importlib.metadata.version("duckdb")`` at import time, which
imports ``importlib.metadata`` and the ``email`` package (to parse a METADATA file): about a
tenth of the desktop app's start-up before it is usable, for a version string nobody reads
then. :func:`import_duckdb` gives ``duckdb._version`` the same four names from the
installed ``duckdb-<version>.dist-info`` folder's name (PEP 427: the name carries the
version) before the first import. Anything unexpected (no such folder, two of them, a
``duckdb`` whose ``__init__`` wants another name) falls back to the plain import.

:func:`duckdb_core` is less still: DuckDB's compiled core ``_duckdb``, which is what
``duckdb`` re-exports as ``connect``, the connection class and the exception classes.
``import duckdb`` adds a Python layer on top (the relation API patched onto the
connection class, Arrow sources, expressions): about two thirds of its import time, and
nothing opening the database, registering the data files or listing the tables uses. The
query layer opens with the core; ``duckdb`` itself loads when first imported (the query
service's parts load it a moment after the desktop app is usable).
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

_VERSION_MODULE = "duckdb._version"
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
)


def duckdb_core() -> Any:
    """``duckdb`` if it is imported already, else DuckDB's compiled core ``_duckdb`` (the
    same ``connect`` and exception classes). The full import (:func:`import_duckdb`) when
    the core is not there under that name or lacks one of the names the query layer uses.
    The package itself is imported later through :func:`import_duckdb` (the service's
    parts, the first query's result), which spares ``importlib.metadata``."""
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
    """``import duckdb``, sparing ``importlib.metadata`` when it can."""
    loaded = sys.modules.get("duckdb")
    if loaded is not None:
        return loaded
    shim = _version_module()
    if shim is None:
        import duckdb

        return duckdb
    sys.modules[_VERSION_MODULE] = shim
    try:
        import duckdb
    except ImportError:  # a duckdb that wants more of _version than the four names
        for name in [n for n in sys.modules if n == "duckdb" or n.startswith("duckdb.")]:
            del sys.modules[name]
        import duckdb
    return duckdb


def _version_module() -> types.ModuleType | None:
    version = _installed_version()
    if version is None:
        return None
    try:
        import _duckdb
    except ImportError:
        return None
    module = types.ModuleType(_VERSION_MODULE)

    def version_text() -> str:
        return f"{version} (with duckdb {_duckdb.__version__})"

    def build_info() -> dict[str, str]:
        try:
            from duckdb._build_info import PACKAGE_COMMIT

            commit = str(PACKAGE_COMMIT)
        except (ImportError, AttributeError):
            commit = "unknown"
        return {
            "package_version": version,
            "package_commit": commit,
            "duckdb_version": _duckdb.__version__,
            "duckdb_commit": _duckdb.__git_revision__,
        }

    module.__dict__.update(
        __version__=version,
        __duckdb_version__=_duckdb.__version__,
        version=version_text,
        build_info=build_info,
    )
    return module


def _installed_version() -> str | None:
    """The version in the name of duckdb's ``.dist-info`` folder beside the package."""
    spec = importlib.util.find_spec("duckdb")
    if spec is None or not spec.submodule_search_locations:
        return None
    site = Path(next(iter(spec.submodule_search_locations))).parent
    found = [p.name for p in site.glob("duckdb-*.dist-info") if (p / "METADATA").is_file()]
    if len(found) != 1:
        return None
    version = found[0][len("duckdb-") : -len(".dist-info")]
    return version if version and "-" not in version else None
