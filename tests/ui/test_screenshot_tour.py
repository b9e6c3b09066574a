"""The screenshot tour on a real X server (Xvfb): the sample workspace's main states
(welcome, Plan with annotations, SQL tab with a result, Source Run report, a formatted SQL
tab, Explain Analyze's plan tree, chat after a
scripted turn with a tool card and a table, settings, knowledge; Approve Plan's question and
Withdraw approval, a long status message, an ask_user question and a reflection in the chat,
the quick chart's grouped bars, the HTML Report with its chart; the result grid's filter
popup and bar, the selection's summary, the header's Format menu) at 1024x700 and 1440x900,
light and dark, saved under test-output/tour/ for reviewers to look at.

What a screenshot can show cheaply is asserted: every visible button's and label's text
fits its widget, and the window kept the size it was given. The walk itself is
``tests/ui/screenshot_tour.py``, run as its own program on its own display."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env
from tests.ui.screenshot_tour import SIZES, STATES, THEMES

OUTPUT = REPO / "test-output" / "tour"

pytestmark = pytest.mark.xvfb


def test_screenshot_tour(sample_workspace, xvfb):
    shutil.rmtree(OUTPUT, ignore_errors=True)
    env = cli_env({"DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb"})
    walk = subprocess.run(
        [sys.executable, "-m", "tests.ui.screenshot_tour", str(sample_workspace), str(OUTPUT)],
        env=env,
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert walk.returncode == 0, walk.stderr[-4000:]
    shots = json.loads((OUTPUT / "tour.json").read_text(encoding="utf-8"))
    assert [(s["state"], s["theme"], tuple(s["size"])) for s in shots] == [
        (state, theme, size) for state in STATES for theme in THEMES for size in SIZES
    ]
    for shot in shots:
        picture = OUTPUT / shot["file"]
        assert picture.stat().st_size > 10_000, picture  # a real picture, not an empty frame
    resized = [(s["file"], s["window_size"]) for s in shots if s["window_size"] != s["size"]]
    assert resized == [], "the window resized itself"
    clipped = {s["file"]: s["clipped"] for s in shots if s["clipped"]}
    assert clipped == {}, json.dumps(clipped, indent=1)
