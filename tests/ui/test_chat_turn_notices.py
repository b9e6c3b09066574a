"""Notices of the agent's own decisions in the transcript: an automatic continuation and
the analysis consent, each saying what it applies to."""

from __future__ import annotations

from lantide.agent.events import StateChanged, TurnContinued
from lantide.ui.chat.chat_messages import NoticeWidget
from lantide.ui.chat.chat_transcript import ChatTranscript


def test_continuation_and_consent_are_shown_with_their_scope(qtbot):
    transcript = ChatTranscript()
    qtbot.addWidget(transcript)
    transcript.handle_event(TurnContinued(1, 2, 12))
    transcript.handle_event(StateChanged("analysis_active", "q3-churn", True))
    notices = [w.text() for w in transcript.widgets(NoticeWidget)]
    assert notices[0].startswith("Reached the step limit; going on by itself (round 1 of 2")
    assert notices[1] == (
        "Statistical analysis is approved for project q3-churn (until its status changes)."
    )
