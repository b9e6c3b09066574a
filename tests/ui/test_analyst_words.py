"""Protocol words stay with the agent: the analyst reads "you", "kept the text", "step 3
of this conversation", hints without tool names, and tool results as labelled fields."""

from __future__ import annotations

import re

from lantide.ui.chat.chat_transcript import EMPTY_TEXT
from lantide.ui.chat.ledger_panel import LedgerPanel
from lantide.ui.chat.tool_card import ToolCardWidget
from lantide.ui.documents.annotation_list import AnnotationListWidget, ResolveDialog

HEX_ID = re.compile(r"\b[0-9a-f]{12}\b")
STEP_ID = "6fa253f27412"


def test_an_expanded_card_shows_fields_not_the_agents_json(qtbot):
    card = ToolCardWidget(
        "c1", "run_query", {"sql": "SELECT 1 AS one", "purpose": "orders by channel"}
    )
    qtbot.addWidget(card)
    card.set_result(
        True,
        {
            "status": "ok",
            "row_count": 2,
            "cached_table_name": None,
            "duration_ms": 140,
            "columns": [{"name": "one", "type": "INTEGER"}],
            "preview": [{"one": 1}],
            "truncated": False,
            "step_id": STEP_ID,
            "step": {"step_id": STEP_ID},
            "warnings": ["the preview shows the first 1 of 2 rows"],
            "next": f"After reading this, write one line: [[QUERY_STEP]] {STEP_ID}: <purpose> — "
            "<what it showed>.",
        },
        140,
    )
    card.set_step(STEP_ID, "orders by channel: web leads")
    card.set_expanded(True)
    text = card.body.toPlainText()
    assert "[[QUERY_STEP]]" not in text and "write one line" not in text
    assert not HEX_ID.search(text) and not HEX_ID.search(card.step_link.toolTip())
    assert "{" not in text and '"' not in text  # fields, not JSON
    assert "Purpose" in text and "orders by channel" in text
    assert re.search(r"Rows\s+2", text) and re.search(r"Time\s+140 ms", text)
    assert "the preview shows the first 1 of 2 rows" in text
    assert "cut short" not in text  # a false flag is not worth a line


def test_an_error_card_hint_names_no_agent_tool(qtbot):
    card = ToolCardWidget("c2", "run_query", {"sql": "SELECT nope FROM orders"})
    qtbot.addWidget(card)
    card.set_result(
        False,
        {
            "error": "BIND_ERROR",
            "message": 'column "nope" not found',
            "hint": "Check the column names with read_schema(table).",
        },
    )
    card.set_expanded(True)
    text = card.body.toPlainText()
    assert "read_schema" not in text and "the explorer lists each table's columns" in text


def test_annotation_threads_say_you_and_what_the_resolution_did(qtbot):
    widget = AnnotationListWidget()
    qtbot.addWidget(widget)
    annotation = {
        "id": "a1",
        "status": "resolved",
        "quote": "net revenue",
        "comment": "why?",
        "replies": [{"by": "user", "text": "and refunds?", "at": "2026-12-01T10:00:00Z"}],
        "history": [
            {"by": "user", "action": "created", "text": "why?", "at": "2026-12-01T10:00:00Z"},
            {
                "by": "agent",
                "action": "resolved",
                "mode": "B",
                "text": "Because.",
                "at": "2026-12-01T10:05:00Z",
            },
        ],
    }
    widget.set_annotations([annotation])
    widget.select("a1")
    thread = widget.thread_view.toPlainText()
    assert "you · created" in thread and "the agent · resolved: kept the text" in thread
    assert "user" not in thread and "mode" not in thread
    listed = widget.list.item(0).text()
    assert "↳ you: and refunds?" in listed
    dialog = ResolveDialog(annotation)
    qtbot.addWidget(dialog)
    assert dialog.mode_a.text() == "Replace the text"
    assert dialog.mode_b.text() == "Keep the text and answer"


def test_the_ledger_shows_each_step_by_the_id_a_citation_uses(qtbot, shell_services):
    """One step id form on every screen (issue 30, item 3): the ledger shows the id the
    Report cites (``[^s:ID]``) and the chat links, not its own 1, 2."""
    services = shell_services(query=False, watcher=False)
    panel = LedgerPanel(services)
    qtbot.addWidget(panel)
    panel.conversation_id = "conv"
    panel.steps = [
        {"step_id": "aaaaaaaaaaaa", "tool": "run_query", "at": "2026-12-01T10:00:00Z"},
        {"step_id": STEP_ID, "tool": "run_query", "at": "2026-12-01T10:01:00Z", "sql": "SELECT 1"},
    ]
    panel._fill_steps()
    column = [
        panel.step_tree.topLevelItem(i).text(0) for i in range(panel.step_tree.topLevelItemCount())
    ]
    assert column == ["aaaaaaaaaaaa", STEP_ID]
    panel._select(STEP_ID)
    details = panel.step_details.toPlainText()
    assert f"Step {STEP_ID} of this conversation" in details


def test_the_empty_chat_does_not_speak_protocol():
    assert "QEM" not in EMPTY_TEXT


def test_the_ledger_names_conversations_not_their_ids(qtbot, shell_services):
    services = shell_services(query=False, watcher=False)
    panel = LedgerPanel(services)
    qtbot.addWidget(panel)
    conversation = "20261201-152011-1add"
    panel._chat_conversation_changed(conversation)
    qtbot.waitUntil(lambda: panel.conversation_box.count() > 0, timeout=10_000)
    texts = [panel.conversation_box.itemText(i) for i in range(panel.conversation_box.count())]
    assert conversation not in " ".join(texts) and texts[0].startswith("Untitled")


def test_cached_tables_are_described_without_step_ids(qtbot, shell_services):
    from lantide.ui.explorer.explorer_snapshot import table_rows

    services = shell_services(watcher=False)
    services.query.run_query("SELECT 1 AS x", result_label="one_row")
    rows = {r["name"]: r for r in table_rows(None, services.query)["tables"]}
    description = rows["one_row"]["description"]
    assert not HEX_ID.search(description)
    assert description == "cached result of a query (its step is in the ledger)"
