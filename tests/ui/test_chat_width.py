"""The chat at narrow dock widths: text wraps, wide tables scroll inside their own box, and
nothing is cut off at the right, from 240 px up."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QLabel, QTextBrowser, QWidget

from lantide.ui.chat.chat_answer import AssistantMessageWidget
from lantide.ui.chat.chat_transcript import ChatTranscript

LONG_SQL = (
    "SELECT o.channel, o.status, count(*) AS orders, sum(o.quantity * o.unit_price) "
    "AS gross_revenue_before_discounts\nFROM orders AS o WHERE o.status <> 'cancelled' "
    "AND o.channel = 'web'\nGROUP BY 1, 2 ORDER BY 3 DESC"
)
ANSWER = (
    "Web orders that were not cancelled, by status:\n\n"
    "| channel | status | orders | gross_revenue_before_discounts | average_discount | note |\n"
    "|---|---|---|---|---|---|\n"
    "| web | shipped | 1204 | 9618.3 | 0.05 | the biggest group by far, worth a look |\n"
    "| web | returned | 77 | 1200.5 | 0.1 | small |\n\n"
    "The file data/AnaVeryLongFileNameWithoutAnySpacesThatCannotWrap_2025_q3_orders.parquet "
    "holds them.\n\nShall I break it down by month?"
)


def _fill(transcript: ChatTranscript) -> None:
    transcript.add_user(
        "Which channel brings the most revenue? See "
        "data/AnaVeryLongFileNameWithoutAnySpacesThatCannotWrap_2025.parquet"
    )
    card = transcript.add_card("c1", "run_query", {"sql": LONG_SQL, "purpose": "orders by channel"})
    card.set_result(
        True,
        {
            "status": "ok",
            "row_count": 2,
            "columns": [{"name": "channel"}, {"name": "gross_revenue_before_discounts"}],
            "preview": [{"channel": "web", "gross_revenue_before_discounts": 26921303.61}],
        },
        140,
    )
    card.set_expanded(True)
    failed = transcript.add_card(
        "c2", "run_query", {"sql": "SELECT * FROM orders WHERE order_date = 5"}
    )
    failed.set_result(
        False,
        {
            "error": "DATA_ERROR",
            "message": "Conversion Error: Unimplemented "
            "type for cast (INTEGER -> DATE) in column order_date of orders",
            "hint": "A value does not fit its column's type.",
        },
    )
    failed.set_expanded(True)
    transcript.add_notice(
        "Could not read /home/analyst/projects/AnaVeryLongFolderNameWithoutAnySpaces/data.parquet",
        level="error",
    )
    answer = transcript._answer_widget()
    answer.set_text(ANSWER)
    transcript.current_answer = None
    # an ask_user question with sentences for choices, and a reflection's card: their
    # buttons and header asked for 619 px and 362 px
    transcript.add_question(
        "Which denominator do you want for the churn rate: all customers active in Q2, or "
        "only paying ones?",
        ["All customers active in Q2 2025 (including trials and test accounts)", "Only paying"],
    )
    transcript.add_reflection(
        {
            "verdict": "problems",
            "problems": [{"code": "JOIN_FANOUT", "message": "sums are inflated by about 3x"}],
        }
    )


def _laid_out(qtbot, root: QWidget) -> None:
    """Wait until every widget under ``root`` that is not hidden on purpose is shown, then
    run the layouts: _clipped skips widgets that are not visible, so looking earlier (on a
    slow machine) would pass without checking them."""

    def hidden_on_purpose(widget: QWidget) -> bool:
        # a layout shows the widgets it manages unless they were hidden explicitly;
        # a widget outside any layout (a popup, say) stays hidden until shown
        while widget is not None and widget is not root:
            if widget.isHidden() and (
                widget.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide)
                or not widget.testAttribute(Qt.WidgetAttribute.WA_LaidOut)
            ):
                return True
            widget = widget.parentWidget()
        return False

    qtbot.waitUntil(
        lambda: all(
            w.isVisibleTo(root) for w in root.findChildren(QWidget) if not hidden_on_purpose(w)
        ),
        timeout=5_000,
    )
    QApplication.sendPostedEvents()  # the layout requests of what was just shown


def _clipped(transcript: ChatTranscript) -> list[str]:
    """Widgets reaching past the transcript's visible width, and text boxes whose content
    is wider than they are with no way to scroll to it."""
    viewport = transcript.viewport()
    right = viewport.width()
    problems = []
    for widget in transcript.widget().findChildren(QWidget):
        if not widget.isVisibleTo(transcript) or widget.width() == 0:
            continue
        if isinstance(widget.parent(), QAbstractScrollArea) or isinstance(
            widget.parentWidget(), QAbstractScrollArea
        ):
            continue  # the scroll bars and viewport of a text box: checked with their box
        edge = widget.mapTo(viewport, QPoint(widget.width(), 0)).x()
        if edge > right + 1:
            problems.append(
                f"{type(widget).__name__} {widget.objectName()!r} ends at {edge} > {right}"
            )
        if isinstance(widget, QTextBrowser):
            doc_width = widget.document().size().width()
            if (
                doc_width > widget.viewport().width() + 1
                and not widget.horizontalScrollBar().isVisibleTo(transcript)
            ):
                problems.append(
                    f"text box {widget.toPlainText()[:30]!r} is {doc_width:.0f} px "
                    f"wide in {widget.viewport().width()} px, without a scroll bar"
                )
        if (
            isinstance(widget, QLabel)
            and not widget.wordWrap()
            and widget.text()
            and widget.sizeHint().width() > widget.width() + 1
        ):
            problems.append(
                f"label {widget.text()[:30]!r} needs {widget.sizeHint().width()} px, "
                f"has {widget.width()}"
            )
    return problems


@pytest.mark.parametrize("width", [240, 270, 330, 480])
def test_nothing_is_cut_off_at_the_right(qtbot, width):
    transcript = ChatTranscript()
    qtbot.addWidget(transcript)
    transcript.resize(width, 700)
    transcript.show()
    _fill(transcript)
    _laid_out(qtbot, transcript)
    assert _clipped(transcript) == []
    assert transcript.widget().width() <= transcript.viewport().width()


def test_a_wide_table_scrolls_in_its_own_box_and_the_text_around_it_wraps(qtbot):
    transcript = ChatTranscript()
    qtbot.addWidget(transcript)
    transcript.resize(270, 700)
    transcript.show()
    _fill(transcript)
    _laid_out(qtbot, transcript)
    answer = transcript.widgets(AssistantMessageWidget)[0]
    boxes = [s.browser for s in answer.segments]
    table_boxes = [b for b in boxes if "gross_revenue_before_discounts" in b.toPlainText()]
    assert len(table_boxes) == 1
    table = table_boxes[0]
    assert "Web orders" not in table.toPlainText()  # the text is not in the scrolling box
    assert table.horizontalScrollBar().isVisibleTo(transcript)
    assert table.horizontalScrollBar().maximum() > 0
    # the whole table is reachable and the box is as tall as the table plus its scroll bar
    assert (
        table.height()
        >= table.document().size().height() + table.horizontalScrollBar().height() - 1
    )
    # every cell is on one line: the columns are not broken letter by letter
    assert "gross_revenue_before_discounts" in table.toPlainText()
    assert "Shall I break it down by month?" in answer.plain_text()


def test_a_streamed_table_gets_its_own_box_too(qtbot):
    answer = AssistantMessageWidget()
    qtbot.addWidget(answer)
    answer.resize(270, 600)
    answer.show()
    for i in range(0, len(ANSWER), 7):
        answer.append(ANSWER[i : i + 7])
        answer.render_pending()
    answer.set_text(ANSWER)
    assert [s.browser.wide for s in answer.segments] == [False, True, False]
    table = answer.segments[1].browser
    assert table.toPlainText().split()[:2] == ["channel", "status"]
    assert table.horizontalScrollBar().maximum() > 0
    assert answer.plain_text().split()[-1] == "month?"


def test_a_tool_cards_rows_scroll_in_their_own_box(qtbot):
    transcript = ChatTranscript()
    qtbot.addWidget(transcript)
    transcript.resize(240, 700)
    transcript.show()
    _fill(transcript)
    _laid_out(qtbot, transcript)
    card = transcript.cards["c1"]
    assert card.preview.isVisible() and card.preview.wide
    assert "gross_revenue_before_discounts" in card.preview.toPlainText()
    assert "26921303.61" not in card.body.toPlainText()  # the rows are not in the text box
    assert "26921303.61" in card.preview.toPlainText()
    assert card.preview.horizontalScrollBar().maximum() > 0


def test_the_whole_chat_panel_narrows_to_240_px(qtbot, shell_services):
    from lantide.ui.chat.chat_panel import ChatPanel

    services = shell_services(query=False, watcher=False)
    panel = ChatPanel(services)
    qtbot.addWidget(panel)
    panel.model_label.setText("a-long-model-name-from-a-profile · environment override")
    assert panel.minimumSizeHint().width() <= 240
    panel.resize(240, 600)
    panel.show()
    _laid_out(qtbot, panel)
    for widget in panel.findChildren(QWidget):
        if widget.isVisible() and not isinstance(widget.parentWidget(), QAbstractScrollArea):
            assert widget.mapTo(panel, QPoint(widget.width(), 0)).x() <= 241, widget


def test_the_chat_wraps_in_the_window_at_1024x700(qtbot, shell_services):
    from tests.ui.conftest import open_main_window

    window = open_main_window(qtbot, shell_services(), restore=False)
    window.act_focus_chat.trigger()
    transcript = window.chat.transcript
    _fill(transcript)
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.width() == 1024, timeout=5_000)
    _laid_out(qtbot, transcript)
    qtbot.waitUntil(
        lambda: transcript.widget().width() <= transcript.viewport().width(), timeout=3_000
    )
    assert _clipped(transcript) == []
    question = transcript.widget().findChild(QWidget, "QuestionCard")
    assert question.buttons[0].label.text().startswith("All customers active in Q2 2025")
    assert question.buttons[0].height() > question.buttons[1].height()  # wrapped, not cut
