"""The SQL tab's reading keys pressed for real (xdotool on Xvfb): Ctrl+Shift+F formats,
Ctrl+E and Ctrl+Alt+E explain, F12 opens the table's browser, and none is ambiguous."""

from __future__ import annotations

import time

import pytest

from tests.ui.test_real_window import _start_gui, _wait_for, _windows, _xdotool

pytestmark = pytest.mark.xvfb

TYPED = "select region, count(*) n from customers group by region"
FORMATTED = "SELECT\n  region,\n  COUNT(*) AS n\nFROM customers\nGROUP BY\n  region"


def test_format_explain_and_go_to_definition_keys_on_x(sample_workspace, xvfb, tmp_path):
    app = _start_gui(sample_workspace, xvfb, tmp_path / "ready.json")
    target = sample_workspace / "projects/q3-churn/sql/keys_tab.sql"
    try:
        window = _xdotool(xvfb, "search", "--name", "— Lantide").split()[0]
        _xdotool(xvfb, "windowfocus", "--sync", window)
        _xdotool(xvfb, "key", "ctrl+t")
        _wait_for(lambda: "New SQL tab" in _windows(xvfb), "the name dialog")
        time.sleep(0.5)  # mapped is not yet focused: the typing would be lost
        _xdotool(xvfb, "type", "--delay", "20", "keys_tab")
        _xdotool(xvfb, "key", "Return")
        try:
            _wait_for(lambda: "keys_tab" in _windows(xvfb), "the new tab's window title")
        except BaseException:
            print(_windows(xvfb))
            raise
        time.sleep(0.5)  # the tab reads its (missing) file, then takes the typing
        _xdotool(xvfb, "type", "--delay", "10", TYPED)
        _xdotool(xvfb, "key", "ctrl+shift+f")
        time.sleep(1.0)  # the format runs in a worker; then the text is replaced
        _xdotool(xvfb, "key", "ctrl+s")
        _wait_for(target.is_file, "sql/keys_tab.sql")
        assert target.read_text(encoding="utf-8") == FORMATTED
        _xdotool(xvfb, "key", "ctrl+e")
        _xdotool(xvfb, "key", "ctrl+alt+e")
        time.sleep(1.0)
        # the cursor stayed on the first line: down to FROM customers, then F12
        _xdotool(xvfb, "key", "Down", "Down", "Down", "End", "F12")
        _wait_for(
            lambda: '"customers — Sample workspace — Lantide"' in _windows(xvfb),
            "the customers table browser",
        )
        assert app.poll() is None, "the app exited"
    finally:
        app.terminate()
        _out, err = app.communicate(timeout=10)
    assert "Ambiguous shortcut overload" not in err, err
    assert "Traceback" not in err, err
