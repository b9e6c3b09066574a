"""Checks that a reading note reaches every place an analyst (or the agent) looks.

A note made when a data file is read must be in ``show_tables`` (so ``lantide tables``),
``read_schema``, every query result's warnings (with the code ``READING_NOTE``) and the
explorer's tooltip, which renders the engine's words (``table_rows``' description).
"""

from __future__ import annotations

from typing import Any


def listed(service: Any, qualified_name: str) -> dict[str, Any]:
    return next(t for t in service.show_tables()["tables"] if t["qualified_name"] == qualified_name)


def problem_of(service: Any, source: str) -> str:
    return next(p["error"] for p in service.show_tables()["problems"] if p["source"] == source)


def assert_noted(service: Any, qualified_name: str, *fragments: str) -> list[str]:
    """Each fragment is in one note of the table, and the notes are everywhere. Returns
    the table's notes."""
    from lantide.query.result_warnings import READING_NOTE, coded
    from lantide.ui.explorer.explorer_snapshot import table_rows

    entry = listed(service, qualified_name)
    notes = entry.get("notes", [])
    for fragment in fragments:
        assert any(fragment in note for note in notes), (fragment, notes)
    assert service.read_schema(qualified_name)["notes"] == notes
    result = service.run_query(f"SELECT * FROM {qualified_name}")
    warned = [w for w in coded(result) if w.code == READING_NOTE]
    assert [w.message for w in warned] == [f"{entry['source']}: {n}" for n in notes]
    tooltips = [
        r["description"] or ""
        for r in table_rows(None, service)["tables"]
        if r["source"] == entry["source"]
    ]
    assert any(all(note in tip for note in notes) for tip in tooltips), tooltips
    return notes
