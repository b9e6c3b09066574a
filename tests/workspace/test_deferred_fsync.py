"""Append-only logs whose fsync may wait a moment (``append_jsonl(..., defer_fsync=True)``):
the line is in the OS's hands before the call returns, its fsync comes from a group commit
shortly after, at ``sync_deferred()`` and at exit; the ledger keeps its fsync before return."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lantide.workspace import atomic
from lantide.workspace.atomic import append_jsonl, read_jsonl, sync_deferred
from lantide.workspace.log_reader import read_log

REPO = Path(__file__).resolve().parents[2]


class FsyncSpy:
    """Stands in for ``os.fsync``: records the inode of every fsynced file and, while
    ``gate`` is clear, holds every fsync (a slow disk)."""

    def __init__(self, real=os.fsync):
        self.real = real
        self.inodes: list[int] = []
        self.gate = threading.Event()
        self.gate.set()
        self.seen = threading.Condition()

    def __call__(self, fd: int) -> None:
        self.gate.wait(30)
        self.real(fd)
        with self.seen:
            self.inodes.append(os.fstat(fd).st_ino)
            self.seen.notify_all()

    def wait_for(self, inode: int, timeout: float) -> bool:
        with self.seen:
            return self.seen.wait_for(lambda: inode in self.inodes, timeout)


@pytest.fixture
def spy(monkeypatch):
    sync_deferred()  # lines an earlier test left waiting are not this test's
    spy = FsyncSpy()
    monkeypatch.setattr(atomic.os, "fsync", spy)
    yield spy
    spy.gate.set()
    sync_deferred()


def _read_in_another_process(path: Path) -> str:
    return subprocess.run(
        [sys.executable, "-c", "import sys; print(open(sys.argv[1]).read(), end='')", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_a_deferred_line_is_readable_by_another_process_before_its_fsync(tmp_path, spy):
    log = tmp_path / "activity" / "client.jsonl"
    spy.gate.clear()  # the disk is slow: every fsync waits
    with ThreadPoolExecutor(1) as pool:
        # returns although no fsync can finish (the old append waited for its fsync)
        pool.submit(append_jsonl, log, {"tool": "run_query"}, defer_fsync=True).result(5)
        assert _read_in_another_process(log) == '{"tool": "run_query"}\n'
        assert spy.inodes == []
        spy.gate.set()
        sync_deferred()
    assert spy.inodes == [log.stat().st_ino]


def test_a_ledger_line_is_still_fsynced_before_the_append_returns(tmp_path, spy):
    log = tmp_path / "ledger" / "c.jsonl"
    append_jsonl(log, {"step_id": "s1"})
    assert spy.inodes == [log.stat().st_ino]


def test_the_group_commit_fsyncs_a_deferred_line_within_its_delay(tmp_path, spy, monkeypatch):
    monkeypatch.setattr(atomic._deferred, "delay", 0.05)
    log = tmp_path / "a.jsonl"
    append_jsonl(log, {"n": 1}, defer_fsync=True)
    # nobody calls sync_deferred: the flusher thread does it on its own
    assert spy.wait_for(log.stat().st_ino, timeout=10)


def test_lines_waiting_together_share_one_fsync_per_file(tmp_path, spy, monkeypatch):
    monkeypatch.setattr(atomic._deferred, "delay", 3600)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for n in range(20):
        append_jsonl(first, {"n": n}, defer_fsync=True)
    append_jsonl(second, {"n": 0}, defer_fsync=True)
    sync_deferred()
    assert sorted(spy.inodes) == sorted([first.stat().st_ino, second.stat().st_ino])
    assert [r["n"] for r in read_jsonl(first)] == list(range(20))


def test_sync_deferred_returns_only_when_the_flushers_batch_is_on_disk(tmp_path, spy, monkeypatch):
    monkeypatch.setattr(atomic._deferred, "delay", 0.0)
    log = tmp_path / "a.jsonl"
    spy.gate.clear()
    append_jsonl(log, {"n": 1}, defer_fsync=True)  # the flusher takes it and waits on disk
    with ThreadPoolExecutor(1) as pool:
        closing = pool.submit(sync_deferred)
        with pytest.raises(TimeoutError):
            closing.result(0.3)  # still waiting for the flusher's fsync
        spy.gate.set()
        closing.result(10)
    assert spy.inodes == [log.stat().st_ino]


EXITING_WRITER = """
import os, sys
from lantide.workspace import atomic
real = os.fsync
def spy(fd):
    real(fd)
    print("fsync", os.fstat(fd).st_ino, flush=True)
