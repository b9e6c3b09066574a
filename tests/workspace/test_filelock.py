"""The per-file lock (lantide.workspace.filelock): shared by processes, dropped when its
holder dies, kept out of the analyst's folders."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from lantide.workspace.filelock import FileLockTimeout, file_lock, lock_path_for
from tests.conftest import REPO, cli_env

_HOLDER = textwrap.dedent("""
    import sys, time
    from lantide.workspace.filelock import file_lock
    with file_lock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(60)
""")


def test_a_lock_held_by_another_process_waits_and_is_freed_when_it_is_killed(empty_workspace):
    target = empty_workspace / "projects" / "p" / "project.json"
    with subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(target)],
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(),
        cwd=str(REPO),
    ) as holder:
        try:
            assert holder.stdout.readline().strip() == "held"
            with pytest.raises(FileLockTimeout) as info, file_lock(target, timeout=0.3):
                pass
            assert str(target) in info.value.message and "nothing was written" in info.value.message
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=30)
            with file_lock(target, timeout=5):  # the OS dropped the dead holder's lock
                pass
        finally:
            if holder.poll() is None:
                holder.kill()


def test_the_lock_is_reentrant_in_one_thread(tmp_path):
    target = tmp_path / "knowledge.md"
    with file_lock(target), file_lock(target, timeout=0.2):  # no deadlock with itself
        pass


def test_lock_files_of_workspace_files_live_under_dot_lantide(empty_workspace, tmp_path):
    inside = lock_path_for(empty_workspace / "projects" / "p" / "knowledge.md")
    assert inside.parent == empty_workspace / ".lantide" / "locks"
    outside = lock_path_for(tmp_path / "config" / "settings.json")
    assert outside == tmp_path / "config" / ".settings.json.lock"
