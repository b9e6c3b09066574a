"""Byte flips and truncations of a real chart file: reading it gives a checked chart or a
ChartError naming the file, never another exception (no traceback for the analyst)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lantide.charts import ChartError, parse_chart

TEXT = json.dumps(
    {
        "title": "Revenue by month",
        "data": {"table": "revenue_by_month"},
        "layer": [
            {"mark": "bar", "encoding": {"x": {"field": "month", "type": "temporal"}}},
            {"data": {"values": [{"y": 5}]}, "mark": "rule", "encoding": {"y": {"field": "y"}}},
        ],
        "usermeta": {"lantide": {"by": "agent", "sha256": "0" * 64}},
    },
    indent=2,
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.tuples(st.integers(0, len(TEXT) - 1), st.characters()), max_size=4),
    st.integers(0, len(TEXT)),
)
def test_a_mangled_chart_file_is_a_chart_or_a_named_error(flips, cut):
    chars = list(TEXT)
    for at, char in flips:
        chars[at] = char
    text = "".join(chars)[:cut] if cut else "".join(chars)
    try:
        parse_chart(text, "charts/fuzz.vl.json")
    except ChartError as exc:
        assert exc.message.startswith("charts/fuzz.vl.json")
        assert exc.line is None or 1 <= exc.line <= text.count("\n") + 1


def test_json_nested_too_deeply_is_a_named_error_not_a_crash():
    import pytest

    for text in (
        "[" * 100_000 + "]" * 100_000,
        '{"data":' * 50_000 + "1" + "}" * 50_000,
        '{"data": {"table": "t"}, "mark": "bar", "x": ' + "[" * 900 + "]" * 900 + "}",
    ):
        with pytest.raises(ChartError) as err:
            parse_chart(text, "charts/deep.vl.json")
        assert err.value.message.startswith("charts/deep.vl.json")
