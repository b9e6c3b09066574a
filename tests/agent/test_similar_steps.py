"""find_similar_steps: BM25 (tantivy) over every query step of the workspace's ledgers,
kept incrementally, offered to the agent only once other conversations hold steps, and
counted in the Context Summary. Real ledger files, a real index on disk."""

from __future__ import annotations

import json

import pytest

from lantide.agent.ledger import Ledger
from lantide.agent.step_index import StepIndex
from tests.agent.scripted_model import reply


def _step(ledger: Ledger, purpose: str, summary: str, sql: str, **extra) -> dict:
    # ids of the form ledgers written before 2026-12-04 hold (s1, s2 ...): still read, and
    # known here so the tests can name them
    return ledger.append(
        {
            "step_id": f"s{len(ledger.steps()) + 1}",
            "tool": "run_query",
            "purpose": purpose,
            "sql": sql,
            "summary": summary,
            "summary_status": "parsed",
            "row_count": 3,
            "evidence": "formal",
            **extra,
        }
    )


@pytest.fixture
def ledgers(tmp_path):
    lantide_dir = tmp_path / ".lantide"
    ledger_dir = lantide_dir / "ledger"
    ledger_dir.mkdir(parents=True)
    a, b = Ledger(ledger_dir, "c-old"), Ledger(ledger_dir, "c-other")
    _step(
        a,
        "Q3 churned customers per region",
        "north lost 41 customers, south 12",
        "SELECT region, count(*) FROM customers WHERE status = 'churned' GROUP BY 1",
    )
    _step(
        a,
        "monthly revenue",
        "revenue grew 4% a month",
        "SELECT date_trunc('month', ordered_at) AS m, sum(amount) FROM orders GROUP BY 1",
    )
    _step(
        b,
        "active customers",
        "1,412 active customers after test accounts excluded",
        "SELECT count(*) FROM customers WHERE NOT is_test_account",
    )
    return lantide_dir, ledger_dir


def test_the_best_match_comes_first_and_names_its_step(ledgers):
    index = StepIndex(*ledgers)
    hits = index.search("churn by region", 5)
    assert hits[0]["conversation_id"] == "c-old" and hits[0]["step_id"] == "s1"
    assert index.search("revenue per month", 1)[0]["step_id"] == "s2"
    assert index.count() == 3 and index.count(excluding="c-old") == 1


def test_only_changed_conversations_are_indexed_again(ledgers):
    lantide_dir, ledger_dir = ledgers
    index = StepIndex(lantide_dir, ledger_dir)
    assert index.catch_up() == 2
    assert index.catch_up() == 0  # nothing changed
    _step(
        Ledger(ledger_dir, "c-other"),
        "refund rate",
        "refunds were 2.1% of orders",
        "SELECT avg(refunded::int) FROM orders",
    )
    assert index.catch_up() == 1  # only c-other
    best = index.search("refund rate", 1)[0]
    assert (best["conversation_id"], best["step_id"]) == ("c-other", "s2")
    (ledger_dir / "c-old.jsonl").unlink()  # a conversation deleted: its steps go too
    assert index.catch_up() == 1 and index.count() == 2
    assert all(h["conversation_id"] == "c-other" for h in index.search("churn region", 5))


def test_a_corrected_summary_ranks_below_the_steps_that_say_it_now(ledgers):
    lantide_dir, ledger_dir = ledgers
    a = Ledger(ledger_dir, "c-old")
    wrong = _step(
        a,
        "top segment",
        "enterprise customers spend the most per order",
        "SELECT segment, avg(amount) FROM orders GROUP BY 1",
    )
    a.update(
        wrong["step_id"],
        {"summary": "small business customers order most often", "summary_status": "patched"},
        by="agent",
    )
    right = _step(
        Ledger(ledger_dir, "c-other"),
        "segment spend",
        "enterprise customers spend the most per order",
        "SELECT segment, sum(amount) FROM orders GROUP BY 1",
    )
    hits = StepIndex(lantide_dir, ledger_dir).search("enterprise customers spend most", 5)
    order = [(h["conversation_id"], h["step_id"]) for h in hits]
    assert order.index(("c-other", right["step_id"])) < order.index(("c-old", wrong["step_id"]))


