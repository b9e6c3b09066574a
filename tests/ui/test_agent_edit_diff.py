"""The agent's edit to an open Plan is shown as a diff with Keep / Undo (real agent loop,
scripted OpenAI-compatible server, real main window, real Markdown files)."""

from __future__ import annotations

from lantide.ui.documents.agent_edit_diff import counts, line_diff
from tests.fakes.fixtures import background_answer
from tests.fakes.openai_server import FakeOpenAIServer, ToolCall, Turn
from tests.ui.conftest import open_document_tab
from tests.ui.test_agent_sees_unsaved import _ask_and_wait, _window_with_model

ADDED = "\n## Added by the agent\n\nA segment check by plan tier.\n"


def test_line_diff():
    diff = line_diff("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nC\nd\ne\nf\ng\nh\nnew\n", context=1)
    assert ("-", "c") in diff and ("+", "C") in diff and ("+", "new") in diff
    assert ("…", "") in diff  # the unchanged middle is left out
    assert counts(diff) == (2, 1)
    assert line_diff("same\n", "same\n") == []


def _agent_appends(qtbot, window, server, plan_path) -> str:
    new_text = plan_path.read_text(encoding="utf-8") + ADDED
    server.script(
        Turn(tool_calls=[ToolCall("update_plan", {"content": new_text})]),
        Turn(text="I added a segment check."),
    )
    _ask_and_wait(qtbot, window, "Add a segment check to the plan.")
    return new_text


def test_the_agents_edit_shows_as_a_diff_and_undo_restores_the_text(
    qtbot, shell_services, monkeypatch, sample_workspace
):
    plan_path = sample_workspace / "projects" / "q3-churn" / "plan.md"
    before = plan_path.read_text(encoding="utf-8")
    with FakeOpenAIServer(background_reply=background_answer) as server:
        window = _window_with_model(qtbot, shell_services, monkeypatch, server)
        tab = open_document_tab(qtbot, window, "plan")
        bar = tab.agent_edits.bar
        assert not bar.isVisible()
        _agent_appends(qtbot, window, server, plan_path)
        qtbot.waitUntil(bar.isVisible, timeout=15_000)
        assert "## Added by the agent" in tab.editor.toPlainText()
        assert "The agent changed plan.md" in bar.title.text()
        plus, minus = counts(line_diff(before, plan_path.read_text(encoding="utf-8")))
        assert plus >= 2 and f"{plus} lines added, {minus} removed" in bar.title.text()
        assert "A segment check by plan tier." in bar.view.toPlainText()
        with qtbot.waitSignal(tab.sig_snapshot_applied, timeout=15_000):
            bar.undo_button.click()
        assert not bar.isVisible()
        qtbot.waitUntil(lambda: not tab.is_dirty(), timeout=10_000)
        assert plan_path.read_text(encoding="utf-8") == before
        assert "## Added by the agent" not in tab.editor.toPlainText()
        tab.editor.undo()  # the agent's text is still in the editor's history
        assert "## Added by the agent" in tab.editor.toPlainText()
        window.shutdown()


def test_keep_leaves_the_agents_text(qtbot, shell_services, monkeypatch, sample_workspace):
    plan_path = sample_workspace / "projects" / "q3-churn" / "plan.md"
    with FakeOpenAIServer(background_reply=background_answer) as server:
        window = _window_with_model(qtbot, shell_services, monkeypatch, server)
        tab = open_document_tab(qtbot, window, "plan")
        new_text = _agent_appends(qtbot, window, server, plan_path)
        qtbot.waitUntil(tab.agent_edits.bar.isVisible, timeout=15_000)
        tab.agent_edits.bar.keep_button.click()
        assert not tab.agent_edits.bar.isVisible()
        assert plan_path.read_text(encoding="utf-8") == new_text and not tab.is_dirty()
        window.shutdown()