os.fsync = spy
atomic._deferred.delay = 3600  # only the exit can fsync it
atomic.append_jsonl(sys.argv[1], {"last": "line"}, defer_fsync=True)
print("appended", flush=True)
"""


def run_writer(script: str, log) -> subprocess.CompletedProcess:
    """``script`` in a process of its own, with the log's path as its argument."""
    return subprocess.run(
        [sys.executable, "-c", script, str(log)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )


def test_a_process_that_exits_fsyncs_its_deferred_lines_first(tmp_path):
    log = tmp_path / "a.jsonl"
    out = run_writer(EXITING_WRITER, log)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["appended", f"fsync {log.stat().st_ino}"]
    assert read_jsonl(log) == [{"last": "line"}]


CONCURRENT_WRITER = """
import sys
from lantide.workspace.atomic import append_jsonl
name, count = sys.argv[2], int(sys.argv[3])
for n in range(count):
    append_jsonl(sys.argv[1], {"writer": name, "n": n, "pad": name * 3000}, defer_fsync=True)
"""


def test_two_processes_appending_at_once_keep_whole_lines(tmp_path):
    log = tmp_path / "activity.jsonl"
    count = 300
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT_WRITER, str(log), name, str(count)],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        for name in ("a", "b")
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    parsed = read_log(log)
    assert parsed.records and not parsed.problems
    for name in ("a", "b"):
        mine = [r for r in parsed.records if r["writer"] == name]
        assert [r["n"] for r in mine] == list(range(count))
        assert all(r["pad"] == name * 3000 for r in mine)


def test_a_deferred_line_after_a_torn_one_starts_a_line_of_its_own(tmp_path, spy):
    log = tmp_path / "a.jsonl"
    append_jsonl(log, {"n": 1}, defer_fsync=True)
    with open(log, "a") as fh:
        fh.write('{"n": 2, "cut')  # a crash of another writer mid-line
    append_jsonl(log, {"n": 3}, defer_fsync=True)
    assert read_jsonl(log) == [{"n": 1}, {"n": 3}]


def test_the_activity_line_is_written_before_its_fsync(tmp_path, spy):
    from lantide.workspace.activity import activity_path, read_activity, record_call

    spy.gate.clear()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(
            record_call,
            tmp_path,
            client_id="c",
            client_name="C",
            mode="execute",
            transport="http",
            tool="run_query",
            arguments={"sql": "SELECT 1"},
            ok=True,
        ).result(5)
        assert [e["tool"] for e in read_activity(tmp_path)] == ["run_query"]
        assert spy.inodes == []
        spy.gate.set()
        sync_deferred()
    assert spy.inodes == [activity_path(tmp_path, "c").stat().st_ino]


KILLED_WRITER = """
import os, signal, sys
from lantide.workspace.atomic import append_jsonl
append_jsonl(sys.argv[1], {"before": "the kill"}, defer_fsync=True)
os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no flusher: only what the OS holds
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_process_killed_right_after_a_deferred_append_loses_nothing(tmp_path):
    """The attack on the deferred fsync: the writer dies the instant the append returns,
    before any fsync; the line is whole in the file for the next reader."""
    log = tmp_path / "a.jsonl"
    append_jsonl(log, {"earlier": 1})
    out = run_writer(KILLED_WRITER, log)
    assert out.returncode == -9, out.stderr
    assert read_jsonl(log) == [{"earlier": 1}, {"before": "the kill"}]
    append_jsonl(log, {"after": 2})  # the log goes on whole
    assert read_jsonl(log)[-1] == {"after": 2}
