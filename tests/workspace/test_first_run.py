"""`lantide` with no arguments, the first time: creates the sample workspace in the user
data directory and opens the desktop app on it."""

import json
import os
import subprocess
import sys
import time

import pytest

from lantide.workspace.model import Workspace
from tests.conftest import REPO, cli_env

# `lantide ARGS` in this process's QApplication, which quits once the window reports the
# start-up over (sig_idle). The app then closes as when the analyst quits: its services
# wait for every piece of background work, so whatever the start-up would write (the
# recent-workspaces list) is on disk when the process has exited.
QUIT_WHEN_IDLE = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from lantide.cli.main import main

app = QApplication(sys.argv[:1])

def quit_when_idle():
    if any(getattr(w, "is_idle", lambda: False)() for w in app.topLevelWidgets()):
        app.quit()

timer = QTimer()
timer.timeout.connect(quit_when_idle)
timer.start(50)
sys.exit(main(sys.argv[1:]))
"""


def run_until_idle(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", QUIT_WHEN_IDLE, *args],
        env=cli_env({"QT_QPA_PLATFORM": "offscreen"}),
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_first_run_creates_and_opens_the_sample(isolated_user_dirs):
    env = cli_env({"QT_QPA_PLATFORM": "offscreen"})
    sample = isolated_user_dirs / "data" / "sample-workspace"
    lock = sample / ".lantide" / "lock"
    settings_file = isolated_user_dirs / "config" / "settings.json"
    with subprocess.Popen(
        [sys.executable, "-m", "lantide"],
        env=env,
        cwd=str(REPO),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as app:
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                # the app holds the lock, and has recorded the workspace (in the background)
                if (
                    lock.exists()
                    and lock.read_text().strip() == str(app.pid)
                    and settings_file.exists()
                ):
                    break
                assert app.poll() is None, app.stderr.read()
                time.sleep(0.2)
            else:
                raise AssertionError("the app did not open the sample workspace within 60 s")
            assert Workspace.is_workspace(sample)
            assert (sample / "projects" / "q3-churn" / "plan.md").exists()
            settings = json.loads(settings_file.read_text())
            assert settings["recent_workspaces"][0] == str(sample.resolve())
        finally:
            app.terminate()
            app.wait(timeout=15)
    assert os.path.exists(sample / "data" / "orders.parquet")


def test_start_up_records_the_workspace_before_the_app_has_closed(
    isolated_user_dirs, sample_workspace
):
    """The control of the next test: the same start-up and exit with a readable settings
    file does write the recent-workspaces list."""
    settings_file = isolated_user_dirs / "config" / "settings.json"
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text('{"recent_workspaces": []}\n')
    done = run_until_idle("gui", str(sample_workspace))
    assert done.returncode == 0, done.stderr
    recent = json.loads(settings_file.read_text())["recent_workspaces"]
    assert recent == [str(sample_workspace.resolve())]


def test_a_broken_settings_file_does_not_stop_the_app_and_is_kept(
    isolated_user_dirs, sample_workspace
):
    settings_file = isolated_user_dirs / "config" / "settings.json"
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    broken = '{"profiles": [ {"name": "work", hand-edited and broken\n'
    settings_file.write_text(broken)
    done = run_until_idle("gui", str(sample_workspace))
    assert done.returncode == 0, done.stderr  # it opened, started up, and closed normally
    assert settings_file.read_text() == broken  # kept as it was, not replaced by defaults
