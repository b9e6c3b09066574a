"""`lantide gui` on a real X server (Xvfb): the main window appears, becomes idle (the
database open, the explorer filled, the last session's tabs restored), and a screenshot of
it is saved under test-output/ for a reviewer to look at; and keys pressed with xdotool in a
new SQL tab reach their one owner (offscreen key clicks do not go through X's focus)."""

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


def _xdotool(display: str, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "DISPLAY": display},
        timeout=30,
    )
    assert done.returncode == 0, f"xdotool {args}: {done.stderr}"
    return done.stdout


def _start_gui(workspace, display: str, ready) -> subprocess.Popen:
    env = cli_env({"DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "LANTIDE_READY_FILE": str(ready)})
    app = subprocess.Popen(
        [sys.executable, "-m", "lantide", "gui", str(workspace)],
        env=env,
        cwd=str(REPO),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        if app.poll() is not None:
            pytest.fail(f"lantide gui exited with {app.returncode}: {app.stderr.read()}")
        if time.monotonic() > deadline:
            app.terminate()
            pytest.fail(f"the main window did not become idle within 60 s:\n{_windows(display)}")
        time.sleep(0.1)
    return app


def _wait_for(condition, what: str, timeout: float = 15, seen=None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}" + (f"; saw:\n{seen()}" if seen else ""))
        time.sleep(0.1)


def test_keys_in_a_new_sql_tab_on_x(sample_workspace, xvfb, tmp_path):
    """Ctrl+T, a name, the query, Ctrl+S: the tab's file is written; Ctrl+F and Ctrl+H are
    not ambiguous. Real key presses (xdotool) on a real X server without a window manager,
    where no one hands the focus back to the window when the name dialog closes."""
    app = _start_gui(sample_workspace, xvfb, tmp_path / "ready.json")
    target = sample_workspace / "projects/q3-churn/sql/answer_tab.sql"
    try:
        window = _xdotool(xvfb, "search", "--name", "— Lantide").split()[0]
        _xdotool(xvfb, "windowfocus", "--sync", window)
        _xdotool(xvfb, "key", "ctrl+t")
        _wait_for(lambda: "New SQL tab" in _windows(xvfb), "the name dialog")
        # Listed is not yet mapped and focused: under load the first letters went nowhere.
        dialog = _xdotool(xvfb, "search", "--sync", "--onlyvisible", "--name", "New SQL tab")
        _xdotool(xvfb, "windowfocus", "--sync", dialog.split()[0])
        _xdotool(xvfb, "type", "--delay", "20", "answer_tab")
        _xdotool(xvfb, "key", "Return")
        _wait_for(
            lambda: '"answer_tab' in _windows(xvfb),
            "the new tab's window title",
            seen=lambda: _windows(xvfb),
        )
        time.sleep(0.5)  # the tab reads its (missing) file, then takes the typing
        _xdotool(xvfb, "type", "--delay", "20", "SELECT 42 AS answer")
        _xdotool(xvfb, "key", "ctrl+s")
        _wait_for(target.is_file, "sql/answer_tab.sql")
        assert target.read_text(encoding="utf-8").strip() == "SELECT 42 AS answer"
        _xdotool(xvfb, "key", "ctrl+f")
        _xdotool(xvfb, "key", "Escape")
        _xdotool(xvfb, "key", "ctrl+h")
        time.sleep(0.5)
        assert app.poll() is None, "the app exited"
    finally:
        app.terminate()
        _out, err = app.communicate(timeout=10)
    assert "Ambiguous shortcut overload" not in err, err
