"""The result grid's keys pressed for real (xdotool) on a real X server: Ctrl+Alt+F opens
the current column's filter, typing and Return filter the rows, the keyboard goes on in
the grid (Shift+Down, Ctrl+Shift+C copies the filtered rows as CSV), Ctrl+Space selects a
column and DuckDB sums it below the grid."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, cli_env
from tests.ui.test_real_window import _xdotool

pytestmark = pytest.mark.xvfb


def _wait_for(condition, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}")
        time.sleep(0.1)


def _state(folder) -> dict:
    try:
        return json.loads((folder / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def test_filter_copy_and_select_keys_on_x(xvfb, tmp_path):
    env = cli_env({"DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb"})
    app = subprocess.Popen(
        [sys.executable, "-m", "tests.ui.grid_keys_app", str(tmp_path)],
        env=env,
        cwd=str(REPO),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: (tmp_path / "ready").exists() or app.poll() is not None, "the tab")
        assert app.poll() is None, "the app exited before its grid was ready"
        window = _xdotool(xvfb, "search", "--name", "grid keys").split()[0]
        _xdotool(xvfb, "windowfocus", "--sync", window)
        _xdotool(xvfb, "key", "ctrl+alt+f")
        time.sleep(1.0)  # the popup shows and takes the keys
        _xdotool(xvfb, "type", "--delay", "30", "name 99")
        _xdotool(xvfb, "key", "Return")
        _wait_for(lambda: _state(tmp_path).get("rows") == 11, "the filtered rows")
        _xdotool(xvfb, "key", "shift+Down", "shift+Down")
        _xdotool(xvfb, "key", "ctrl+shift+c")
        _wait_for(lambda: _state(tmp_path).get("clipboard"), "the copy")
        _xdotool(xvfb, "key", "Left", "ctrl+space")
        # the whole column's summary: not the three cells' one before it, nor "Summing…"
        _wait_for(
            lambda: _state(tmp_path).get("selection", "").startswith("Count 11 "), "the summary"
        )
    finally:
        (tmp_path / "stop").write_text("1")
        try:
            _out, err = app.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            app.terminate()
            _out, err = app.communicate(timeout=10)
    assert "Ambiguous shortcut overload" not in err, err
    state = _state(tmp_path)
    assert state["filters"] == [{"column": "name", "op": "contains", "value": "name 99"}]
    assert state["rows"] == 11  # name 99, name 990 .. name 999
    assert state["clipboard"] == "name\nname 99\nname 990\nname 991\n"
    # ids of the 11 rows passing: 99 and 990..999
    total = 99 + sum(range(990, 1000))
    assert state["selection"] == (
        f"Count 11 · Sum {total:,} · Avg {total / 11:,.6f}".rstrip("0").rstrip(".")
        + " · Min 99 · Max 999"
    )
