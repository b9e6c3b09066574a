"""Regular expressions that PySide6's first import compiles, kept compiled between starts.

Importing PySide6 compiles five regular expressions, long verbose ones in its signature
parser and .pyi generator (the app's other imports compile theirs before it). Python's
``re`` parses each pattern and builds its program in Python, then hands the program to the
C engine (``_sre.compile``): ~100M instructions, 30-40 ms of every start before the first
paint, for patterns that never change. Python keeps compiled patterns only in memory
(``re``'s own cache).

:class:`RegexPrograms` keeps the programs: :meth:`RegexPrograms.seed` puts the cached ones
into ``re``'s cache before the import, so its ``re.compile`` calls find them there, and
:meth:`RegexPrograms.record` takes the programs of the patterns compiled during the import
that were not cached yet (a first start, another PySide6), for the next start. It compiles
those once more with the engine watched, so a first start pays for them twice; every later
start pays for none.

This uses three internals of ``re`` (its cache dict, ``re._compiler.compile`` and the
``_sre`` module it calls), guarded: a Python whose ``re`` differs does none of it, and a
cache is only read by the exact Python version and ``_sre`` engine that wrote it. The C
engine checks every program it is given (``_sre.compile`` raises on invalid code), so a
damaged cache costs nothing but a compile; it is Lantide's own file, replaced when written.
"""

from __future__ import annotations

import marshal
import re
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

# (pattern, flags as given) -> (flags of the program, code, groups, groupindex, indexgroup)
Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]

_MAX_PROGRAMS = 256


def read_marshal(path: Path) -> object:
    """What ``path`` holds, or None when it is missing, unreadable or not marshal data."""
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _sre_module() -> Any:
    """``re``'s C engine as ``re._compiler`` calls it, or None on a Python that differs."""
    compiler = getattr(re, "_compiler", None)
    sre = getattr(compiler, "_sre", None)
    cache = getattr(re, "_cache", None)
    if sre is None or not callable(getattr(compiler, "compile", None)) or cache is None:
        return None
    if not isinstance(cache, dict) or not callable(getattr(sre, "compile", None)):
        return None
    return sre


def _header() -> tuple[str, int]:
    sre = _sre_module()
    return (sys.version, int(getattr(sre, "MAGIC", 0)))


def _is_program(key: object, program: object) -> bool:
    if not (isinstance(key, tuple) and len(key) == 2):
        return False
    if not (isinstance(key[0], str | bytes) and isinstance(key[1], int)):
        return False
    return (
        isinstance(program, tuple)
        and len(program) == 5
        and isinstance(program[0], int)
        and isinstance(program[1], list)
        and isinstance(program[2], int)
        and isinstance(program[3], dict)
        and isinstance(program[4], tuple)
    )


class RegexPrograms:
    """The programs of the patterns compiled while PySide6 was first imported."""

    def __init__(self, path: Path, programs: dict[tuple[str | bytes, int], Program] | None = None):
        self.path = path
        self.programs = programs or {}
        self.seeded: list[str | bytes] = []  # put into re's cache from this file
        self.recorded: list[str | bytes] = []  # compiled this start, kept for the next
        self._before: set[Any] = set()

    def __repr__(self) -> str:
        seeded, recorded = len(self.seeded), len(self.recorded)
        return f"RegexPrograms({self.path!s}, seeded={seeded}, recorded={recorded})"

    @classmethod
    def read(cls, path: Path) -> RegexPrograms:
        stored = read_marshal(path)
        programs: dict[tuple[str | bytes, int], Program] = {}
        if (
            isinstance(stored, tuple)
            and len(stored) == 2
            and stored[0] == _header()
            and isinstance(stored[1], dict)
        ):
            programs = {k: v for k, v in stored[1].items() if _is_program(k, v)}
        return cls(path, programs)

    def seed(self) -> None:
        """Put the cached programs into ``re``'s cache (before the import)."""
        sre = _sre_module()
        if sre is None:
            return
        cache = re._cache  # type: ignore[attr-defined]
        for (pattern, flags), program in list(self.programs.items()):
            key = (type(pattern), pattern, flags)
            if key in cache:
                continue
            try:
                cache[key] = sre.compile(pattern, *program)
            except Exception:  # the engine refused it (damaged, or not for this engine)
                del self.programs[(pattern, flags)]
                continue
            self.seeded.append(pattern)
        self._before = set(cache)

    def record(self) -> None:
        """Keep the programs of the patterns compiled since :meth:`seed` (after the import)."""
        if _sre_module() is None:
            return
        new = [key for key in list(re._cache) if key not in self._before]  # type: ignore[attr-defined]
        for key in new:
            if not (isinstance(key, tuple) and len(key) == 3):
                return  # a re that keys its cache otherwise: nothing to keep
            _type, pattern, flags = key
            if not isinstance(flags, int) or len(self.programs) >= _MAX_PROGRAMS:
                continue
            if flags & re.DEBUG:
                continue
            program = program_of(pattern, flags)
            if program is not None:
                self.programs[(pattern, flags)] = program
                self.recorded.append(pattern)

    def write(self) -> None:
        from lantide.workspace.atomic import atomic_write_bytes

        with suppress(OSError, ValueError):  # a cache: the next start compiles again
            atomic_write_bytes(self.path, marshal.dumps((_header(), self.programs)))


def program_of(pattern: str | bytes, flags: int) -> Program | None:
    """What ``re`` hands its C engine for ``pattern``: compiled again (as ``re`` would) with
    the engine's ``compile`` watched. None when ``re`` works differently."""
    sre = _sre_module()
    if sre is None:
        return None
    compiler = re._compiler  # type: ignore[attr-defined]
    seen: list[tuple[Any, ...]] = []

    class _Watched:
        def __getattr__(self, name: str) -> Any:
            return getattr(sre, name)

        def compile(self, *args: Any) -> Any:
            seen.append(args)
            return sre.compile(*args)

    compiler._sre = _Watched()
    try:
        compiler.compile(pattern, flags)
    except Exception:
        return None
    finally:
        compiler._sre = sre
    # another thread may compile meanwhile: take the call for this pattern
    mine = [args for args in seen if len(args) == 6 and args[0] == pattern]
    if not mine:
        return None
    _pattern, final_flags, code, groups, groupindex, indexgroup = mine[-1]
    # the opcodes are named int constants: plain ints for marshal
    program = (
        int(final_flags),
        [int(op) for op in code],
        int(groups),
        dict(groupindex),
        tuple(indexgroup),
    )
    try:
        marshal.dumps(program)
    except ValueError:
        return None
    return program
