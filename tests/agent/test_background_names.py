"""A background task's failure names the task in the analyst's words (the chat shows it as
a notice), not by its internal id."""

from __future__ import annotations

from lantide.agent.background import BackgroundRunner
from lantide.errors import LantideError


def test_a_failed_background_task_is_named():
    runner = BackgroundRunner()

    def fails():
        raise LantideError("the model server refused the request", hint="Check Settings")

    def crashes():
        raise ValueError("bad reply")

    runner.submit("conversation-title", fails)
    runner.submit("knowledge-proposals", crashes)
    runner.wait(10)
    messages = sorted(e.message for e in runner.events)
    assert messages == [
        "Naming this conversation failed: the model server refused the request",
        "Proposing knowledge from this turn failed: ValueError: bad reply",
    ]
