"""PySide6's own support code, compiled once instead of at every start.

When PySide6 is first imported, shiboken loads its support package (``shibokensupport``:
signature parsing, the ``__feature__`` switches, the .pyi generator: 13 modules, about
130 KB of Python) from a zip embedded in its library, and its importer compiles each
module's source with the builtin ``compile``. Nothing caches the bytecode, so every start
compiles it again: 27-37 ms of the main thread before the first paint (a bare PySide6
window pays the same). The regular expressions those modules compile at import come from
a cache of their own (:mod:`lantide.ui.regex_programs`), another 30-40 ms.

:func:`cached_support_code` is a context manager around the first ``import PySide6``.
While it is open, ``compile`` of a ``shibokensupport/`` source answers from a cache of
code objects in Lantide's cache directory when the source is byte for byte the one cached;
any other source (another PySide6) and any other call is compiled as before, with the
``__future__`` flags of its caller, and what was compiled is written back when the import
is done. The cache is Lantide's own file: an unreadable or broken one is ignored and
replaced, one that cannot be written is left (the next start compiles again). Like
Python's own ``__pycache__``, it holds code that runs: whoever can write to the user's
cache directory can run code at the next start, as they could through ``__pycache__``.
"""

from __future__ import annotations
import __future__ as future_features

import builtins
import marshal
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

from lantide.ui.regex_programs import RegexPrograms, read_marshal

SUPPORT_PREFIX = "shibokensupport/"

# What `compile` inherits from the frame that calls it (CPython's PyCF_MASK): the wrapper
# below must pass on its caller's flags, not its own. Not nested_scopes: its flag is
# CO_NESTED, which marks a nested function's code and is no future feature any more.
_FUTURE_FLAGS = 0
for _name in future_features.all_feature_names:
    if _name != "nested_scopes":
        _FUTURE_FLAGS |= getattr(future_features, _name).compiler_flag


def cache_file(cache_dir: Path) -> Path:
    """The cache for this Python's bytecode format (code objects do not cross versions)."""
    return cache_dir / f"qt-support-{MAGIC_NUMBER.hex()}.marshal"


def regex_cache_file(cache_dir: Path) -> Path:
    """The regular expressions' programs, for this exact Python (see :mod:`.regex_programs`)."""
    return cache_dir / f"qt-regex-{sys.hexversion:x}.marshal"


class SupportCodeCache:
    """Code objects of shiboken's support modules, keyed by their file name in its zip.
    (A plain class: a dataclass would cost a millisecond of the start it speeds up.)"""

    def __init__(
        self, path: Path, entries: dict[str, tuple[bytes, int, CodeType]] | None = None
    ) -> None:
        self.path = path
        self.entries = entries or {}
        self.hits: list[str] = []  # answered from the cache
        self.compiled: list[str] = []  # compiled (and kept for the next start)
        self.regex: RegexPrograms | None = None  # the import's regular expressions

    def __repr__(self) -> str:
        return f"SupportCodeCache({self.path!s}, hits={len(self.hits)}, compiled={self.compiled})"

    @classmethod
    def read(cls, path: Path) -> SupportCodeCache:
        loaded = read_marshal(path)
        entries = {}
        if isinstance(loaded, dict):
            entries = {name: entry for name, entry in loaded.items() if _is_entry(name, entry)}
        return cls(path, entries)

    def lookup(self, source: bytes, filename: str, flags: int) -> CodeType:
        entry = self.entries.get(filename)
        if entry is not None and entry[0] == source and entry[1] == flags:
            self.hits.append(filename)
            return entry[2]
        code = _builtin_compile(source, filename, "exec", flags, True)
        self.entries[filename] = (source, flags, code)
        self.compiled.append(filename)
        return code

    def write(self) -> None:
        from lantide.workspace.atomic import atomic_write_bytes

        # what this start used, no more: modules of another PySide6 are left behind
        used = {name: self.entries[name] for name in self.hits + self.compiled}
        with suppress(OSError):  # a cache: the next start compiles again
            atomic_write_bytes(self.path, marshal.dumps(used))


def _is_entry(name: object, entry: object) -> bool:
    return (
        isinstance(name, str)
        and isinstance(entry, tuple)
        and len(entry) == 3
        and isinstance(entry[0], bytes)
        and isinstance(entry[1], int)
        and isinstance(entry[2], CodeType)
    )


_builtin_compile = builtins.compile


@contextmanager
def cached_support_code(cache_dir: Path) -> Iterator[SupportCodeCache]:
    """Answer shiboken's compiles of its support sources, and the regular expressions
    compiled meanwhile, from the caches while open."""
    cache = SupportCodeCache.read(cache_file(cache_dir))
    regex = cache.regex = RegexPrograms.read(regex_cache_file(cache_dir))
    regex.seed()

    def compile_(
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
        **kwargs: Any,
    ) -> Any:
        if not dont_inherit:
            flags |= sys._getframe(1).f_code.co_flags & _FUTURE_FLAGS
        if (
            isinstance(source, bytes)
            and isinstance(filename, str)
            and filename.startswith(SUPPORT_PREFIX)
            and mode == "exec"
            and optimize == -1
            and not kwargs
        ):
            return cache.lookup(source, filename, flags)
        return _builtin_compile(source, filename, mode, flags, True, optimize, **kwargs)

    previous = builtins.compile
    builtins.compile = compile_
    try:
        yield cache
    finally:
        builtins.compile = previous
    if cache.compiled:
        cache.write()
    regex.record()
    if regex.recorded:
        regex.write()
