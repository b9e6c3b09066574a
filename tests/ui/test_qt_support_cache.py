"""PySide6's support code (``shibokensupport``, compiled from a zip in shiboken's library at
every first import of PySide6: 35-45 ms of each start) comes from Lantide's cache after
the first start, and PySide6 behaves the same with it."""

from __future__ import annotations

import _sre
import json
import marshal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lantide.ui import qt_support_cache
from lantide.ui.qt_support_cache import (
    SupportCodeCache,
    cache_file,
    cached_support_code,
    regex_cache_file,
)
from lantide.ui.regex_programs import program_of
from tests.conftest import REPO, cli_env

ANNOTATIONS_FLAG = 0x1000000  # __future__.annotations.compiler_flag

PROBE = textwrap.dedent(
    """
    import json, sys
    import lantide.ui
    from PySide6.QtCore import QObject
    try:
        QObject().setObjectName(1, 2)
    except TypeError as error:
        message = str(error)
    code = lantide.ui.qt_support_code
    loaded = sorted(name for name in sys.modules if name.startswith("shibokensupport"))
    print(json.dumps({"hits": code.hits, "compiled": code.compiled, "message": message,
                      "loaded": loaded}))
    """
)


def _start(cache_dir: Path, probe: str = PROBE) -> dict:
    """Run ``probe`` in a new interpreter with ``cache_dir`` as Lantide's cache; its report."""
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=cli_env({"LANTIDE_CACHE_DIR": str(cache_dir)}),
        cwd=str(REPO),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _plain_pyside_message() -> str:
    script = (
        "from PySide6.QtCore import QObject\n"
        "try:\n    QObject().setObjectName(1, 2)\n"
        "except TypeError as error:\n    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_second_start_compiles_none_of_pysides_support_code(tmp_path):
    cache_dir = tmp_path / "cache"
    first = _start(cache_dir)
    # every support module PySide6 loaded was compiled once, and kept
    assert len(first["compiled"]) >= 10 and first["hits"] == []
    assert all(name.startswith("shibokensupport/") for name in first["compiled"])
    assert cache_file(cache_dir).is_file()

    second = _start(cache_dir)
    assert second["compiled"] == []
    assert sorted(second["hits"]) == sorted(first["compiled"])
    # the same modules, and PySide6's own error text (its signature code at work)
    assert second["loaded"] == first["loaded"]
    assert second["message"] == first["message"] == _plain_pyside_message()
    assert "setObjectName" in second["message"]


def test_a_broken_cache_file_is_ignored_and_replaced(tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    cache_file(cache_dir).write_bytes(b"\x00not marshal at all\xff" * 10)

    first = _start(cache_dir)
    assert first["hits"] == [] and len(first["compiled"]) >= 10
    assert _start(cache_dir)["compiled"] == []  # rewritten, whole


def test_a_module_whose_source_changed_is_compiled_again_and_the_rest_come_from_the_cache(
    tmp_path,
):
    cache_dir = tmp_path / "cache"
    compiled = _start(cache_dir)["compiled"]
    path = cache_file(cache_dir)
    entries = marshal.loads(path.read_bytes())
    changed = "shibokensupport/signature/parser.py"
    source, flags, code = entries[changed]
    entries[changed] = (source + b"\n# another PySide6\n", flags, code)
    entries["shibokensupport/gone.py"] = (b"x = 1\n", flags, compile("x = 1\n", "gone", "exec"))
    path.write_bytes(marshal.dumps(entries))

    again = _start(cache_dir)
    assert again["compiled"] == [changed]
    assert sorted(again["hits"]) == sorted(set(compiled) - {changed})
    # written back with what this start used: the module no PySide6 loads is dropped
    assert sorted(marshal.loads(path.read_bytes())) == sorted(compiled)
    assert _start(cache_dir)["compiled"] == []


def test_a_cache_that_cannot_be_written_leaves_the_start_as_it_was(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    report = _start(blocked / "cache")
    assert len(report["compiled"]) >= 10
    assert report["message"] == _plain_pyside_message()
    assert blocked.read_text(encoding="utf-8") == "not a directory"


def _compile_from(module_source: str, namespace: dict) -> None:
    exec(compile(module_source, "<caller>", "exec", dont_inherit=True), namespace)


def test_compile_keeps_its_callers_future_flags_and_leaves_other_sources_alone(tmp_path):
    caller = "def run(source, filename):\n    return compile(source, filename, 'exec')\n"
    with_future = {}
    _compile_from("from __future__ import annotations\n" + caller, with_future)
    without_future = {}
    _compile_from(caller, without_future)
    source = b"x: undefined_name = 1\n"

    with cached_support_code(tmp_path) as cache:
        lazy = with_future["run"](source, "shibokensupport/a.py")
        eager = without_future["run"](source, "shibokensupport/b.py")
        other = with_future["run"](source, "someone/else.py")
        again = with_future["run"](source, "shibokensupport/a.py")

    assert lazy.co_flags & ANNOTATIONS_FLAG and not eager.co_flags & ANNOTATIONS_FLAG
    exec(lazy, {})  # the annotation is never evaluated
    with pytest.raises(NameError):
        exec(eager, {})
    assert other.co_flags & ANNOTATIONS_FLAG  # passed through with its caller's flags
    assert again is lazy and cache.hits == ["shibokensupport/a.py"]
    assert cache.compiled == ["shibokensupport/a.py", "shibokensupport/b.py"]
    assert compile is qt_support_cache._builtin_compile  # restored

    stored = SupportCodeCache.read(cache_file(tmp_path))
    assert set(stored.entries) == {"shibokensupport/a.py", "shibokensupport/b.py"}


def test_compile_is_restored_when_the_import_fails(tmp_path):
    with pytest.raises(RuntimeError), cached_support_code(tmp_path):
        raise RuntimeError("the import failed")
    assert compile is qt_support_cache._builtin_compile


# -- the regular expressions PySide6's support code compiles at import -------------------

REGEX_PROBE = textwrap.dedent(
    """
    import json, re, sys
    import lantide.ui
    regex = lantide.ui.qt_support_code.regex
    # each seeded pattern against one compiled now by re itself: same program, same answers
    from lantide.ui.regex_programs import program_of
    same = []
    texts = ["", "QObject.setObjectName(self, name: str) -> None", "a, b=[1, (2, 3)], c='x'",
             "  \\n\\t(x)", "PySide6.QtCore.Qt.AlignmentFlag", "int[2] or None"]
    for (pattern, flags), program in regex.programs.items():
        seeded = re._cache[(type(pattern), pattern, flags)]
        fresh = re._compiler.compile(pattern, flags)
        text = [t.encode() for t in texts] if isinstance(pattern, bytes) else texts
        same.append(
            program_of(pattern, flags) == program
            and seeded.groupindex == fresh.groupindex and seeded.flags == fresh.flags
            and [seeded.search(t) and seeded.search(t).span() for t in text]
            == [fresh.search(t) and fresh.search(t).span() for t in text]
        )
    print(json.dumps({"seeded": len(regex.seeded), "recorded": len(regex.recorded),
                      "same": same}))
    """
)


def _regex_start(cache_dir: Path) -> dict:
    return _start(cache_dir, REGEX_PROBE)


def test_the_regular_expressions_of_the_import_are_compiled_once_and_behave_the_same(tmp_path):
    cache_dir = tmp_path / "cache"
    first = _regex_start(cache_dir)
    assert first["recorded"] >= 3 and first["seeded"] == 0
    assert regex_cache_file(cache_dir).is_file()

    second = _regex_start(cache_dir)
    assert second["recorded"] == 0 and second["seeded"] == first["recorded"]
    assert second["same"] and all(second["same"])


def test_a_damaged_regex_program_is_refused_by_the_engine_and_compiled_again(tmp_path):
    cache_dir = tmp_path / "cache"
    recorded = _regex_start(cache_dir)["recorded"]
    path = regex_cache_file(cache_dir)
    header, programs = marshal.loads(path.read_bytes())
    key = next(iter(programs))
    flags, code, groups, groupindex, indexgroup = programs[key]
    programs[key] = (flags, [999_999] + code[1:], groups, groupindex, indexgroup)
    path.write_bytes(marshal.dumps((header, programs)))

    again = _regex_start(cache_dir)
    assert again["seeded"] == recorded - 1 and again["recorded"] == 1
    assert _start(cache_dir)["message"] == _plain_pyside_message()
    assert _regex_start(cache_dir)["seeded"] == recorded  # written back, whole


def test_a_regex_cache_of_another_python_or_garbage_is_not_used(tmp_path):
    cache_dir = tmp_path / "cache"
    recorded = _regex_start(cache_dir)["recorded"]
    path = regex_cache_file(cache_dir)
    _header, programs = marshal.loads(path.read_bytes())
    path.write_bytes(marshal.dumps((("3.99.0 (another)", 1), programs)))
    other = _regex_start(cache_dir)
    assert other["seeded"] == 0 and other["recorded"] == recorded
    path.write_bytes(b"\x00garbage" * 5)
    assert _regex_start(cache_dir)["recorded"] == recorded


def test_the_program_of_a_pattern_is_what_re_gives_its_engine():
    import re

    program = program_of(r"(?P<word>\w+)\s*=\s*(\d+)", re.IGNORECASE)
    assert program is not None
    flags, code, groups, groupindex, indexgroup = program
    assert groupindex == {"word": 1} and indexgroup == (None, "word", None) and groups == 2
    assert all(type(op) is int for op in code)  # marshal takes plain ints only
    built = _sre.compile(r"(?P<word>\w+)\s*=\s*(\d+)", flags, code, groups, groupindex, indexgroup)
    assert built.match("Width = 12").groups() == ("Width", "12")
    assert built.match("WIDTH=3").group("word") == "WIDTH"  # IGNORECASE kept


def test_a_re_that_keys_its_cache_otherwise_is_left_alone(tmp_path):
    import re

    from lantide.ui.regex_programs import RegexPrograms

    compiled = re.compile("x")
    programs = RegexPrograms(tmp_path / "regex.marshal")
    programs.seed()
    odd = ("a key", "of another", "shape", 0)
    re._cache[odd] = compiled  # type: ignore[attr-defined]
    try:
        programs.record()
    finally:
        del re._cache[odd]  # type: ignore[attr-defined]
    assert programs.recorded == [] and programs.programs == {}


RTHOOK_PROBE = textwrap.dedent(
    """
    import json, runpy, sys
    # as in the frozen app: Lantide's run-time hook, then PyInstaller's PySide6 hook, which
    # imports QtCore before the app's main
    runpy.run_path(sys.argv[1])
    import PySide6.QtCore
    import lantide.ui
    code = lantide.ui.qt_support_code
    print(json.dumps({"hits": code.hits, "compiled": code.compiled, "message": "",
                      "loaded": [], "seeded": len(code.regex.seeded)}))
    """
)


def test_the_installed_builds_run_time_hook_opens_the_caches_before_qt_is_imported(tmp_path):
    hook = REPO / "packaging" / "rthook_qt_support.py"
    assert "rthook_qt_support.py" in (REPO / "packaging" / "lantide.spec").read_text()

    def start() -> dict:
        result = subprocess.run(
            [sys.executable, "-c", RTHOOK_PROBE, str(hook)],
            capture_output=True,
            text=True,
            env=cli_env({"LANTIDE_CACHE_DIR": str(tmp_path / "cache")}),
            cwd=str(REPO),
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    first = start()
    assert len(first["compiled"]) >= 10
    second = start()
    assert second["compiled"] == [] and len(second["hits"]) == len(first["compiled"])
    assert second["seeded"] >= 3


def test_a_nested_caller_compiles_to_the_same_cached_code(tmp_path):
    source = b"y = 2\n"
    nested = {}
    _compile_from(
        "def outer():\n"
        "    def run(source, filename):\n"
        "        return compile(source, filename, 'exec')\n"
        "    return run\n",
        nested,
    )
    flat = {}
    _compile_from(
        "def run(source, filename):\n    return compile(source, filename, 'exec')\n", flat
    )
    with cached_support_code(tmp_path) as cache:
        first = flat["run"](source, "shibokensupport/c.py")
        second = nested["outer"]()(source, "shibokensupport/c.py")
    assert second is first and cache.hits == ["shibokensupport/c.py"]
