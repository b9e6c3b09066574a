import os
import subprocess
import sys
import textwrap

import pytest

from lantide.workspace.lock import WorkspaceLockedError
from lantide.workspace.model import Workspace
from tests.conftest import REPO, cli_env

HOLDER = textwrap.dedent("""
    import sys, time
    from lantide.workspace.model import Workspace
    ws = Workspace.open(sys.argv[1])
    print("locked", flush=True)
    sys.stdin.readline()  # hold the lock until the parent says so
    ws.close()
""")


@pytest.fixture
def holder(empty_workspace):
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(empty_workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(),
        cwd=str(REPO),
    ) as proc:
        assert proc.stdout.readline().strip() == "locked"
        yield proc
        proc.stdin.close()
        proc.wait(timeout=10)


def test_second_process_gets_a_clear_message_with_the_pid(empty_workspace, holder):
    with pytest.raises(WorkspaceLockedError) as err:
        Workspace.open(empty_workspace)
    assert err.value.message.startswith("workspace is open in another Lantide process, pid ")
    assert err.value.pid == holder.pid


def test_cli_second_process_exits_1_without_traceback(empty_workspace, holder, run_cli):
    result = run_cli("project", empty_workspace, "list")
    assert result.returncode == 1
    assert f"workspace is open in another Lantide process, pid {holder.pid}" in result.stderr
    assert "Traceback" not in result.stderr


def test_lock_is_released_when_the_holder_dies(empty_workspace):
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(empty_workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(),
        cwd=str(REPO),
    ) as proc:
        assert proc.stdout.readline().strip() == "locked"
        proc.kill()  # no clean shutdown: the OS drops the lock
        proc.wait(timeout=10)
    ws = Workspace.open(empty_workspace)
    ws.close()


def test_same_process_can_reopen_after_close(empty_workspace):
    ws = Workspace.open(empty_workspace)
    ws.close()
    ws2 = Workspace.open(empty_workspace)
    assert (empty_workspace / ".lantide" / "lock").read_text().strip() == str(os.getpid())
    ws2.close()