@pytest.mark.parametrize(
    "query", ['"unbalanced', "region:north AND (", "title:[1 TO", "*", "churn\\", "客户 流失"]
)
def test_the_models_text_is_words_not_query_syntax(ledgers, query):
    assert isinstance(StepIndex(*ledgers).search(query, 5), list)


def test_an_unreadable_index_is_rebuilt_from_the_ledgers(ledgers):
    lantide_dir, ledger_dir = ledgers
    StepIndex(lantide_dir, ledger_dir).catch_up()
    for path in (lantide_dir / "index" / "steps").iterdir():
        path.write_bytes(b"\x00garbage\xff" * 10)
    (lantide_dir / "index" / "steps.json").write_text("{not json")
    assert StepIndex(lantide_dir, ledger_dir).search("churn region", 1)[0]["step_id"] == "s1"
    assert json.loads((ledger_dir / "c-old.jsonl").read_text().splitlines()[0])["step_id"] == "s1"


def test_a_second_writer_leaves_the_index_searchable(ledgers):
    lantide_dir, ledger_dir = ledgers
    first = StepIndex(lantide_dir, ledger_dir)
    first.catch_up()
    _step(Ledger(ledger_dir, "c-other"), "refund rate", "refunds were 2.1%", "SELECT 1")
    holder = StepIndex(lantide_dir, ledger_dir)._open().writer()  # as another process would
    try:
        other = StepIndex(lantide_dir, ledger_dir)
        assert other.catch_up() == -1  # the writer is busy: nothing indexed, no error
        assert other.search("churn region", 1)[0]["step_id"] == "s1"
    finally:
        holder.rollback()
        del holder
    assert StepIndex(lantide_dir, ledger_dir).catch_up() == 1


def test_no_index_is_made_in_a_workspace_without_steps(tmp_path):
    index = StepIndex(tmp_path / ".lantide", tmp_path / ".lantide" / "ledger")
    assert index.count() == 0 and not (tmp_path / ".lantide" / "index").exists()


def test_the_agent_is_offered_the_tool_once_other_conversations_hold_steps(
    session_factory, scripted, open_ws
):
    past = Ledger(open_ws.ledger_dir, "c-earlier")
    _step(
        past,
        "Q3 churned customers per region",
        "north lost 41 customers, south 12",
        "SELECT region, count(*) AS churned FROM customers GROUP BY region",
    )

    def offered_with_count(messages, tools):
        assert "find_similar_steps" in tools
        summary = "\n".join(m.get("content") or "" for m in messages)
        assert "Past query steps in other conversations: 1 (find_similar_steps)" in summary

    def sees_the_step(messages, tools):
        found = json.loads([m for m in messages if m["role"] == "tool"][-1]["content"])
        step = found["steps"][0]
        assert (step["conversation_id"], step["step_id"]) == ("c-earlier", "s1")
        assert step["tables"] == ["customers"] and "GROUP BY region" in step["sql"]
        assert step["summary"].startswith("north lost 41")

    scripted.add(
        reply("", ("find_similar_steps", {"query": "churn per region"})), expect=offered_with_count
    )
    scripted.add(reply("An earlier step counted churn per region."), expect=sees_the_step)
    session = session_factory()
    list(session.run_turn("How did we count churn by region before?"))
    scripted.assert_done()


def test_a_fresh_workspace_sends_no_schema_for_it(session_factory, scripted):
    def not_offered(messages, tools):
        assert "find_similar_steps" not in tools
        assert "Past query steps" not in "\n".join(m.get("content") or "" for m in messages)

    scripted.add(reply("Hello."), expect=not_offered)
    session = session_factory()
    list(session.run_turn("Hi"))
    scripted.assert_done()
