"""The evidence strip of Plan and Report tabs: Approve Plan, "changed since approval",
Check evidence with its problems, and the Report preview's citation links opening the
step in the ledger panel. Real files, a real ledger, the real main window (offscreen)."""

from __future__ import annotations

import json

from PySide6.QtCore import QTimer, QUrl
from PySide6.QtWidgets import QApplication, QMessageBox

from lantide.agent.ledger import Ledger
from tests.ui.conftest import open_document_tab, write_externally


def test_approve_plan_in_the_plan_tab_and_changed_since_approval(
    main_window, qtbot, sample_workspace
):
    tab = open_document_tab(qtbot, main_window, "plan")
    bar = tab.evidence
    qtbot.waitUntil(lambda: "Plan not approved" in bar.label.text(), timeout=10_000)
    assert bar.button.text() == "Approve Plan" and bar.button.isEnabled()
    answer_next_question("Approve anyway")  # the sample Plan has open annotations
    bar.button.click()
    project_json = sample_workspace / "projects/q3-churn/project.json"
    qtbot.waitUntil(
        lambda: json.loads(project_json.read_text())["status"] == "executing", timeout=10_000
    )
    qtbot.waitUntil(lambda: "Plan approved" in bar.label.text(), timeout=10_000)
    assert not bar.button.isEnabled()
    history = json.loads(project_json.read_text())["history"]
    assert history[-1]["action"] == "approve_plan" and history[-1]["by"] == "analyst"

    plan = sample_workspace / "projects/q3-churn/plan.md"
    write_externally(plan, plan.read_text() + "\n- Split by region too.\n")
    qtbot.waitUntil(lambda: "changed since approval" in bar.label.text(), timeout=15_000)
    assert bar.button.isEnabled() and bar.button.text() == "Approve Plan again"


def answer_next_question(button: str, asked: list[str] | None = None) -> None:
    """Click ``button`` ("Cancel" for the standard one) in the next question box."""

    tries = [100]  # 5 s

    def click() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            tries[0] -= 1
            if tries[0] > 0:
                QTimer.singleShot(50, click)  # not shown yet
            return
        if asked is not None:
            asked.append(box.text())
        if button == "Cancel":
            box.button(QMessageBox.StandardButton.Cancel).click()
            return
        (target,) = [b for b in box.buttons() if b.text() == button]
        target.click()

    QTimer.singleShot(0, click)


def _project(root) -> dict:
    return json.loads((root / "projects/q3-churn/project.json").read_text())


def test_approve_plan_asks_while_annotations_are_open(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window, "plan")
    bar = tab.evidence
    qtbot.waitUntil(lambda: "Plan not approved" in bar.label.text(), timeout=10_000)
    assert tab.open_count() == 3
    asked: list[str] = []
    answer_next_question("Cancel", asked)
    bar.button.click()
    assert asked == ["Approve the Plan of q3-churn? 3 annotations are still open on the Plan."]
    # an approval would run on the worker pool: once it is idle, any write has happened
    assert main_window.services.workers.wait(10_000)
    assert _project(sample_workspace)["status"] == "planning"
    assert "plan_approval" not in _project(sample_workspace)
    answer_next_question("Approve anyway")
    bar.button.click()
    qtbot.waitUntil(lambda: _project(sample_workspace)["status"] == "executing", timeout=10_000)


def test_approve_plan_with_unsaved_edits_saves_then_approves(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window, "plan")
    bar = tab.evidence
    qtbot.waitUntil(lambda: "Plan not approved" in bar.label.text(), timeout=10_000)
    tab.editor.moveCursor(tab.editor.textCursor().MoveOperation.End)
    tab.editor.insertPlainText("\n- Split by region too.\n")
    assert tab.is_dirty()
    asked: list[str] = []
    answer_next_question("Save and approve", asked)
    bar.button.click()
    assert "unsaved edits" in asked[0]
    qtbot.waitUntil(lambda: "Plan approved" in bar.label.text(), timeout=10_000)
    plan = (sample_workspace / "projects/q3-churn/plan.md").read_text()
    assert "Split by region too." in plan and not tab.is_dirty()
    assert _project(sample_workspace)["status"] == "executing"


