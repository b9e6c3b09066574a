import json
import os

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lantide.workspace import atomic
from lantide.workspace.atomic import (
    append_jsonl,
    atomic_write_json,
    atomic_write_text,
    own_writes,
    read_jsonl,
    read_jsonl_tail,
)


def test_write_replaces_content_and_leaves_no_temp_files(tmp_path):
    target = tmp_path / "plan.md"
    target.write_text("old\n")
    atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.md"]


def test_write_interrupted_by_an_exception_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "plan.md"
    target.write_text("the analyst's words\n")

    def failing_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_text(target, "half a new file")
    assert target.read_text() == "the analyst's words\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.md"]


def test_write_interrupted_by_keyboard_interrupt_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "data.json"
    atomic_write_json(target, {"a": 1})
    real_replace = os.replace

    def interrupted_replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_json(target, {"a": 2})
    monkeypatch.setattr(atomic.os, "replace", real_replace)
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]


def test_write_keeps_file_permissions(tmp_path):
    target = tmp_path / "x.md"
    target.write_text("a")
    os.chmod(target, 0o600)
    atomic_write_text(target, "b")
    assert target.stat().st_mode & 0o777 == 0o600


def test_own_writes_are_recognised_until_someone_else_writes(tmp_path):
    target = tmp_path / "x.md"
    atomic_write_text(target, "mine")
    assert own_writes.is_own(target)
    target.write_text("theirs, longer")
    assert not own_writes.is_own(target)


def test_jsonl_append_and_torn_last_line_is_skipped(tmp_path):
    log = tmp_path / "ledger.jsonl"
    append_jsonl(log, {"step": 1})
    append_jsonl(log, {"step": 2, "text": "ünïcode"})
    with open(log, "a") as fh:
        fh.write('{"step": 3, "trunc')  # a crash mid-line
    assert read_jsonl(log) == [{"step": 1}, {"step": 2, "text": "ünïcode"}]
    # the next record starts a line of its own: not glued to the torn one and lost with it
    append_jsonl(log, {"step": 4})
    assert read_jsonl(log) == [{"step": 1}, {"step": 2, "text": "ünïcode"}, {"step": 4}]
    assert log.read_text(encoding="utf-8").endswith('"trunc\n{"step": 4}\n')


@settings(max_examples=100, deadline=None)
@example(records=[{"a": "x"}, {"b": "y"}, {"c": "z"}], lines=2, block=5, torn=True)
@given(
    records=st.lists(
        st.dictionaries(st.text(max_size=5), st.text(max_size=40), max_size=3), max_size=40
    ),
    lines=st.integers(min_value=0, max_value=45),
    block=st.integers(min_value=1, max_value=64),
    torn=st.booleans(),
)
def test_the_tail_of_a_log_is_its_last_records(tmp_path_factory, records, lines, block, torn):
    log = tmp_path_factory.mktemp("tail") / "history.jsonl"
    for record in records:
        append_jsonl(log, record)
    if torn:
        with open(log, "a") as fh:
            fh.write('{"cut": "ü')  # a crash mid-line: skipped, not counted
    expected = read_jsonl(log)[-lines:] if lines else []
    assert read_jsonl_tail(log, lines, block=block) == expected


def test_a_killed_writers_temporary_file_is_removed_by_the_next_save(tmp_path):
    """A writer killed between writing its temporary file and the rename leaves it behind;
    the next save of that file removes it, and never one of a writer still alive."""
    import subprocess
    import sys

    from lantide.workspace.atomic import TEMP_SUFFIX, atomic_write_text

    target = tmp_path / "plan.md"
    target.write_text("old\n")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    stale = tmp_path / f".plan.md.{dead}.abc123{TEMP_SUFFIX}"
    stale.write_text("half a save")
    alive = tmp_path / f".plan.md.{os.getppid()}.def456{TEMP_SUFFIX}"  # our parent lives
    alive.write_text("being written")
    other = tmp_path / f".report.md.{dead}.abc123{TEMP_SUFFIX}"  # another file's: not now
    other.write_text("x")

    atomic_write_text(target, "new\n")

    assert target.read_text() == "new\n"
    assert not stale.exists() and alive.exists() and other.exists()
