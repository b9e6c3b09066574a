"""The heartbeat test: the UI thread keeps ticking while a multi-second DuckDB query and a
streamed chat answer run at the same time in the real main window. The target is a
longest stall under 50 ms (the figure is in benchmarks/README.md, `python -m benchmarks
ui`); this test checks a generous 250 ms so a busy CI machine does not make it flaky.

It measures a window the analyst has had open a moment: the chat panel built and the agent
loaded (the app loads it in a worker after start-up, tests/ui/test_chat_warm_up.py). Run
alone, the test used to build the chat panel and import the agent inside the measured
window (a one-time 300-450 ms), which earlier tests had done for it in a full run."""

from __future__ import annotations

import pytest

from tests.ui.conftest import open_main_window
from tests.ui.responsiveness import run_busy_window

BOUND_MS = 250


@pytest.mark.slow  # a 2.5 s stream and a 2.5 s query by design
def test_ui_thread_keeps_ticking_during_a_long_query_and_a_streamed_answer(
    qtbot, shell_services, fake_openai, monkeypatch
):
    for key, value in fake_openai.env().items():
        monkeypatch.setenv(key, value)
    window = open_main_window(qtbot, shell_services())
    qtbot.waitUntil(lambda: window.chat.agent_loaded, timeout=60_000)
    result = run_busy_window(window, fake_openai, stream_seconds=2.5, query_seconds=2.5)

    assert result["turn_finished"], "the streamed answer did not finish"
    assert getattr(result["query"].get("error"), "code", None) == "QUERY_CANCELLED"
    fake_openai.assert_done()
    assert window.services.running_queries() == []
    from lantide.ui.chat.chat_answer import AssistantMessageWidget

    answers = window.chat.transcript.widgets(AssistantMessageWidget)
    assert answers and "US-CA" in answers[-1].plain_text()

    report = result["report"]
    assert report.seconds >= 2.5
    assert report.ticks > report.seconds * 1000 / 5 / 4  # ticking, not starved
    assert report.longest_stall_ms < BOUND_MS, (
        f"longest event-loop stall {report.longest_stall_ms:.0f} ms "
        f"(p99 {report.percentile(99):.1f} ms over {report.ticks} ticks)"
    )