def test_withdraw_approval_in_the_plan_tab(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window, "plan")
    bar = tab.evidence
    qtbot.waitUntil(lambda: "Plan not approved" in bar.label.text(), timeout=10_000)
    assert bar.withdraw_button.isHidden()
    answer_next_question("Approve anyway")
    bar.button.click()
    qtbot.waitUntil(lambda: "Plan approved" in bar.label.text(), timeout=10_000)
    assert not bar.withdraw_button.isHidden() and not bar.button.isEnabled()
    asked: list[str] = []
    answer_next_question("Withdraw approval", asked)
    bar.withdraw_button.click()
    assert "goes back to plan_review" in asked[0]
    qtbot.waitUntil(lambda: "Plan not approved" in bar.label.text(), timeout=10_000)
    data = _project(sample_workspace)
    assert data["status"] == "plan_review" and "plan_approval" not in data
    assert data["history"][-1]["action"] == "withdraw_approval"
    assert bar.withdraw_button.isHidden() and bar.button.isEnabled()


def _steps(root):
    ledger = Ledger(root / ".lantide/ledger", "20261201-100000-abcd")
    formal = ledger.append(
        {
            "step_id": "aa11bb22cc33",
            "tool": "run_query",
            "project": "q3-churn",
            "purpose": "real customers",
            "sql": "SELECT 1",
            "row_count": 1,
            "evidence": "formal",
            "result_values": [1988],
        }
    )
    explored = ledger.append(
        {
            "step_id": "dd44ee55ff66",
            "tool": "run_query",
            "project": "q3-churn",
            "sql": "SELECT 2",
            "row_count": 1,
            "evidence": "exploratory",
            "result_values": [0.052],
        }
    )
    return formal, explored


def test_check_evidence_lists_problems_and_citations_open_their_step(
    main_window, qtbot, sample_workspace
):
    formal, explored = _steps(sample_workspace)
    report = sample_workspace / "projects/q3-churn/report.md"
    report.write_text(
        "# Report\n\nWe count 1,988 customers [^s:aa11bb22cc33].\n\n"
        "Refunds were 5.2% [^s:dd44ee55ff66], and 12 uncited.\n\n"
        "Revenue 3.4M [^s:000000000000].\n"
    )
    tab = open_document_tab(qtbot, main_window, "report")
    bar = tab.evidence
    qtbot.waitUntil(lambda: "aa11bb22 · formal" in tab.preview.toHtml(), timeout=10_000)
    assert "dd44ee55 · exploratory" in tab.preview.toHtml()
    assert "00000000 · missing" in tab.preview.toHtml()

    bar.button.click()
    qtbot.waitUntil(lambda: bar.problems.count() == 3, timeout=15_000)
    assert "4 numbers" in bar.label.text() and "1 matching" in bar.label.text()
    lines = [bar.problems.item(i).text() for i in range(3)]
    assert lines[0].startswith("line 5: 5.2% — exploratory")
    assert lines[1].startswith("line 5: 12 — uncited")
    assert lines[2].startswith("line 7: 3.4M — missing")
    bar.problems.itemClicked.emit(bar.problems.item(2))
    assert tab.editor.textCursor().blockNumber() == 6

    with qtbot.waitSignal(main_window.services.sig_step_selected, timeout=5_000) as shown:
        tab.preview.anchorClicked.emit(QUrl("lantide-step:aa11bb22cc33"))
    assert shown.args == ["20261201-100000-abcd", "aa11bb22cc33"]
    qtbot.waitUntil(
        lambda: (main_window.ledger.current_step() or {}).get("step_id") == "aa11bb22cc33",
        timeout=10_000,
    )
    ledger = main_window.ledger
    column = ledger.step_tree.headerItem().text(8)
    assert column == "Evidence"
    assert ledger.step_tree.currentItem().text(8) == "formal"
    assert "Evidence:</b> formal" in ledger._step_html(ledger.current_step())
    kinds = [ledger.step_tree.topLevelItem(i).text(8) for i in range(2)]
    assert kinds == ["formal", "exploratory"]


