"""Importing ``duckdb`` without ``importlib.metadata``.

``duckdb/_version.py`` asks ``importlib.metadata.version("duckdb")`` at import time, which
imports ``importlib.metadata`` and the ``email`` package (to parse a METADATA file): about a
tenth of the desktop app's start-up before it is usable, for a version string nobody reads
then. :func:`import_duckdb` gives ``duckdb._version`` the same four names from the
installed ``duckdb-<version>.dist-info`` folder's name (PEP 427: the name carries the
version) before the first import. Anything unexpected (no such folder, two of them, a
``duckdb`` whose ``__init__`` wants another name) falls back to the plain import.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

_VERSION_MODULE = "duckdb._version"


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
