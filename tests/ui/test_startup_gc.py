"""No automatic garbage collection while the desktop app starts (lantide.ui.startup): from
``before_qt`` until the first window is idle, then the start-up's objects are frozen and
collection runs again; the loads of gc_pauses.loading_long_lived keep their own pause
whichever ends first, and the switch leaves the collector alone."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap

import pytest
from PySide6.QtWidgets import QApplication

from lantide.ui.startup import gc_pauses
from tests.conftest import REPO, cli_env


@pytest.fixture
def collector_restored():
    enabled = gc.isenabled()
    yield
    gc_pauses.end_quiet_start_up()
    if gc_pauses.active() is not None:
        gc_pauses.active().uninstall()
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_the_start_up_pause_and_a_load_end_in_either_order(collector_restored):
    gc.enable()
    gc_pauses.quiet_start_up()
    assert not gc.isenabled() and gc_pauses.start_up_is_quiet()
    gc_pauses.quiet_start_up()  # once per process: a second call adds no second reason
    pauses = gc_pauses.GcPauses(slow_ms=10_000).install()
    with gc_pauses.loading_long_lived("library"):
        gc_pauses.end_quiet_start_up()  # the window went idle while a worker loads
        assert not gc.isenabled()
    assert gc.isenabled()

    gc_pauses.quiet_start_up()  # (a fresh process's start-up, for the other order)
    with gc_pauses.loading_long_lived("another library"):
        pass
    assert not gc.isenabled()  # the start-up's pause holds after the load ended
    gc_pauses.end_quiet_start_up()
    gc_pauses.end_quiet_start_up()  # a second end does nothing
    assert gc.isenabled()
    pauses.uninstall()


def test_ending_a_start_up_that_was_not_quiet_changes_nothing(collector_restored):
    gc.disable()  # e.g. a host that turned collection off itself
    gc_pauses.end_quiet_start_up()
    assert not gc.isenabled()
    gc.enable()
    gc_pauses.end_quiet_start_up()
    assert gc.isenabled()


def test_the_app_collects_again_once_the_window_is_idle(
    qtbot, sample_workspace, collector_restored
):
    from lantide.ui.app import AppController
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings

    gc.enable()
    gc_pauses.quiet_start_up()  # as before_qt does for run_app
    controller = AppController(QApplication.instance(), load_settings())
    controller.show_workspace(Workspace.open(sample_workspace, lock=True))
    at_idle = {}
    controller.window.sig_idle.connect(
        lambda: at_idle.update(enabled=gc.isenabled(), quiet=gc_pauses.start_up_is_quiet())
    )
    try:
        assert not gc.isenabled()
        qtbot.waitUntil(controller.window.is_idle, timeout=30_000)
        qtbot.waitUntil(lambda: "enabled" in at_idle, timeout=5_000)
        # (this slot runs after the app's own: collection is back from idle on)
        assert at_idle == {"enabled": True, "quiet": False}
        assert gc.get_freeze_count() > 0  # what the start-up made, frozen first
    finally:
        controller.close()
        controller.window.close()  # not left on screen over a later test's widgets
        controller.window.deleteLater()


_PROBE = textwrap.dedent(
    """
    import gc, json, sys
    sys.path.insert(0, sys.argv[1])
    from lantide.ui import startup
    before = gc.isenabled()
    startup.before_qt()
    during = gc.isenabled()
    startup.start_up_done()
    print(json.dumps([before, during, gc.isenabled()]))
    """
)


@pytest.mark.parametrize(("switch", "expected"), [("", [True, False, True]), ("1", [True] * 3)])
def test_before_qt_pauses_the_collector_unless_the_measures_are_off(switch, expected):
    env = {"QT_QPA_PLATFORM": "offscreen"}
    if switch:
        env["LANTIDE_NO_STARTUP_MEASURES"] = switch
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(REPO)],
        capture_output=True,
        text=True,
        env=cli_env(env),
        cwd=str(REPO),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == expected