def test_the_report_review_check_reads_as_such_in_the_chat(qtbot):
    from lantide.ui.chat.reflection_card import ReflectionCardWidget

    card = ReflectionCardWidget(
        {
            "subject": "report_review",
            "ok": False,
            "checklist": [{"item": "evidence", "ok": False, "note": "2 matching, 1 uncited"}],
            "problems": ["line 3: 4.3% uncited: no step citation follows this number"],
        }
    )
    qtbot.addWidget(card)
    assert "before the Report goes to review" in card.title_label.text()
    assert card.items()[0][0].startswith("Every number cited")


def _citation_tooltips(preview) -> dict[str, str]:
    """href -> tooltip of the preview's citation links, as Qt laid them out."""
    out = {}
    block = preview.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.anchorHref().startswith("lantide-step:"):
                out[fmt.anchorHref()] = fmt.toolTip()
            it += 1
        block = block.next()
    return out


def test_the_preview_marks_a_check_failed_citation_and_its_chart_and_shows_the_cell_on_hover(
    main_window, qtbot, sample_workspace
):
    ledger = Ledger(sample_workspace / ".lantide/ledger", "20261201-100000-abcd")
    common = {"tool": "run_query", "project": "q3-churn", "purpose": "p", "sql": "SELECT 1"}
    ledger.append(
        {
            **common,
            "step_id": "fa11ed000001",
            "row_count": 3,
            "evidence": "formal",
            "checks": [{"code": "JOIN_FAN_OUT", "severity": "error", "message": "repeats rows"}],
            "result_cells": {"columns": ["segment", "customers"], "rows": [[None, 70098]]},
        }
    )
    ledger.append(
        {
            **common,
            "step_id": "c1ea4000002a",
            "row_count": 1,
            "evidence": "formal",
            "result_cells": {"columns": ["customers"], "rows": [[2000]]},
        }
    )
    from lantide import charts
    from lantide.workspace.model import Workspace

    bars = {
        "mark": "bar",
        "data": {"step": "fa11ed000001"},
        "encoding": {"x": {"field": "segment", "type": "nominal"}},
    }
    ws = Workspace.open(sample_workspace, lock=False)
    charts.write_chart(ws.project("q3-churn"), "segments", bars)
    ws.close()
    (sample_workspace / "projects/q3-churn/report.md").write_text(
        "# Report\n\nWe have 70,098 customers [^s:fa11ed000001], "
        "of 2,000 customers [^s:c1ea4000002a].\n\n![Segments](charts/segments.vl.json)\n"
    )
    tab = open_document_tab(qtbot, main_window, "report")
    qtbot.waitUntil(lambda: "fa11ed00 · check failed" in tab.preview.toHtml(), timeout=10_000)
    assert "c1ea4000 · formal" in tab.preview.toHtml()
    qtbot.waitUntil(
        lambda: "check failed: JOIN_FAN_OUT on step fa11ed000001" in tab.preview.toPlainText(),
        timeout=10_000,
    )  # the chart drawn from that step carries the same mark
    qtbot.waitUntil(
        lambda: (
            "row 1, column customers"
            in _citation_tooltips(tab.preview).get("lantide-step:c1ea4000002a", "")
        ),
        timeout=10_000,
    )
    tips = _citation_tooltips(tab.preview)
    assert "line 3: 2,000 matching" in tips["lantide-step:c1ea4000002a"]
    assert "JOIN_FAN_OUT: repeats rows" in tips["lantide-step:fa11ed000001"]
    assert "check failed" in tips["lantide-step:fa11ed000001"]


def test_an_approval_whose_time_is_not_text_still_reads(qapp):
    # a hand-edited project.json with "at": 5 made the bar's text fail (5 has no rstrip)
    from lantide.ui.documents.evidence_bar import approval_text

    approval = {"approved": True, "at": 5, "by": "analyst", "changed_since_approval": False}
    text, tone = approval_text({"status": "executing", "approval": approval})
    assert (text, tone) == ("Status: executing · Plan approved  by analyst", "ok")
