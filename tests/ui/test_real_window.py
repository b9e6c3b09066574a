"""`lantide gui` on a real X server (Xvfb): the main window appears, becomes idle (the
database open, the explorer filled, the last session's tabs restored), and a screenshot of
it is saved under test-output/ for a reviewer to look at."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, cli_env

OUTPUT = REPO / "test-output"

pytestmark = pytest.mark.xvfb


def _windows(display: str) -> str:
    result = subprocess.run(
        ["xwininfo", "-root", "-tree"],
        capture_output=True,
        text=True,
        env={**os.environ, "DISPLAY": display},
        timeout=10,
    )
    return result.stdout


def _open_plan_next_time(workspace) -> None:
    """A session with the Plan open, as the last start left it (so the shot shows a Plan)."""
    session = {
        "focused_project": "q3-churn",
        "open_tabs": [{"kind": "plan", "project": "q3-churn", "name": "plan.md"}],
        "active_tab": {"kind": "plan", "project": "q3-churn", "name": "plan.md"},
    }
    (workspace / ".lantide" / "session.json").write_text(json.dumps(session), encoding="utf-8")


def test_gui_opens_a_main_window_on_x(sample_workspace, xvfb, tmp_path):
    _open_plan_next_time(sample_workspace)
    ready = tmp_path / "ready.json"
    env = cli_env({"DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb", "LANTIDE_READY_FILE": str(ready)})
    with subprocess.Popen(
        [sys.executable, "-m", "lantide", "gui", str(sample_workspace)],
        env=env,
        cwd=str(REPO),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as app:
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if ready.exists():
                    break
                if app.poll() is not None:
                    pytest.fail(f"lantide gui exited with {app.returncode}: {app.stderr.read()}")
                time.sleep(0.1)
            else:
                pytest.fail(f"the main window did not become idle within 60 s:\n{_windows(xvfb)}")
            stamps = json.loads(ready.read_text())
            assert stamps["pid"] == app.pid and stamps["shown_at"] <= stamps["idle_at"]
            windows = _windows(xvfb)
            assert "plan.md — q3-churn — Sample workspace — Lantide" in windows, windows
            time.sleep(1.5)  # let the restored Plan tab load and paint
            OUTPUT.mkdir(exist_ok=True)
            shot = OUTPUT / "main-window-xvfb.png"
            grab = subprocess.run(
                ["import", "-window", "root", str(shot)],
                env={**os.environ, "DISPLAY": xvfb},
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert grab.returncode == 0, grab.stderr
            assert shot.stat().st_size > 10_000  # a real picture, not an empty frame
            assert app.poll() is None, "the app exited while idle"
        finally:
            app.terminate()
            app.wait(timeout=10)
