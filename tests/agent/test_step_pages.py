"""read_step's pages fit the room the loop computed, counted with the bundled tokenizer:
property-tested over random rows, columns and rooms."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lantide.agent.tools.step_pages import fit_page, result_tokens

_CELL = st.one_of(
    st.integers(-(10**9), 10**9),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.none(),
    st.booleans(),
)


@st.composite
def pages(draw):
    width = draw(st.integers(1, 8))
    rows = draw(st.lists(st.lists(_CELL, min_size=width, max_size=width), max_size=40))
    offset = draw(st.integers(0, 500))
    total = offset + len(rows) + draw(st.integers(0, 1000))
    step = {
        "step_id": "abc123def456",
        "sql": draw(st.text(min_size=1, max_size=600)),
        "purpose": draw(st.text(max_size=80)),
        "row_count": total,
        "columns": [{"name": f"c{i}", "type": "VARCHAR"} for i in range(width)],
        "warnings": draw(st.lists(st.text(max_size=120), max_size=3)),
        "materialized": False,
    }
    page = {
        "columns": [{"name": f"column_{i}", "type": "DOUBLE"} for i in range(width)],
        "rows": rows,
        "row_count": total,
        "from": "the step's SQL, run again now (the data may have changed since)",
        "offset": offset,
    }
    return {"step": step, "rows": page}


@settings(max_examples=150, deadline=None)
@given(out=pages(), room=st.integers(0, 3000))
def test_a_page_fits_its_room_and_holds_a_row_whenever_one_can(out, room):
    fitted = fit_page(out, room)
    rows = out["rows"]["rows"]
    shown = fitted["rows"]["rows"]
    offset = out["rows"]["offset"]
    assert shown == rows[: len(shown)]  # the first rows from the offset, in order
    smallest = _tiny(out, 1) if rows else None
    if result_tokens(fitted) > room:  # over the room only when not even an empty page fits
        assert result_tokens(_tiny(out, 0)) > room
    if smallest is not None and result_tokens(smallest) <= room:
        assert shown, "a row fitted and none was sent"
    if offset + len(shown) < out["rows"]["row_count"]:
        assert fitted["rows"]["next_offset"] == offset + len(shown)


def _tiny(out, n):
    """The tiniest page with n rows, as fit_page builds it (its last resort)."""
    one = {**out, "rows": {**out["rows"], "rows": out["rows"]["rows"][:n]}}
    return fit_page(one, -1) if n == 0 else _smallest_with_rows(one)


def _smallest_with_rows(out):
    page = {
        "step": {"step_id": out["step"]["step_id"]},
        "rows": {
            "columns": [c["name"] for c in out["rows"]["columns"]],
            "rows": out["rows"]["rows"],
            "row_count": out["rows"]["row_count"],
            "offset": out["rows"]["offset"],
        },
    }
    if out["rows"]["offset"] + len(out["rows"]["rows"]) < out["rows"]["row_count"]:
        page["rows"]["next_offset"] = out["rows"]["offset"] + len(out["rows"]["rows"])
    return page
