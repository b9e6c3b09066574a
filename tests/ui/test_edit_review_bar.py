"""The agent's pending edit of an open Plan, reviewed hunk by hunk in the tab (real agent
loop, scripted OpenAI-compatible server, real main window, real Markdown files): the tab
says pending, the chat's card says pending and then what was decided, the keys accept and
reject the hunk shown, and the file holds exactly the accepted hunk."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from lantide.docs.edit_submit import submit_resolution, submit_update
from lantide.docs.pending_edits import describe, load_edit
from lantide.ui.documents.edit_review_bar import EditReviewBar, review_state
from lantide.workspace.model import Project
from tests.fakes.fixtures import background_answer
from tests.fakes.openai_server import FakeOpenAIServer, ToolCall, Turn
from tests.ui.conftest import open_document_tab
from tests.ui.test_agent_sees_unsaved import _ask_and_wait, _window_with_model

SEGMENTS = "## Segments\n\nCompare churn by plan tier.\n\n"


def _two_hunk_plan(text: str) -> str:
    return text.replace("## Definitions", SEGMENTS + "## Definitions", 1) + "\nA closing line.\n"


def test_the_agents_edit_waits_and_the_keys_accept_and_reject_its_hunks(
    qtbot, shell_services, monkeypatch, sample_workspace
):
    plan_path = sample_workspace / "projects" / "q3-churn" / "plan.md"
    before = plan_path.read_text(encoding="utf-8")
    assert "## Definitions" in before
    with FakeOpenAIServer(background_reply=background_answer) as server:
        window = _window_with_model(qtbot, shell_services, monkeypatch, server)
        tab = open_document_tab(qtbot, window, "plan")
        bar = tab.edit_review.bar
        assert not bar.isVisible() and tab.title() == "plan.md"
        server.script(
            Turn(tool_calls=[ToolCall("update_plan", {"content": _two_hunk_plan(before)})]),
            Turn(text="I proposed a Segments section and a closing line."),
        )
        _ask_and_wait(qtbot, window, "Add a segments section to the plan.")
        qtbot.waitUntil(bar.isVisible, timeout=15_000)
        assert plan_path.read_text(encoding="utf-8") == before  # nothing written yet
        assert tab.title() == "plan.md (pending)"
        assert "pending your review" in bar.title.text()
        assert "hunk 0 (1 of 2 pending)" in bar.title.text()
        assert "Compare churn by plan tier." in bar.view.toPlainText()
        (card,) = [c for c in window.chat.transcript.cards.values() if c.tool == "update_plan"]
        assert card.status_label.text().startswith("pending review · 2 hunks")

        # Alt+N shows the next hunk and puts the focus in the bar; Alt+P goes back
        QTest.keyClick(tab.editor, Qt.Key.Key_N, Qt.KeyboardModifier.AltModifier)
        assert "hunk 1 (2 of 2 pending)" in bar.title.text()
        assert "A closing line." in bar.view.toPlainText()
        QTest.keyClick(bar.view, Qt.Key.Key_P, Qt.KeyboardModifier.AltModifier)
        assert "hunk 0 (1 of 2 pending)" in bar.title.text()
        # Ctrl+Return accepts the hunk shown (the Segments section)
        with qtbot.waitSignal(tab.sig_snapshot_applied, timeout=15_000):
            QTest.keyClick(bar.view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: "hunk 1 (1 of 1 pending)" in bar.title.text(), timeout=10_000)
        assert plan_path.read_text(encoding="utf-8") == before.replace(
            "## Definitions", SEGMENTS + "## Definitions", 1
        )
        assert "## Segments" in tab.editor.toPlainText() and not tab.is_dirty()
        assert card.status_label.text() == "edit pending review · some hunks decided"
        # the focus stayed in the bar: Ctrl+Backspace rejects the other, the edit is closed
        assert bar.isAncestorOf(QApplication.focusWidget())
        QTest.keyClick(bar.view, Qt.Key.Key_Backspace, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: not bar.isVisible(), timeout=10_000)
        assert tab.title() == "plan.md"
        assert "A closing line." not in plan_path.read_text(encoding="utf-8")
        assert card.status_label.text() == "edit partly accepted"
        history = Project.load(sample_workspace, "q3-churn").history
        assert [(h["action"], h["hunks"], h["by"]) for h in history[-2:]] == [
            ("accept_edit", [0], "analyst"),
            ("reject_edit", [1], "analyst"),
        ]
        window.shutdown()


def test_accepting_is_refused_while_the_tab_has_unsaved_edits(
    qtbot, shell_services, sample_workspace
):
    from tests.ui.conftest import open_main_window

    project = Project.load(sample_workspace, "q3-churn")
    before = project.plan_path.read_text(encoding="utf-8")
    edit_id = submit_update(project, "plan", _two_hunk_plan(before), conversation=None)["edit_id"]
    window = open_main_window(qtbot, shell_services(), restore=False)
    tab = open_document_tab(qtbot, window, "plan")
    bar = tab.edit_review.bar
    qtbot.waitUntil(bar.isVisible, timeout=15_000)  # an edit made before the tab opened
    tab.editor.insertPlainText("typing ")
    messages = []
    window.services.sig_message_posted.connect(lambda *a: messages.append(a))
    bar.accept_all_button.click()
    assert any("unsaved edits" in str(m) for m in messages)
    assert project.plan_path.read_text(encoding="utf-8") == before
    assert load_edit(project, edit_id).hunk_indices("pending") == [0, 1]
    window.shutdown()


def test_the_bar_moves_between_hunks_and_a_resolution_is_decided_whole(qtbot, sample_workspace):
    project = Project.load(sample_workspace, "q3-churn")
    before = project.plan_path.read_text(encoding="utf-8")
    update = submit_update(project, "plan", _two_hunk_plan(before), conversation=None)
    bar = EditReviewBar()
    qtbot.addWidget(bar)
    decided = []
    bar.sig_decided.connect(lambda *a: decided.append(a))
    bar.set_edits([describe(load_edit(project, update["edit_id"]))])
    assert bar.accept_button.isEnabled() and bar.shown_hunk()["index"] == 0
    bar.show_next()
    bar.show_next()  # wraps around
    assert bar.shown_hunk()["index"] == 0
    bar.show_previous()
    bar.reject_button.click()
    assert decided == [(update["edit_id"], "reject", [1])]

    resolution = submit_resolution(
        project, "plan", [{"id": "7be204", "mode": "B", "answer": "kept"}], conversation=None
    )
    bar.set_edits([describe(load_edit(project, resolution["edit_id"]))])
    assert "decided whole" in bar.title.text()
    assert not bar.accept_button.isEnabled() and not bar.reject_button.isEnabled()
    bar.accept_all_button.click()
    assert decided[-1] == (resolution["edit_id"], "accept", None)


def test_what_the_chat_card_says_after_a_decision():
    edit = {"hunks": [{"index": 0, "status": "accepted"}, {"index": 1, "status": "pending"}]}
    assert review_state(edit, "reject", [1], True) == "partly accepted"
    assert review_state(edit, "accept", [1], True) == "accepted"
    assert review_state({"hunks": [{"index": 0, "status": "pending"}]}, "reject", [0], True) == (
        "rejected"
    )
    assert review_state(edit, "accept", [1], False) == "pending"


def test_the_html_report_tab_reviews_the_agents_chunk_patch(main_window, qtbot, sample_workspace):
    from lantide.agent.report_html import preview_patch_chunk
    from lantide.docs.pending_edits import propose
    from tests.ui.test_html_report_tab import _publish_from_report_tab

    html_tab = _publish_from_report_tab(qtbot, main_window, sample_workspace)
    project = Project.load(sample_workspace, "q3-churn")
    new = "<h2>Customers</h2>\n<p>The base is <em>steady</em>.</p>\n"
    _path, base, proposal, _result = preview_patch_chunk(project, "s-customers", new)
    edit = propose(project, "html", base, proposal, tool="patch_html_chunk")
    main_window.services.sig_edit_proposed.emit(str(html_tab.path), edit.id)
    bar = html_tab.edit_review.bar
    qtbot.waitUntil(bar.isVisible, timeout=15_000)
    assert html_tab.title() == "report.html (pending)" and "report.html" in bar.title.text()
    assert "steady" not in html_tab.path.read_text(encoding="utf-8")
    bar.accept_all_button.click()
    qtbot.waitUntil(lambda: not bar.isVisible(), timeout=15_000)
    qtbot.waitUntil(lambda: "steady" in html_tab.preview.toPlainText(), timeout=15_000)
    assert "steady" in html_tab.path.read_text(encoding="utf-8")
    assert html_tab.title() == "report.html"


def test_the_settings_dialog_sets_the_workspaces_agent_edits(qtbot, shell_services):
    from lantide.docs.pending_edits import edit_mode
    from lantide.ui.settings.settings_dialog import SettingsDialog

    services = shell_services(query=False, watcher=False)
    root = services.workspace.root
    dialog = SettingsDialog(services)
    qtbot.addWidget(dialog)
    check = dialog.apply_edits_check
    assert not check.isChecked() and edit_mode(root) == "review"
    check.setChecked(True)  # applied at once, as the workspace's connections are
    qtbot.waitUntil(lambda: edit_mode(root) == "apply", timeout=10_000)
    check.setChecked(False)
    qtbot.waitUntil(lambda: edit_mode(root) == "review", timeout=10_000)
    again = SettingsDialog(services)
    qtbot.addWidget(again)
    assert not again.apply_edits_check.isChecked()


def test_a_reopened_conversation_shows_what_became_of_its_edit(
    qtbot, shell_services, monkeypatch, sample_workspace
):
    from lantide.docs.edit_review import decide
    from lantide.ui.chat.tool_card import ToolCardWidget
    from tests.ui.test_chat import make_panel, send_and_wait

    with FakeOpenAIServer(background_reply=background_answer) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        services = shell_services()
        panel = make_panel(qtbot, services)
        project = Project.load(sample_workspace, "q3-churn")
        text = _two_hunk_plan(project.plan_path.read_text(encoding="utf-8"))
        server.script(
            Turn(tool_calls=[ToolCall("update_plan", {"content": text})]),
            Turn(text="Proposed."),
        )
        send_and_wait(qtbot, panel, "Add a segments section.")
        (card,) = panel.transcript.widgets(ToolCardWidget)
        edit_id = card.result["edit_id"]
        decide(project, edit_id, "reject")  # e.g. with `lantide edits`, the app closed
        again = make_panel(qtbot, services)  # the next start reopens the newest conversation
        qtbot.waitUntil(lambda: again.bridge.session is not None, timeout=10_000)
        assert again.bridge.conversation_id == panel.bridge.conversation_id

        def status() -> str:
            cards = again.transcript.widgets(ToolCardWidget)
            return cards[0].status_label.text() if cards else ""

        qtbot.waitUntil(lambda: status() == "edit rejected", timeout=10_000)


def test_the_diff_follows_a_theme_switch(qtbot, sample_workspace):
    from PySide6.QtWidgets import QApplication

    from lantide.ui.theme import colors, install_theme

    project = Project.load(sample_workspace, "q3-churn")
    before = project.plan_path.read_text(encoding="utf-8")
    update = submit_update(project, "plan", _two_hunk_plan(before), conversation=None)
    app = QApplication.instance()
    install_theme(app, "light")
    bar = EditReviewBar()
    qtbot.addWidget(bar)
    bar.set_edits([describe(load_edit(project, update["edit_id"]))])
    light = colors().success.name()
    assert light in bar.view.toHtml()
    install_theme(app, "dark")
    try:
        dark = colors().success.name()
        assert dark != light
        qtbot.waitUntil(lambda: dark in bar.view.toHtml(), timeout=5000)
    finally:
        install_theme(app, "light")
