"""Where the shipped ``prompts/`` and ``resources/`` folders are at run time.

In a wheel they are package data under ``lantide/_data/`` (see pyproject.toml); in a
source checkout or an editable install they are the top-level folders of the repository.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lantide.errors import LantideError

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def _data_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise LantideError(
        f"Lantide's {name}/ folder is missing from the installation ({_PACKAGE_DIR}).",
        hint="Reinstall Lantide (pip install --force-reinstall lantide).",
        code="INSTALL_BROKEN",
    )


def prompts_dir() -> Path:
    return _data_dir("prompts")


def resources_dir() -> Path:
    return _data_dir("resources")


def resource_path(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)


def read_resource_text(*parts: str) -> str:
    """A shipped text resource, stored as is or gzip-compressed beside it as ``NAME.gz``
    (the big vendored files: the installed build has a size budget)."""
    path = resource_path(*parts)
    if not path.is_file():
        packed = path.with_name(path.name + ".gz")
        if packed.is_file():
            import gzip

            return gzip.decompress(packed.read_bytes()).decode("utf-8")
    return path.read_text(encoding="utf-8")
