"""The analyst's words for what the engine and the agent say in their own: authors ("you",
not "user"), how an annotation was resolved ("kept the text", not "mode B"), hints without
the agent's tool names, and a tool call's arguments and result as labelled fields instead
of raw JSON. What the agent is told for itself (the step-line reminder) is left out.
"""

from __future__ import annotations

import re
from typing import Any

from lantide.ui.sql.result_model import display_value

# Keys of a tool result meant for the agent alone, or shown elsewhere in the card.
AGENT_ONLY_KEYS = frozenset(
    {
        "next",
        "step_id",
        "step",
        "status",
        "sql",
        "preview",
        "rows",
        "columns",
        "instruction",
        "reason_code",
        "ok",
        "checks",
        "cells_cut",
        "cell_chars",
    }
)  # checks: badges
FIELD_LABELS = {
    "row_count": "Rows",
    "cached_table_name": "Cached as",
    "duration_ms": "Time",
    "truncated": "Preview cut short",
    "purpose": "Purpose",
    "project": "Project",
    "tab": "Tab",
    "table": "Table",
    "result_label": "Saved as",
    "warnings": "Warnings",
    "hints": "Notes",
    "message": "Message",
    "question": "Question",
    "choices": "Choices",
    "document": "Document",
    "heading": "Heading",
    "reason": "Reason",
    "limit": "Limit",
    "materialized": "Kept as a table",
    "materialize_reason": "Why",
}
# Flags worth a line only when they are true ("Preview cut short: no" is noise).
QUIET_WHEN_FALSE = frozenset({"truncated", "materialized"})
AUTHORS = {"user": "you", "analyst": "you", "agent": "the agent", "assistant": "the agent"}
RESOLUTIONS = {"A": "replaced the text", "B": "kept the text"}
# Agent tools named in hints, and what the analyst uses instead.
_TOOL_WORDS = (
    (
        re.compile(r"[Cc]heck the column names with read_schema\(\s*\w*\s*\)"),
        "Check the column names: the explorer lists each table's columns",
    ),
    (
        re.compile(r"\bread_schema\(\s*\w*\s*\)|\bread_schema\b"),
        "the table's columns in the explorer",
    ),
    (re.compile(r"\bshow_tables\b"), "the explorer"),
    (re.compile(r"\brun_query\b"), "a query"),
    (re.compile(r"\brun_sql_tab\b"), "Run"),
    (re.compile(r"\bsource_run_sql_tab\b"), "Source Run"),
    (re.compile(r"\bresult_label\b"), "a name for the result"),
)


def author(by: str | None) -> str:
    return AUTHORS.get((by or "").strip().lower(), by or "someone")


def resolution(mode: str | None) -> str:
    return RESOLUTIONS.get(str(mode or "").upper(), "resolved")


def plain_hint(text: str | None) -> str:
    """A hint with the agent's tool names put in the analyst's words."""
    out = text or ""
    for pattern, words in _TOOL_WORDS:
        out = pattern.sub(words, out)
    return out


def field_label(key: str) -> str:
    return FIELD_LABELS.get(key, key.replace("_", " ").capitalize())


def field_value(key: str, value: Any) -> str:
    if key == "duration_ms" and isinstance(value, (int, float)):
        return f"{value:,.0f} ms"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, dict):
        if "message" in value:
            return plain_hint(str(value["message"]))
        return "; ".join(
            f"{field_label(k)}: {field_value(k, v)}"
            for k, v in value.items()
            if k not in AGENT_ONLY_KEYS
        )
    if isinstance(value, (list, tuple)):
        return "; ".join(field_value(key, v) for v in value)
    if isinstance(value, str):
        return plain_hint(value)
    return display_value(value)


def readable_fields(
    values: dict[str, Any], *, skip: frozenset[str] = AGENT_ONLY_KEYS
) -> list[tuple[str, str]]:
    """(label, text) of each field worth showing, in order; empty ones left out."""
    out = []
    for key, value in values.items():
        if (
            key in skip
            or value in (None, "", [], {})
            or (key in QUIET_WHEN_FALSE and value is False)
        ):
            continue
        text = field_value(key, value)
        if text:
            out.append((field_label(key), text))
    return out
