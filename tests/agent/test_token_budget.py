"""The per-conversation token budget: warned at 80%, stopped at 100%, kept across reopening."""

from __future__ import annotations

from lantide.agent.budget import TokenBudget
from lantide.agent.conversation import Conversation
from lantide.workspace.settings import AgentSettings, Settings
from tests.agent.scripted_model import reply


def test_warns_once_at_80_percent_and_is_exhausted_at_the_budget(tmp_path):
    settings = Settings(agent=AgentSettings(token_budget=1_000))
    budget = TokenBudget(Conversation.create(tmp_path), settings)
    budget.charge(790)
    assert budget.warning() is None and not budget.exhausted()
    budget.charge(20)
    warning = budget.warning()
    assert (warning.used, warning.budget, warning.stopped) == (810, 1_000, False)
    budget.charge(100)
    assert budget.warning() is None  # once
    budget.charge(90)
    assert budget.exhausted() and budget.used == 1_000
    settings.agent.token_budget = 0  # no budget: never exhausted, never warned
    assert not budget.exhausted() and budget.warning() is None


def test_a_spent_budget_stops_the_next_turn_without_asking_the_model(session_factory, scripted):
    settings = Settings(agent=AgentSettings(token_budget=2_000))
    scripted.add(reply("There are four data files."))
    s = session_factory(settings=settings)
    events = list(s.run_turn("What data do we have?"))
    assert events[-1].reason == "answered"
    reached = [e for e in events if e.name == "token_budget_reached"]
    assert reached and reached[0].stopped and reached[0].budget == 2_000
    assert s.background.wait(5)
    first_turn = s.conversation.events(("turn_finished",))[-1]["tokens"]
    assert first_turn >= 2_000  # the whole request was charged: the prompt alone is larger

    events = list(s.run_turn("And the tables?"))  # nothing scripted: a model call would fail
    finished = events[-1]
    assert finished.reason == "token_budget" and finished.iterations == 0
    assert "2,000" in finished.message and "new conversation" in finished.message
    assert len(scripted.requests) == 1

    # reopened, the conversation still knows what it used
    again = session_factory(s.conversation.id, settings=settings)
    assert again.budget.used >= first_turn
    assert list(again.run_turn("Try again"))[-1].reason == "token_budget"
    scripted.assert_done()


def test_background_and_reflection_calls_are_charged(session_factory, scripted):
    scripted.add(reply("Four data files."))
    s = session_factory()
    list(s.run_turn("What data do we have? Revenue means net of refunds."))
    turn_tokens = s.conversation.events(("turn_finished",))[-1]["tokens"]
    assert s.background.wait(5)
    assert scripted.completions  # the title and the knowledge proposal ran
    assert s.budget.used > turn_tokens  # and were charged to this conversation


def test_a_hand_edited_budget_that_is_not_a_number_means_no_budget(tmp_path):
    from lantide.workspace.settings import load_settings

    path = tmp_path / "settings.json"
    path.write_text('{"agent": {"token_budget": "200k", "max_iterations": 5}}')
    settings = load_settings(path)
    assert settings.agent.token_budget == 0 and settings.agent.max_iterations == 5
    path.write_text('{"agent": {"token_budget": -5}}')
    assert load_settings(path).agent.token_budget == 0
    path.write_text('{"agent": {"token_budget": 150000}}')
    assert load_settings(path).agent.token_budget == 150_000
