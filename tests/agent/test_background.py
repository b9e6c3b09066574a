"""Background calls at the end of a turn: what the title model is given."""

from __future__ import annotations


def test_the_title_model_reads_the_answer_without_its_ledger_lines():
    """[[QUERY_STEP]] lines are for the ledger; the conversation's title comes from what
    was asked and answered."""
    from lantide.agent.background import conversation_title

    asked = []

    def complete(system, user):
        asked.append(user)
        return "Customers without test accounts"

    answer = (
        "[[QUERY_STEP]] 99de36d49fff: customers, no tests — one count\n\n"
        "There are 1,968 customers once test accounts are excluded."
    )
    assert (
        conversation_title(complete, "How many customers?", answer)
        == "Customers without test accounts"
    )
    assert "QUERY_STEP" not in asked[0] and "99de36d49fff" not in asked[0]
    assert "There are 1,968 customers once test accounts are excluded." in asked[0]
