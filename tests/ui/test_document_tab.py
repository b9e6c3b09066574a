"""Plan and Report tabs on real Markdown files and sidecars: edit and save, annotate from
the selection with the inline box, resolve by hand (modes A and B), reply, reopen, delete,
find/replace, marks in the editor and the preview, Resolve (N), and changes made on disk
by another program (clean tab reloads; dirty tab: keep mine / take theirs / show both)."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor

from lantide.ui.documents import document_tab as document_tab_module
from lantide.ui.documents.annotation_list import FILTER_ALL, ROLE_ID
from lantide.ui.documents.external_change import KEEP_MINE, SHOW_BOTH, TAKE_THEIRS
from tests.ui.conftest import open_document_tab, write_externally

PLAN = "projects/q3-churn/plan.md"
SIDECAR = "projects/q3-churn/plan.annotations.json"


def _sidecar(root) -> dict:
    return json.loads((root / SIDECAR).read_text(encoding="utf-8"))


def _qt_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2  # Qt counts UTF-16 units


def _select(tab, needle: str) -> None:
    text = tab.editor.toPlainText()
    start = _qt_len(text[: text.index(needle)])
    tab.editor.reveal(start, start + _qt_len(needle))
    assert tab.editor.selected_text() == needle


def _wait_applied(qtbot, tab, action, timeout=15_000):
    with qtbot.waitSignal(tab.sig_snapshot_applied, timeout=timeout):
        action()


def test_plan_opens_with_marks_in_editor_preview_and_list(main_window, qtbot):
    tab = open_document_tab(qtbot, main_window)
    assert tab.title() == "plan.md" and not tab.is_dirty()
    assert '<mark data-annotation-id="3f9a1c">' in tab.editor.toPlainText()
    assert sorted(tab.editor.mark_ids()) == ["3f9a1c", "7be204", "c51d8e"]
    start, end = tab.editor.mark_range("c51d8e")
    assert tab.editor.toPlainText()[start:end] == "test accounts"
    assert tab.resolve_button.text() == "Resolve (3)" and tab.resolve_button.isEnabled()
    assert tab.annotation_list.list.count() == 3
    html = tab.preview.html()
    assert 'href="annotation:7be204"' in html and "lantide-open" in html
    # clicking a mark in the preview selects its annotation and scrolls the editor to it
    tab.preview.anchorClicked.emit(QUrl("annotation:7be204"))
    assert tab.annotation_list.selected_id() == "7be204"
    cursor = tab.editor.textCursor()
    assert cursor.selectedText() == "Churned: active in Q2 2025, not active in Q3 2025."


def test_edit_and_save_writes_the_file_atomically(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window)
    before = _sidecar(sample_workspace)
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    tab.editor.insertPlainText("- Churn excludes customers who signed up in Q3.\n")
    assert tab.is_dirty()
    assert main_window.tabs.tabText(main_window.tabs.currentIndex()) == "plan.md ●"
    qtbot.keyClick(tab.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not tab.is_dirty(), timeout=10_000)
    assert main_window.tabs.tabText(main_window.tabs.currentIndex()) == "plan.md"
    on_disk = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert on_disk.endswith("- Churn excludes customers who signed up in Q3.\n")
    assert on_disk == tab.editor.toPlainText()
    assert [a["id"] for a in _sidecar(sample_workspace)["annotations"]] == [
        a["id"] for a in before["annotations"]
    ]
    assert not list((sample_workspace / "projects" / "q3-churn").glob("*.lantide-tmp"))
    # undo goes back to the saved text and the tab is dirty again
    tab.editor.undo()
    assert tab.is_dirty()


def test_annotate_selection_with_the_inline_box(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window)
    _select(tab, "net revenue: gross minus discounts and refunds")
    main_window.act_annotate.trigger()  # Ctrl+Alt+M
    assert tab.comment_box.isVisible()
    assert "net revenue" in tab.comment_box.quote_label.text()
    tab.comment_box.edit.setPlainText("Are refunds netted in the month of the refund?")
    with qtbot.waitSignal(tab.sig_snapshot_applied, timeout=10_000):
        qtbot.keyClick(tab.comment_box.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert not tab.comment_box.isVisible()
    entries = _sidecar(sample_workspace)["annotations"]
    new = [a for a in entries if a["quote"] == "net revenue: gross minus discounts and refunds"]
    assert len(new) == 1 and new[0]["status"] == "open"
    assert new[0]["comment"] == "Are refunds netted in the month of the refund?"
    on_disk = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert f'<mark data-annotation-id="{new[0]["id"]}">net revenue: gross minus' in on_disk
    assert tab.editor.toPlainText() == on_disk and not tab.is_dirty()
    assert tab.resolve_button.text() == "Resolve (4)"
    assert tab.annotation_list.selected_id() == new[0]["id"]


def test_annotating_while_dirty_saves_the_edits_with_the_mark(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window)
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    tab.editor.insertPlainText("- Seasonality: Q3 has the summer dip.\n")
    _select(tab, "the summer dip")
    tab.annotate_selection()
    tab.comment_box.edit.setPlainText("Check against 2024.")
    _wait_applied(qtbot, tab, tab.comment_box.submit)
    on_disk = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert '">the summer dip</mark>.' in on_disk
    assert not tab.is_dirty()


def test_a_range_the_docs_layer_refuses_is_reported(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window)
    before = (sample_workspace / PLAN).read_text(encoding="utf-8")
    _select(tab, "## Question\nWhich")  # crosses a heading into a paragraph
    tab.annotate_selection()
    tab.comment_box.edit.setPlainText("spans two blocks")
    with qtbot.waitSignal(tab.sig_operation_failed, timeout=10_000) as blocker:
        tab.comment_box.submit()
    assert blocker.args[0].code.startswith("ANNOTATION")
    assert main_window.message_bar.isVisible()
    assert (sample_workspace / PLAN).read_text(encoding="utf-8") == before


def test_resolve_by_hand_reply_reopen_and_delete(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window)
    # reply: the text is unchanged, the thread grows
    tab.annotation_list.select("7be204")
    tab.annotation_list.reply_box.setPlainText("Every customer active in Q2.")
    _wait_applied(qtbot, tab, tab.annotation_list.reply_button.click)
    entry = next(a for a in _sidecar(sample_workspace)["annotations"] if a["id"] == "7be204")
    assert entry["history"][-1]["action"] == "replied"
    assert entry["history"][-1]["text"] == "Every customer active in Q2."
    assert tab.annotation_list.reply_box.toPlainText() == ""

    # mode B keeps the text, drops the mark, records the answer
    _wait_applied(
        qtbot,
        tab,
        lambda: tab.annotation_list.sig_resolve_requested.emit(
            "7be204", {"mode": "B", "replacement": None, "answer": "Q2 actives it is."}
        ),
    )
    text = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert "Churned: active in Q2 2025, not active in Q3 2025." in text
    assert 'data-annotation-id="7be204"' not in text
    assert tab.resolve_button.text() == "Resolve (2)"

    # mode A replaces the marked text
    _wait_applied(
        qtbot,
        tab,
        lambda: tab.annotation_list.sig_resolve_requested.emit(
            "c51d8e",
            {
                "mode": "A",
                "replacement": "test accounts (flag or name 'Test Account')",
                "answer": None,
            },
        ),
    )
    text = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert "without cancellations and test accounts (flag or name 'Test Account')" in text
    assert tab.editor.toPlainText() == text and not tab.is_dirty()
    statuses = {a["id"]: a["status"] for a in _sidecar(sample_workspace)["annotations"]}
    assert statuses == {"3f9a1c": "open", "7be204": "resolved", "c51d8e": "resolved"}

    # the resolved filter lists them; reopen puts the mark back around the kept text
    tab.annotation_list.set_filter(1)
    assert tab.annotation_list.list.count() == 2
    tab.annotation_list.select("7be204")
    _wait_applied(qtbot, tab, tab.annotation_list.reopen_button.click)
    text = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert '<mark data-annotation-id="7be204">Churned: active in Q2 2025' in text
    assert tab.resolve_button.text() == "Resolve (2)"

    # delete removes the entry and its mark, the text stays
    tab.annotation_list.select("3f9a1c")
    _wait_applied(qtbot, tab, tab.annotation_list.delete_button.click)
    text = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert "how much revenue left with them" in text and "3f9a1c" not in text
    assert "3f9a1c" not in {a["id"] for a in _sidecar(sample_workspace)["annotations"]}


def test_a_deleted_annotation_is_restored_from_the_deleted_filter(
    main_window, qtbot, sample_workspace
):
    tab = open_document_tab(qtbot, main_window)
    al = tab.annotation_list
    al.select("3f9a1c")
    _wait_applied(qtbot, tab, al.delete_button.click)
    assert "3f9a1c" not in (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert [e["id"] for e in _sidecar(sample_workspace)["deleted"]] == ["3f9a1c"]
    assert al.filter_combo.itemText(3) == "Deleted (1)"
    assert tab.resolve_button.text() == "Resolve (2)"

    # the Deleted filter lists it with Restore instead of the other actions
    al.set_filter(3)
    assert al.list.count() == 1
    al.list.setCurrentRow(0)
    assert al.selected_id() == "3f9a1c"
    assert al.restore_button.isVisibleTo(al) and al.restore_button.isEnabled()
    assert not al.delete_button.isVisibleTo(al) and not al.reply_button.isVisibleTo(al)
    _wait_applied(qtbot, tab, al.restore_button.click)

    # back in the text around the same words, open again, the deleted list empty
    text = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert '<mark data-annotation-id="3f9a1c">' in text
    assert tab.editor.toPlainText() == text and not tab.is_dirty()
    sidecar = _sidecar(sample_workspace)
    entry = next(a for a in sidecar["annotations"] if a["id"] == "3f9a1c")
    assert entry["status"] == "open"
    assert [h["action"] for h in entry["history"]][-2:] == ["deleted", "undeleted"]
    assert not sidecar.get("deleted")
    assert tab.resolve_button.text() == "Resolve (3)"
    assert al.filter_combo.itemText(3) == "Deleted (0)"
    assert al.selected_id() == "3f9a1c" and al.delete_button.isVisibleTo(al)


def test_resolve_button_asks_the_agent(main_window, qtbot):
    tab = open_document_tab(qtbot, main_window)
    with qtbot.waitSignal(main_window.services.sig_agent_asked, timeout=5_000) as blocker:
        tab.resolve_button.click()
    message = blocker.args[0]
    assert "resolve the 3 open annotations of the Plan" in message
    assert "projects/q3-churn/plan.md" in message and "read_plan" in message


def test_find_and_replace_all_is_one_undo_step(main_window, qtbot):
    tab = open_document_tab(qtbot, main_window)
    main_window.act_replace.trigger()
    bar = tab.find_bar
    assert bar.isVisible() and bar.replace_row.isVisible()
    bar.case_button.setChecked(True)
    bar.find_edit.setText("quarter")
    original = tab.editor.toPlainText()
    count = len(bar.matches())
    assert count == original.count("quarter") >= 2
    assert bar.count_label.text().endswith(str(count))
    bar.replace_edit.setText("QUARTER")
    assert bar.replace_all() == count
    assert tab.editor.toPlainText() == original.replace("quarter", "QUARTER")
    assert bar.matches() == [] and bar.count_label.text() == f"Replaced {count}"
    tab.editor.undo()
    assert tab.editor.toPlainText() == original
    bar.regex_button.setChecked(True)
    bar.find_edit.setText(r"Q(\d) 2025")
    assert bar.find_next()
    first = tab.editor.textCursor().selectionStart()
    assert tab.editor.textCursor().selectedText().endswith("2025")
    qtbot.keyClick(tab.editor, Qt.Key.Key_F3)  # the next match
    assert tab.editor.textCursor().selectionStart() > first
    qtbot.keyClick(tab.editor, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert tab.editor.textCursor().selectionStart() == first


def test_external_edit_reloads_a_clean_tab(main_window, qtbot, sample_workspace):
    tab = open_document_tab(qtbot, main_window)
    new_text = tab.editor.toPlainText().replace("## Checks", "## Checks (reviewed)")
    with qtbot.waitSignal(tab.sig_snapshot_applied, timeout=15_000):
        write_externally(sample_workspace / PLAN, new_text)
    assert "## Checks (reviewed)" in tab.editor.toPlainText()
    assert not tab.is_dirty()
    # undo can take the reload back, like any edit
    tab.editor.undo()
    assert "## Checks (reviewed)" not in tab.editor.toPlainText()


@pytest.mark.parametrize("choice", [KEEP_MINE, TAKE_THEIRS, SHOW_BOTH])
def test_external_edit_of_a_dirty_tab_asks(
    main_window, qtbot, sample_workspace, monkeypatch, choice
):
    asked = []

    class Answer:
        def __init__(self, file_name, detail="", parent=None):
            asked.append(file_name)

        def ask(self):
            return choice

    monkeypatch.setattr(document_tab_module, "ExternalChangeDialog", Answer)
    tab = open_document_tab(qtbot, main_window)
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    tab.editor.insertPlainText("- My unsaved note.\n")
    theirs = (sample_workspace / PLAN).read_text(encoding="utf-8") + "- Their note.\n"
    with qtbot.waitSignal(tab.sig_snapshot_applied, timeout=15_000):
        write_externally(sample_workspace / PLAN, theirs)
    assert asked == ["plan.md"]
    if choice == TAKE_THEIRS:
        assert tab.editor.toPlainText() == theirs and not tab.is_dirty()
        return
    assert tab.editor.toPlainText().endswith("- My unsaved note.\n") and tab.is_dirty()
    assert (sample_workspace / PLAN).read_text(encoding="utf-8") == theirs  # nothing lost
    if choice == SHOW_BOTH:
        assert tab.right_stack.currentWidget() is tab.compare
        assert tab.compare.their_text() == theirs
        tab.compare.sig_choice_made.emit(KEEP_MINE)
        assert tab.right_stack.currentWidget() is tab.preview
    # keeping mine: the next save replaces their version with mine, without a conflict
    tab.save()
    qtbot.waitUntil(lambda: not tab.is_dirty(), timeout=10_000)
    on_disk = (sample_workspace / PLAN).read_text(encoding="utf-8")
    assert on_disk.endswith("- My unsaved note.\n") and "- Their note." not in on_disk


def test_crlf_and_emoji_documents_annotate_the_right_text(main_window, qtbot, sample_workspace):
    report = sample_workspace / "projects" / "q3-churn" / "report.md"
    report.write_bytes("# Report 📊\r\n\r\nChurn rose 🚀 in US-CA and DE-BY.\r\n".encode())
    tab = open_document_tab(qtbot, main_window, "report")
    assert "\r" not in tab.editor.toPlainText()
    _select(tab, "US-CA")
    tab.annotate_selection()
    tab.comment_box.edit.setPlainText("by how much?")
    _wait_applied(qtbot, tab, tab.comment_box.submit)
    raw = report.read_bytes().decode()
    entry = json.loads(
        (sample_workspace / "projects" / "q3-churn" / "report.annotations.json").read_text()
    )["annotations"][0]
    assert entry["quote"] == "US-CA"
    assert f'🚀 in <mark data-annotation-id="{entry["id"]}">US-CA</mark> and' in raw
    assert raw.count("\r\n") == 3  # line endings kept


def test_agent_edits_in_this_process_refresh_the_open_tab(main_window, qtbot, sample_workspace):
    """The agent writes through the docs layer in this process (the watcher skips those
    writes as Lantide's own); the chat reports the path and the clean tab reloads."""
    from lantide.docs import resolve_annotations

    tab = open_document_tab(qtbot, main_window)
    project = main_window.services.workspace.project("q3-churn")
    resolve_annotations(
        project,
        "plan",
        [{"id": "3f9a1c", "mode": "A", "replacement": "the Q2 revenue of the churned"}],
        by="agent",
    )
    with qtbot.waitSignal(tab.sig_snapshot_applied, timeout=15_000):
        main_window.services.notify_paths_changed([sample_workspace / PLAN])
    assert "and the Q2 revenue of the churned?" in tab.editor.toPlainText()
    assert tab.resolve_button.text() == "Resolve (2)" and not tab.is_dirty()


def test_a_document_that_cannot_be_read_is_reported_and_left_alone(
    main_window, qtbot, sample_workspace
):
    report = sample_workspace / "projects" / "q3-churn" / "report.md"
    broken = b"# Report\n\xff\xfe not UTF-8\n"
    report.write_bytes(broken)
    tab = main_window.open_tab("report", "q3-churn")
    qtbot.waitUntil(lambda: tab.load_error is not None, timeout=10_000)
    assert tab.load_error.code == "FILE_CORRUPT"
    assert "not UTF-8" in tab.state_label.text() and tab.editor.isReadOnly()
    assert not tab.is_dirty() and not tab.act_save.isEnabled()
    main_window.tabs.close_tab(main_window.tabs.indexOf(tab))  # closes without asking
    assert report.read_bytes() == broken


def test_compare_view_colours_the_lines_that_differ(qtbot):
    from lantide.ui.documents.external_change import CompareVersionsWidget, changed_lines

    mine = "# Plan\n\nkeep this\nmine only\n"
    theirs = "# Plan\n\nkeep this\ntheirs only\n\nand more\n"
    assert changed_lines(mine, theirs) == ({3}, {3, 5, 6})  # the blank line 4 matches
    view = CompareVersionsWidget()
    qtbot.addWidget(view)
    assert view.show_versions(mine, theirs, "plan.md") == {3, 5, 6}
    doc = view.theirs.document()
    coloured = [
        i
        for i in range(doc.blockCount())
        if doc.findBlockByNumber(i).blockFormat().background().style() != Qt.BrushStyle.NoBrush
    ]
    assert coloured == [3, 5, 6]
    assert "(3)" in view.label.text()


def _formats_at(editor, position: int):
    """The highlighter's character formats covering ``position`` (a Qt position)."""
    block = editor.document().findBlock(position)
    offset = position - block.position()
    ranges = block.layout().formats()
    return [QTextCharFormat(r.format) for r in ranges if r.start <= offset < r.start + r.length]


def test_mark_tags_are_faint_and_small_but_the_text_and_offsets_stay_exact(
    main_window, qtbot, sample_workspace
):
    tab = open_document_tab(qtbot, main_window)
    editor = tab.editor
    text = editor.toPlainText()
    assert text == (sample_workspace / PLAN).read_text(encoding="utf-8")  # the file, exactly
    body_size = editor.document().defaultFont().pointSizeF()
    body_ink = editor.palette().color(editor.foregroundRole())
    for needle in ('<mark data-annotation-id="3f9a1c">', "</mark>"):
        position = _qt_len(text[: text.index(needle)])
        for inside in (position, position + len(needle) - 1):
            (fmt,) = _formats_at(editor, inside)[-1:]
            assert 0 < fmt.fontPointSize() <= body_size * 0.75
            ink = fmt.foreground().color()
            # fainter: closer to the background than the body text is
            base = editor.palette().color(editor.backgroundRole())
            assert (
                abs(ink.lightness() - base.lightness())
                < abs(body_ink.lightness() - base.lightness()) * 0.6
            )
    # the quoted text itself is body text, and selecting it selects exactly it
    start, end = editor.mark_range("3f9a1c")
    assert editor.toPlainText()[start:end] == "how much revenue left with them"
    assert not any(
        f.fontPointSize() and f.fontPointSize() < body_size for f in _formats_at(editor, start)
    )
    _select(tab, "how much revenue left with them")
    assert editor.selection_range() == (start, end)
    # a click right after a tag lands in the text after it (positions did not move)
    cursor = editor.textCursor()
    cursor.setPosition(start)
    editor.setTextCursor(cursor)
    assert editor.mark_at(editor.textCursor().position()) == "3f9a1c"


def test_a_light_dark_switch_recolours_editor_preview_and_toolbar_icons(main_window, qtbot):
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QIcon

    from lantide.ui.theme import colors

    tab = open_document_tab(qtbot, main_window)

    def heading_ink():
        text = tab.editor.toPlainText()
        position = _qt_len(text[: text.index("## Question") + 3])
        return _formats_at(tab.editor, position)[-1].foreground().color().name()

    def icon_ink():
        image = tab.act_save.icon().pixmap(QSize(16, 16), QIcon.Mode.Normal).toImage()
        inks = [image.pixelColor(x, y) for x in range(16) for y in range(16)]
        return max(inks, key=lambda c: c.alpha()).name()

    light_heading, light_icon = heading_ink(), icon_ink()
    assert light_heading == colors().heading.name()
    try:
        main_window.set_appearance("dark")
        qtbot.waitUntil(lambda: heading_ink() == colors().heading.name(), timeout=5000)
        assert colors().dark and heading_ink() != light_heading
        assert colors().heading.name() in tab.preview.document().defaultStyleSheet()
        assert icon_ink() != light_icon  # the same QIcon, drawn in the dark palette's ink
        palette_ink = tab.palette().color(tab.foregroundRole())
        assert abs(QColor(icon_ink()).lightness() - palette_ink.lightness()) < 40
    finally:
        main_window.set_appearance("light")
    qtbot.waitUntil(lambda: heading_ink() == light_heading, timeout=5000)
    palette_ink = tab.palette().color(tab.foregroundRole())
    assert abs(QColor(icon_ink()).lightness() - palette_ink.lightness()) < 40


def test_the_annotation_list_follows_the_document(main_window, qtbot, sample_workspace):
    from lantide.docs import open_document

    project = main_window.services.workspace.project("q3-churn")
    doc = open_document(project, "plan")
    start = doc.text.index("# Plan") + 2
    newest = doc.create_annotation(start, start + 4, "made last, first in the text")
    tab = open_document_tab(qtbot, main_window, "plan")
    listed = tab.annotation_list
    listed.set_filter(FILTER_ALL)
    qtbot.waitUntil(lambda: listed.list.count() >= 4, timeout=10_000)
    ids = [listed.list.item(i).data(ROLE_ID) for i in range(4)]
    assert ids[0] == newest
    assert [a["id"] for a in tab.snapshot.annotations][0] == newest
