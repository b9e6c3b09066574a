"""The knowledge panel on the sample project's real knowledge.md and a user knowledge
file: entries with their status, approve / reject / edit queued proposals, add, remove,
a file edited by hand (refused, not overwritten) and reloading on external changes."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QMessageBox

from lantide.ui.explorer.knowledge_panel import KnowledgePanel
from lantide.workspace import paths
from tests.ui.conftest import write_externally

FISCAL = "The fiscal year starts on 1 April."


def _panel(qtbot, services) -> KnowledgePanel:
    panel = KnowledgePanel(services)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.state is not None, timeout=10_000)
    return panel


def _texts(panel) -> list[tuple[str, str, str]]:
    out = []
    for f in panel.state["files"]:
        out += [(f["scope"], e["status"], e["text"]) for e in f["entries"]]
    return out


def _knowledge(root) -> str:
    return (root / "projects" / "q3-churn" / "knowledge.md").read_text(encoding="utf-8")


def test_lists_project_and_user_entries_with_status(qtbot, shell_services):
    paths.user_knowledge_path().parent.mkdir(parents=True, exist_ok=True)
    paths.user_knowledge_path().write_text(
        "# My knowledge\n## Rules\n- Weeks start on Monday.\n## Info\n"
        "- [queued] I report in EUR.\n",
        encoding="utf-8",
    )
    services = shell_services(query=False, watcher=False)
    panel = _panel(qtbot, services)
    texts = _texts(panel)
    assert ("project", "queued", FISCAL) in texts
    assert (
        "project",
        "enabled",
        "Revenue means net revenue: gross minus discounts and refunds.",
    ) in texts
    assert ("user", "enabled", "Weeks start on Monday.") in texts
    assert ("user", "queued", "I report in EUR.") in texts
    assert panel.summary.text().startswith("2 queued proposals")
    panel.filter_combo.setCurrentIndex(1)  # queued only
    assert panel.select_entry("project", FISCAL)
    assert not panel.select_entry(
        "project", "Exclude test accounts (customers.is_test_account) from every customer count."
    )
    assert panel.approve_button.isEnabled() and panel.reject_button.isEnabled()


def test_approve_reject_and_edit_change_the_file(
    qtbot, shell_services, sample_workspace, monkeypatch
):
    services = shell_services(query=False, watcher=False)
    panel = _panel(qtbot, services)
    assert panel.select_entry("project", FISCAL)
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=10_000):
        panel.approve_button.click()
    assert f"- {FISCAL}" in _knowledge(sample_workspace)
    assert "[queued]" not in _knowledge(sample_workspace)

    monkeypatch.setattr(
        QInputDialog,
        "getMultiLineText",
        lambda *a, **k: ("The fiscal year starts on 1 April (FY = Apr-Mar).", True),
    )
    assert panel.select_entry("project", FISCAL)
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=10_000):
        panel.edit_selected()
    assert "- The fiscal year starts on 1 April (FY = Apr-Mar)." in _knowledge(sample_workspace)

    # a new queued proposal is rejected: it leaves the file
    (sample_workspace / "projects" / "q3-churn" / "knowledge.md").write_text(
        _knowledge(sample_workspace).replace(
            "## Info\n", "## Info\n- [queued] Churn is monthly.\n"
        ),
        encoding="utf-8",
    )
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=10_000):
        panel.reload()
    assert panel.select_entry("project", "Churn is monthly.")
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=10_000):
        panel.reject_button.click()
    assert "Churn is monthly" not in _knowledge(sample_workspace)


def test_add_and_remove_entries(qtbot, shell_services, sample_workspace, monkeypatch):
    services = shell_services(query=False, watcher=False)
    panel = _panel(qtbot, services)
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: ("Project Info", True))
    monkeypatch.setattr(
        QInputDialog,
        "getMultiLineText",
        lambda *a, **k: ("orders.channel is empty for 2% of orders.", True),
    )
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=10_000):
        panel.add_entry()
    text = _knowledge(sample_workspace)
    info = text[text.index("## Info") :]
    assert "- orders.channel is empty for 2% of orders." in info
    assert panel.select_entry("project", "orders.channel is empty for 2% of orders.")
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=10_000):
        panel.remove_selected()
    assert "orders.channel is empty" not in _knowledge(sample_workspace)


def test_entry_changed_meanwhile_is_refused_not_overwritten(
    qtbot, shell_services, sample_workspace
):
    services = shell_services(query=False, watcher=False)
    panel = _panel(qtbot, services)
    assert panel.select_entry("project", FISCAL)
    path = sample_workspace / "projects" / "q3-churn" / "knowledge.md"
    edited = _knowledge(sample_workspace).replace(FISCAL, "The fiscal year starts in July.")
    path.write_text(edited, encoding="utf-8")
    messages = []
    services.sig_message_posted.connect(lambda text, level: messages.append((level, text)))
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=10_000):
        panel.approve_button.click()
    assert path.read_text(encoding="utf-8") == edited  # the hand edit stays
    assert any(level == "error" and "Approving" in text for level, text in messages)


def test_panel_follows_external_edits_and_the_focused_project(
    qtbot, shell_services, sample_workspace
):
    services = shell_services(query=False, watcher=True)
    panel = _panel(qtbot, services)
    path = sample_workspace / "projects" / "q3-churn" / "knowledge.md"
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=15_000):
        write_externally(path, _knowledge(sample_workspace) + "- Regions are ISO codes.\n")
    assert ("project", "enabled", "Regions are ISO codes.") in _texts(panel)
    services.workspace.create_project("Other")
    with qtbot.waitSignal(panel.sig_knowledge_loaded, timeout=10_000):
        services.focus_project("Other")
    assert panel.project_dir == "Other"
    assert not any(scope == "project" for scope, _s, _t in _texts(panel))
