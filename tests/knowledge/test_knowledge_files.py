"""Reading hand-written knowledge files: entries, status, groups, and what is not read."""

from __future__ import annotations

from knowledge_samples import HAND_WRITTEN

from lantide.knowledge import parse_knowledge
from lantide.workspace.model import Workspace


def test_entries_status_sections_and_groups():
    doc = parse_knowledge(HAND_WRITTEN, scope="project")
    got = [(e.number, e.section, e.heading, e.status, e.text) for e in doc.entries]
    assert got == [
        (1, "Rules", None, "enabled", "Revenue means net revenue: gross minus refunds."),
        (2, "Rules", None, "queued", "The fiscal year starts on 1 April."),
        (
            3,
            "Rules",
            None,
            "enabled",
            "Exclude test accounts\n(customers.is_test_account = "
            "true) from every count.\n- also internal staff accounts",
        ),
        (4, "Rules", "Dates", "enabled", "Weeks start on Monday."),
        (5, "Rules", "Dates", "enabled", "Use the order date, not the ship date."),
        (6, "Info", None, "enabled", "orders.region holds ISO 3166-2 codes."),
        (7, "Info", None, "enabled", "loose item after a blank line"),
    ]
    assert [e.line for e in doc.entries] == [7, 8, 9, 14, 15, 21, 23]
    assert [e.ref for e in doc.entries][:2] == ["1", "2"]
    assert doc.has_group_headings
    # the raw lines are exactly the file's
    assert doc.entries[2].raw == (
        "+ Exclude test accounts\n  (customers.is_test_account = true)"
        " from every count.\n  - also internal staff accounts\n"
    )


def test_things_that_are_not_entries_are_reported_with_lines():
    doc = parse_knowledge(HAND_WRITTEN, scope="project")
    problems = {p.line: p.message for p in doc.problems}
    assert "not read as knowledge" in problems[18]  # the list under ## Notes
    text = "## Rules\nA paragraph, not a list item.\n\n- real entry\n- \n#### Deep\n- x\n"
    doc = parse_knowledge(text, scope="user")
    assert [e.text for e in doc.entries] == ["real entry", "x"]
    lines = sorted((p.line, p.message) for p in doc.problems)
    assert lines[0][0] == 2 and "start it with '- '" in lines[0][1]
    assert lines[1][0] == 5 and "empty entry" in lines[1][1]
    assert lines[2][0] == 6 and "not a group" in lines[2][1]
    assert doc.entries[1].heading is None  # a #### heading does not group


def test_list_before_any_section_and_duplicate_sections():
    doc = parse_knowledge("- loose\n\n## Rules\n- a\n## Rules\n- b\n", scope="user")
    assert [e.text for e in doc.entries] == ["a", "b"]
    assert [p.line for p in doc.problems] == [1, 5]


def test_source_comment_is_parsed_and_hidden_from_the_text():
    doc = parse_knowledge(
        "## Rules\n- [queued] Churn is 90 days without an order. "
        "<!-- source: conversation=c-7 turn=4 at=2026-11-30T10:00:00Z -->\n",
        scope="project",
    )
    (entry,) = doc.entries
    assert entry.status == "queued"
    assert entry.text == "Churn is 90 days without an order."
    assert entry.source == {"conversation": "c-7", "turn": 4, "at": "2026-11-30T10:00:00Z"}


def test_line_endings_bom_and_missing_final_newline():
    text = "\ufeff# K\r\n## Rules\r\n- a\r\n- [queued] b"
    doc = parse_knowledge(text, scope="user")
    assert [e.text for e in doc.entries] == ["a", "b"]
    assert doc.bom == "\ufeff" and doc.newline == "\r\n"
    assert doc.bom + doc.text == text


def test_setext_and_case_insensitive_section_headings():
    doc = parse_knowledge("RULES\n-----\n\n- a\n\nInfo\n----\n- b\n", scope="user")
    assert [(e.section, e.text) for e in doc.entries] == [("Rules", "a"), ("Info", "b")]


def test_size_excludes_queued_entries():
    text = "## Rules\n- a\n- [queued] bbbbbbbbbb\n"
    doc = parse_knowledge(text, scope="user")
    assert doc.size_chars == len(text) - len("- [queued] bbbbbbbbbb\n")


def test_sample_workspace_knowledge(sample_workspace):
    # the run's copy of create_sample's workspace (built once a run, not once a test)
    ws = Workspace.open(sample_workspace, lock=False)
    project = ws.list_projects()[0]
    doc = parse_knowledge(project.knowledge_path.read_text(encoding="utf-8"), scope="project")
    assert [e.status for e in doc.entries].count("queued") == 1
    assert doc.problems == []
