"""`lantide` with no arguments, the first time: creates the sample workspace in the user
data directory and opens the desktop app on it."""

import json
import os
import subprocess
import sys
import time

from lantide.workspace.model import Workspace
from tests.conftest import REPO, cli_env


def test_first_run_creates_and_opens_the_sample(isolated_user_dirs):
    env = cli_env({"QT_QPA_PLATFORM": "offscreen"})
    app = subprocess.Popen([sys.executable, "-m", "lantide"], env=env, cwd=str(REPO),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sample = isolated_user_dirs / "data" / "sample-workspace"
    lock = sample / ".lantide" / "lock"
    settings_file = isolated_user_dirs / "config" / "settings.json"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # the app holds the lock, and has recorded the workspace (in the background)
            if lock.exists() and lock.read_text().strip() == str(app.pid) \
                    and settings_file.exists():
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


def test_a_broken_settings_file_does_not_stop_the_app_and_is_kept(isolated_user_dirs,
                                                                  sample_workspace):
    settings_file = isolated_user_dirs / "config" / "settings.json"
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    broken = '{"profiles": [ {"name": "work", hand-edited and broken\n'
    settings_file.write_text(broken)
    env = cli_env({"QT_QPA_PLATFORM": "offscreen"})
    app = subprocess.Popen([sys.executable, "-m", "lantide", "gui", str(sample_workspace)],
                           env=env, cwd=str(REPO), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    lock = sample_workspace / ".lantide" / "lock"
    try:
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text().strip() == str(app.pid)):
            assert app.poll() is None, app.stderr.read()
            assert time.monotonic() < deadline, "the app did not open the workspace"
            time.sleep(0.2)
        time.sleep(2)  # past the start-up, where the recent-workspaces list is saved
        assert app.poll() is None
    finally:
        app.terminate()
        app.wait(timeout=15)
    assert settings_file.read_text() == broken  # kept as it was, not replaced by defaults
