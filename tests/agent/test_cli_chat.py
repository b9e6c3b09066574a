"""End to end: ``lantide chat`` in a subprocess, the real ``openai`` client, the loopback
server, the sample workspace; files on disk and request bodies checked."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env
from tests.fakes.openai_server import FAKE_API_KEY, ToolCall, Turn

COUNT_BY_REGION = (
    "SELECT region, count(*) AS customers FROM customers "
    "WHERE NOT is_test_account GROUP BY region ORDER BY customers DESC"
)
SLOW_SQL = "SELECT sum(hash(a.range * b.range)) AS h FROM range(300000) a, range(300000) b"


def chat(run_cli, ws, server, message, *extra, expect_rc=0):
    proc = run_cli("chat", ws, "--json", *extra, message, env=server.env())
    assert proc.returncode == expect_rc, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def proposal_requests(server) -> list[dict]:
    """Background requests asking for knowledge proposals."""

    def system(body):
        return next(
            (m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "system"),
            "",
        )

    return [b for b in server.background_requests if "knowledge" in system(b).lower()]


def of(events, name):
    return [e for e in events if e["event"] == name]


def tool_messages(body):
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def conversation_messages(workspace: Path, conversation_id: str) -> list[dict]:
    """The messages of a conversation file as written by the CLI process."""
    from lantide.agent.conversation import Conversation

    return Conversation.open(
        workspace / ".lantide" / "conversations", conversation_id
    ).message_records()


def no_key_anywhere(server, *roots: Path):
    for request in server.requests:
        assert FAKE_API_KEY not in request.raw.decode("utf-8", "replace")
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and path.suffix != ".duckdb":
                assert FAKE_API_KEY not in path.read_text(errors="replace"), path


def test_question_answered_with_tables_schema_query_and_ledger(
    run_cli, sample_workspace, fake_openai, isolated_user_dirs
):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("show_tables", {})]),
        Turn(tool_calls=[ToolCall("read_schema", {"table": "customers"})]),
        Turn(
            tool_calls=[
                ToolCall(
                    "run_query", {"sql": COUNT_BY_REGION, "result_label": "customers_by_region"}
                )
            ]
        ),
        Turn(
            text="DE-BY has the most customers (exploratory).\n"
            "[[QUERY_STEP]] Customers per region — DE-BY leads, 59 without a region"
        ),
    )
    events = chat(run_cli, sample_workspace, fake_openai, "Where are our customers?")
    fake_openai.assert_done()
    assert [e["tool"] for e in of(events, "tool_returned") if e["ok"]] == [
        "show_tables",
        "read_schema",
        "run_query",
    ]
    step = of(events, "step_recorded")[0]["step"]
    finished = of(events, "turn_finished")[0]
    assert finished["reason"] == "answered"

    ledger = sample_workspace / ".lantide" / "ledger" / f"{finished['conversation_id']}.jsonl"
    (line,) = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert line["step_id"] == step["step_id"] and line["sql"] == COUNT_BY_REGION
    assert line["conversation_id"] == finished["conversation_id"]
    assert line["summary"] == "Customers per region — DE-BY leads, 59 without a region"
    assert line["row_count"] == 11 and line["tool"] == "run_query"
    assert line["cached_table_name"] == "customers_by_region" and line["materialized"] is True
    for field in (
        "at",
        "project",
        "purpose",
        "result_label",
        "columns",
        "materialize_reason",
        "warnings",
        "duration_ms",
    ):
        assert field in line

    listed = run_cli("ledger", sample_workspace, "--json")
    assert json.loads(listed.stdout)["steps"][0]["summary"] == line["summary"]
    # a plain question can teach nothing: no knowledge-proposal call (the title still runs)
    assert proposal_requests(fake_openai) == [] and fake_openai.background_requests

    first = fake_openai.chat_requests[0]
    system = first["messages"][0]["content"]
    for field in (
        "- Time: ",
        "- Workspace: Sample workspace",
        "- Project: Q3 churn (planning); Plan plan.md, Report report.md",
        "- Active tab: none",
        "- Open tabs: 0",
        "- Cached tables: ",
        "- External databases: none",
    ):
        assert field in system
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"read_plan", "resolve_annotations", "run_query"} <= offered
    assert "update_report" not in offered and "source_run_sql_tab" not in offered
    no_key_anywhere(fake_openai, sample_workspace, isolated_user_dirs)


def test_refused_ddl_is_corrected_on_the_next_iteration(run_cli, sample_workspace, fake_openai):
    def saw_refusal(body):
        (refusal,) = tool_messages(body)
        assert refusal["error"].startswith("QUERY_REFUSED") and refusal["hint"]

    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": "CREATE TABLE t AS SELECT 1"})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": "SELECT 1 AS one"})], expect=saw_refusal),
        Turn(text="Done.\n[[QUERY_STEP]] sanity check — one row with 1"),
    )
    events = chat(run_cli, sample_workspace, fake_openai, "Make a table")
    fake_openai.assert_done()
    assert [e["ok"] for e in of(events, "tool_returned")] == [False, True]
    assert of(events, "turn_finished")[0]["reason"] == "answered"


def test_plan_annotations_resolved_through_chat(run_cli, sample_workspace, fake_openai):
    items = [
        {
            "id": "3f9a1c",
            "mode": "A",
            "replacement": "how much Q2 revenue the churned customers brought",
        },
        {
            "id": "7be204",
            "mode": "B",
            "answer": "Every customer active in Q2, whatever their signup date.",
        },
        {
            "id": "c51d8e",
            "mode": "A",
            "replacement": "test accounts (is_test_account or named 'Test Account')",
        },
    ]
    fake_openai.script(
        Turn(tool_calls=[ToolCall("read_plan", {})]),
        Turn(tool_calls=[ToolCall("resolve_annotations", {"document": "plan", "items": items})]),
        Turn(text="All three annotations are resolved."),
    )
    events = chat(run_cli, sample_workspace, fake_openai, "Resolve the Plan's annotations")
    fake_openai.assert_done()
    plan_view = of(events, "tool_returned")[0]["result"]
    assert plan_view["open_annotation_count"] == 3
    project = sample_workspace / "projects" / "q3-churn"
    # headless, nobody reviews: the resolution waits for `lantide edits` (the files unchanged)
    before = (project / "plan.md").read_text()
    (proposed,) = of(events, "edit_proposed")
    assert proposed["path"] == "projects/q3-churn/plan.md" and not of(events, "document_changed")
    listed = run_cli("edits", sample_workspace, "q3-churn")
    assert listed.returncode == 0, listed.stderr
    assert proposed["edit_id"] in listed.stdout and "resolve_annotations" in listed.stdout
    assert (
        "-" in listed.stdout
        and "how much Q2 revenue the churned customers brought" in listed.stdout
    )
    assert '"open"' in (project / "plan.annotations.json").read_text()
    accepted = run_cli("edits", sample_workspace, "q3-churn", "accept", proposed["edit_id"])
    assert accepted.returncode == 0, accepted.stderr
    assert "closed" in accepted.stdout
    text = (project / "plan.md").read_text()
    assert text != before
    sidecar = json.loads((project / "plan.annotations.json").read_text())
    assert {a["id"]: a["status"] for a in sidecar["annotations"]} == {
        "3f9a1c": "resolved",
        "7be204": "resolved",
        "c51d8e": "resolved",
    }
    assert "how much Q2 revenue the churned customers brought" in text
    assert "how much revenue left with them" not in text
    assert "Churned: active in Q2 2025, not active in Q3 2025." in text  # mode B keeps it
    assert any(h.get("by") == "agent" for a in sidecar["annotations"] for h in a["history"])
    history = json.loads((project / "project.json").read_text())["history"]
    assert [(h["action"], h["by"], h["edit"]) for h in history[-1:]] == [
        ("accept_edit", "analyst", proposed["edit_id"])
    ]


def test_ask_user_pauses_and_the_answer_comes_in_the_next_turn(
    run_cli, sample_workspace, fake_openai
):
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall(
                    "ask_user",
                    {
                        "question": "Which denominator: all Q2 actives, or only earlier signups?",
                        "choices": ["All Q2 actives", "Earlier signups"],
                    },
                )
            ]
        )
    )
    events = chat(run_cli, sample_workspace, fake_openai, "Compute the churn rate")
    assert of(events, "question_asked")[0]["choices"] == ["All Q2 actives", "Earlier signups"]
    conversation = of(events, "turn_finished")[0]
    assert conversation["reason"] == "question"

    def sees_answer(body):
        assert "Which denominator" in body["messages"][0]["content"]
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert users == ["Compute the churn rate", "All Q2 actives"]

    fake_openai.script(Turn(text="Using all Q2 actives as the denominator.", expect=sees_answer))
    events = chat(
        run_cli,
        sample_workspace,
        fake_openai,
        "All Q2 actives",
        "--conversation",
        conversation["conversation_id"],
    )
    assert of(events, "turn_finished")[0]["reason"] == "answered"
    fake_openai.assert_done()


def test_long_turn_compacts_earlier_results(run_cli, sample_workspace, fake_openai):
    # 8,192: the default window; at 6,500 the fourth unread slice no longer fits even cut
    # to no rows (about 870 tokens left beside the prompt layers), and the turn ends saying so
    fake_openai.context_length = 8_192
    wide = (
        "SELECT order_id, customer_id, product_id, order_date, quantity, unit_price, "
        "status, channel FROM orders WHERE order_id % 5 = {} ORDER BY order_id LIMIT 200"
    )
    fake_openai.script(
        *[Turn(tool_calls=[ToolCall("run_query", {"sql": wide.format(i)})]) for i in range(4)]
    )

    def compacted(body):
        first = tool_messages(body)[0]
        assert first["compacted"] is True and first["sql_preview"] == wide.format(0)[:200]
        for key in (
            "step_id",
            "cached_table_name",
            "materialized",
            "materialize_reason",
            "warnings",
        ):
            assert key in first

    fake_openai.script(Turn(text="Seen four slices.", expect=compacted))
    events = chat(run_cli, sample_workspace, fake_openai, "Show me orders in slices")
    fake_openai.assert_done()
    assert of(events, "context_compacted")
    first_step = of(events, "step_recorded")[0]["step"]["step_id"]
    assert tool_messages(fake_openai.chat_requests[-1])[0]["step_id"] == first_step


def test_429_then_success(run_cli, sample_workspace, fake_openai):
    fake_openai.script(Turn.rate_limited(retry_after=0.2), Turn(text="Hello."))
    events = chat(run_cli, sample_workspace, fake_openai, "hi, revenue means net of refunds")
    (retry,) = of(events, "model_retrying")
    assert retry["reason"] == "HTTP 429" and retry["delay_seconds"] == 0.2
    assert of(events, "turn_finished")[0]["reason"] == "answered"
    fake_openai.assert_done()
    assert len(proposal_requests(fake_openai)) == 1  # an answered turn may teach something


def test_a_stream_cut_mid_answer_ends_the_turn_and_keeps_the_text(
    run_cli, sample_workspace, fake_openai
):
    fake_openai.script(
        Turn(text="Churn was highest in DE-BY and lowest in", chunk_size=8, break_after=4)
    )
    events = chat(run_cli, sample_workspace, fake_openai, "Where is churn highest?", expect_rc=1)
    (error,) = of(events, "error")
    assert error["code"] == "MODEL_STREAM_BROKEN" and "broke off" in error["message"]
    received = "".join(e["text"] for e in of(events, "text_delta"))
    finished = of(events, "turn_finished")[0]
    assert finished["reason"] == "error"
    kept = conversation_messages(sample_workspace, finished["conversation_id"])[-1]
    assert kept["message"]["content"] == received and kept["partial"] is True
    assert proposal_requests(fake_openai) == []  # no background call after a failed turn


@pytest.mark.slow  # the command line as a whole process (not through run_cli)
def test_cancel_during_a_running_query(sample_workspace, fake_openai):
    fake_openai.script(Turn(tool_calls=[ToolCall("run_query", {"sql": SLOW_SQL})]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "lantide", "chat", str(sample_workspace), "--json", "Heavy one"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(REPO),
        env=cli_env(fake_openai.env()),
    )
    lines = []
    try:
        for line in proc.stdout:
            lines.append(json.loads(line))
            if lines[-1]["event"] == "tool_called":
                # Kept as a bounded wait: the query runs in another process, whose engine
                # the test cannot see, and no event marks the statement's start. The
                # verdict does not rest on it: the turn's cancel scope is sticky (it
                # refuses a statement not yet started), so exit 130, CANCELLED and no
                # ledger hold whether the signal lands before or during the statement;
                # the wait makes it likely the interrupt meets it inside DuckDB.
                time.sleep(0.5)
                sent = time.monotonic()
                proc.send_signal(signal.SIGINT)
                break
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - sent < 10, "the query was not interrupted"
    lines += [json.loads(x) for x in rest.splitlines()]
    assert proc.returncode == 130, err
    finished = [e for e in lines if e["event"] == "turn_finished"][0]
    assert finished["reason"] == "cancelled"
    tool = [
        r
        for r in conversation_messages(sample_workspace, finished["conversation_id"])
        if r["message"]["role"] == "tool"
    ]
    assert json.loads(tool[0]["message"]["content"])["error"] == "CANCELLED"
    assert not (
        sample_workspace / ".lantide" / "ledger" / f"{finished['conversation_id']}.jsonl"
    ).exists()


def test_chat_without_a_model_explains_how_to_configure_one(run_cli, sample_workspace):
    proc = run_cli("chat", sample_workspace, "hello")
    assert proc.returncode == 1
    assert "no model is configured" in proc.stderr and "OPENAI_BASE_URL" in proc.stderr
    assert not list((sample_workspace / ".lantide" / "conversations").glob("*.jsonl"))


def test_prompt_prints_every_layer_with_token_counts(run_cli, sample_workspace):
    proc = run_cli("prompt", sample_workspace, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [layer["name"] for layer in out["layers"]] == [
        "core",
        "state",
        "knowledge",
        "tools",
        "recent_steps",
        "state_notes",
        "summary",
        "history",
        "active_tab",
    ]
    assert out["state"] == "planning" and all(layer["tokens"] >= 0 for layer in out["layers"])
    assert out["total_tokens"] == sum(layer["tokens"] for layer in out["layers"])
    text = run_cli("prompt", sample_workspace)
    assert "===== core (" in text.stdout and "tokens) =====" in text.stdout


def test_a_final_number_is_reviewed_and_the_ledger_lists_the_review(run_cli, sample_workspace):
    """`lantide chat` in an executing project: the review request goes out without tools,
    its verdict is printed and kept in the ledger file beside the step."""
    from lantide.agent.reflection import CHECKLIST
    from lantide.workspace.model import Workspace
    from tests.fakes.openai_server import FakeOpenAIServer

    verdict = json.dumps(
        {
            "ok": False,
            "checklist": {
                i: {
                    "ok": i != "denominator",
                    "note": "test accounts counted" if i == "denominator" else "holds",
                }
                for i in CHECKLIST
            },
            "problems": ["test accounts are counted"],
        }
    )

    def background(body):
        system = body["messages"][0]["content"]
        return verdict if "skeptical reviewer" in system else '{"proposals": []}'

    ws = Workspace.open(sample_workspace)
    ws.project("q3-churn").approve_plan()
    ws.close()
    sql = "SELECT count(*) AS n FROM customers"
    with FakeOpenAIServer(background_reply=background) as server:
        server.script(
            Turn(tool_calls=[ToolCall("run_query", {"sql": sql, "purpose": "customers"})]),
            Turn(text="There are 2,000 customers."),
            Turn(tool_calls=[ToolCall("ask_user", {"question": "Exclude test accounts?"})]),
        )
        proc = run_cli("chat", sample_workspace, "How many customers?", env=server.env())
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert "reflection r1 (final_answer) found problems: test accounts are counted" in proc.stderr
    (ledger,) = (sample_workspace / ".lantide" / "ledger").glob("*.jsonl")
    lines = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert [x["tool"] for x in lines] == ["run_query", "reflection"]
    assert lines[1]["ok"] is False and lines[1]["problems"] == ["test accounts are counted"]
    listed = json.loads(run_cli("ledger", sample_workspace, "--json").stdout)
    assert len(listed["steps"]) == 1  # the review is not a query step


def test_the_human_printer_shows_each_event_kind(capsys):
    """`lantide chat` without --json: the answer on stdout, what the agent did on stderr."""
    from lantide.agent import events as ev
    from lantide.cli.agent_commands import _HumanPrinter

    printer = _HumanPrinter()
    for event in (
        ev.TurnStarted("c1", 1, "planning", "q3-churn"),
        ev.TextDelta("Looking"),
        ev.ToolCalled("t1", "run_query", {"sql": "SELECT 1"}),
        ev.ToolReturned(
            "t1", "run_query", False, {"error": "BAD_SQL", "message": "no such table"}, 12
        ),
        ev.StepRecorded({"step_id": "s1", "row_count": 3}),
        ev.StepSummarized("s1", "three rows", "parsed"),
        ev.DocumentChanged("projects/q3-churn/plan.md", "q3-churn"),
        ev.EditProposed("projects/q3-churn/report.md", "q3-churn", "e1a2b3c4d"),
        ev.StateChanged(ev.FOCUSED_PROJECT, "q3-churn", "q3-churn"),
        ev.QuestionAsked("Which region?", ["north", "south"]),
        ev.ErrorOccurred("X", "it broke", "try again"),
        ev.TurnFinished("answered", "c1", 2),
    ):
        printer(event)
    out, err = capsys.readouterr()
    assert out == "Looking\n\n? Which region? [north / south]\n"
    assert err.splitlines() == [
        '→ run_query({"sql": "SELECT 1"})',
        "← run_query BAD_SQL: no such table (12 ms)",
        "  step s1 recorded: 3 rows",
        '  document changed: {"path": "projects/q3-churn/plan.md", "project": "q3-churn"}',
        "  edit e1a2b3c4d of projects/q3-churn/report.md waits for your review: "
        "lantide edits WORKSPACE q3-churn",
        '  state changed: {"what": "focused_project", "project": "q3-churn", "value": "q3-churn"}',
        "lantide: error: it broke",
        "  try again",
        "[answered; conversation c1]",
    ]
