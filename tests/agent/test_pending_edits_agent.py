"""The agent's edits wait for the analyst (issue 32 item 1), end to end through the loopback
OpenAI-compatible server and the real ``openai`` client: an edit of the Report is left
pending, one hunk accepted and one rejected, the file holds exactly the accepted hunk, and
the model's next turn is told."""

from __future__ import annotations

import json

from lantide.docs.edit_review import decide
from lantide.docs.pending_edits import list_edits
from lantide.workspace.atomic import atomic_write_text
from tests.agent.live import live_session, results_by_tool, run
from tests.agent.test_report_evidence import PASS
from tests.fakes.openai_server import ToolCall, Turn

BASE = (
    "# Report: Q3 churn\n\nThe churn question, as the Plan states it.\n\n## Customers\n\n"
    "Customers are counted once.\n\n## Revenue\n\nRevenue is gross.\n"
)
PROPOSAL = BASE.replace("as the Plan states it", "as the analyst framed it").replace(
    "Revenue is gross.", "Revenue is net of refunds."
)


def system_of(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")


def test_a_report_edit_waits_one_hunk_accepted_one_rejected_the_model_told(
    session_factory, fake_openai, open_ws
):
    project = open_ws.project("q3-churn")
    atomic_write_text(project.report_path, BASE)
    project.approve_plan()
    s = live_session(session_factory, fake_openai)
    fake_openai.script_background(Turn(text=PASS))  # the review before update_report
    fake_openai.script(
        Turn(tool_calls=[ToolCall("update_report", {"content": PROPOSAL})]),
        Turn(tool_calls=[ToolCall("read_report", {})]),
        Turn(text="I proposed two changes to the Report."),
    )
    events = run(s, "Reword the intro and say revenue is net")
    fake_openai.assert_done()

    results = results_by_tool(fake_openai.chat_requests[-1])
    (edit,) = results["update_report"]
    assert edit["pending_review"] is True and "analyst's review" in edit["review"]
    assert [h["index"] for h in edit["hunks"]] == [0, 1]
    # the file holds only accepted text, and reading it back says an edit is pending
    assert project.report_path.read_text(encoding="utf-8") == BASE
    (read,) = results["read_report"]
    assert read["text"] == BASE and read["pending_edits"][0]["edit_id"] == edit["edit_id"]
    assert "pending" in read["pending_note"]
    proposed = [e for e in events if e.name == "edit_proposed"]
    assert [(e.path, e.edit_id) for e in proposed] == [
        ("projects/q3-churn/report.md", edit["edit_id"])
    ]
    assert not [e for e in events if e.name == "document_changed"]
    (stored,), problems = list_edits(project)
    assert not problems and stored.conversation == s.conversation.id

    decide(project, edit["edit_id"], "accept", [0])
    decide(project, edit["edit_id"], "reject", [1])
    assert project.report_path.read_text(encoding="utf-8") == BASE.replace(
        "as the Plan states it", "as the analyst framed it"
    )

    fake_openai.script(Turn(text="Understood: revenue stays gross."))
    run(s, "I kept the intro only.")
    told = system_of(fake_openai.chat_requests[-1])
    assert f"edit {edit['edit_id']} (projects/q3-churn/report.md): rejected hunk 1" in told
    assert f"edit {edit['edit_id']} (projects/q3-churn/report.md): accepted hunk 0" in told
    assert "wait for the analyst's review" not in told  # nothing of it is pending any more

    fake_openai.script(Turn(text="Nothing new."))
    run(s, "Anything else?")
    assert "reviewed your edits" not in system_of(fake_openai.chat_requests[-1])  # told once


def test_the_model_is_told_only_its_own_edits_and_what_still_waits(
    session_factory, fake_openai, open_ws
):
    project = open_ws.project("q3-churn")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("update_plan", {"content": "# Plan\n\nA shorter plan.\n"})]),
        Turn(text="Proposed a shorter Plan."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Shorten the Plan")
    (edit,) = results_by_tool(fake_openai.chat_requests[-1])["update_plan"]
    fake_openai.script(Turn(text="Waiting for your review."))
    run(s, "Not yet")
    told = system_of(fake_openai.chat_requests[-1])
    assert f"Your edits {edit['edit_id']} wait for the analyst's review" in told
    # another conversation is not told about this one's edits
    other = live_session(session_factory, fake_openai)
    fake_openai.script(Turn(text="Hello."))
    run(other, "Hi")
    assert edit["edit_id"] not in system_of(fake_openai.chat_requests[-1])
    assert "A shorter plan" not in project.plan_path.read_text(encoding="utf-8")
    json.dumps(edit)
