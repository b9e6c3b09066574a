"""Codes follow words (issue 30 item 11): the activity panel and the query history say what
went wrong first, the stable code after; a check unknown to the app is read as words."""

from __future__ import annotations

from lantide.ui.chat.check_badges import check_words
from lantide.ui.integration.activity_panel import outcome_text
from lantide.ui.sql.query_history_view import status_text


def test_an_activity_error_says_its_message_before_its_code():
    entry = {
        "ok": False,
        "error": {"error": "QUERY_CANCELLED", "message": "the query was cancelled"},
    }
    assert outcome_text(entry) == "error: the query was cancelled (QUERY_CANCELLED)"
    assert outcome_text({"ok": False, "error": {"error": "X_FAILED"}}) == "error: X_FAILED"
    assert outcome_text({"ok": True}) == "ok"


def test_a_history_status_is_words_then_code_and_cut_to_fit():
    long = "Binder Error: Referenced column " + "very_long_name_" * 10 + " not found"
    text = status_text("error", {"error": "BIND_ERROR", "message": long})
    assert text.startswith("error: Binder Error: Referenced column ")
    assert text.endswith("… (BIND_ERROR)") and len(text) < 90
    assert status_text("error", {"error": "BIND_ERROR"}) == "error (BIND_ERROR)"


def test_check_codes_read_as_words():
    assert check_words("JOIN_FAN_OUT") == "Join repeats rows"
    assert check_words("SOME_NEW_CHECK") == "Some new check"


def test_a_reflections_unresolved_checks_are_named_in_words(qtbot):
    from lantide.ui.chat.reflection_card import ReflectionCardWidget

    card = ReflectionCardWidget(
        {
            "verdict": "problems",
            "unresolved_checks": [{"step_id": "9f2c41d07a11", "code": "JOIN_FAN_OUT"}],
        }
    )
    qtbot.addWidget(card)
    body = card.body_html()
    assert "step 9f2c41d07a11: Join repeats rows (JOIN_FAN_OUT)" in body
