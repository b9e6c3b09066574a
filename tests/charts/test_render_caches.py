"""The vendored vega's speed patches (packaging/vendor_vega.py) keep charts independent: an
expression or function kept from one chart must not change the next one's SVG, a bad
expression fails every time, and text that needs escaping is still escaped. Real QuickJS,
real vega."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from lantide import charts
from lantide.charts import ChartError, render


def _fresh_engine() -> None:
    render._engine_thread().submit(lambda: setattr(render, "_engine", None)).result()
    render.clear_cache()


def _without_gradient_ids(svg: str) -> str:
    """vega numbers gradients per engine (gradient_0, _1, ...), upstream and patched alike."""
    return re.sub(r"gradient_\d+", "gradient_N", svg)


def _chart(field: str, values: list[float], expression: str) -> dict:
    return {
        "data": {"values": [{"k": f"k{i}", field: v} for i, v in enumerate(values)]},
        "transform": [{"calculate": expression, "as": "shown"}],
        "mark": "bar",
        "encoding": {
            "x": {"field": "k", "type": "nominal"},
            "y": {"field": "shown", "type": "quantitative"},
            "color": {"field": "shown", "type": "quantitative"},
        },
    }


def test_a_chart_drawn_after_others_is_the_chart_drawn_first():
    first = _chart("v", [1, 2, 3], "datum.v * 2")
    second = _chart("v", [30, 10], "datum.v * 2")  # the same expressions, other scales
    third = _chart("w", [5, 6, 7, 8], "datum.w - 1")
    alone = []
    for spec in (first, second, third):
        _fresh_engine()
        alone.append(_without_gradient_ids(charts.render_svg(spec)))
    _fresh_engine()
    in_turn = [_without_gradient_ids(charts.render_svg(s)) for s in (first, second, third)]
    render.clear_cache()
    again = [_without_gradient_ids(charts.render_svg(s)) for s in (third, second, first)][::-1]
    assert in_turn == alone
    assert again == alone


def test_a_bad_expression_fails_each_time_not_only_the_first():
    render.clear_cache()
    bad = _chart("v", [1, 2], "datum.v +* 2")
    messages = []
    for _ in range(2):
        with pytest.raises(ChartError) as err:
            charts.render_svg(bad)
        assert err.value.code == "CHART_RENDER"
        messages.append(str(err.value))
        render.clear_cache()
    assert messages[0] == messages[1] and "Unexpected token *" in messages[0]
    assert charts.render_svg(_chart("v", [1, 2], "datum.v + 2")).startswith("<svg")


def test_text_that_needs_escaping_is_escaped_in_text_and_attributes():
    label = 'A & B <c> "q"\tend'
    spec = {
        "title": label,
        "data": {"values": [{"k": label, "v": 3}, {"k": "plain", "v": 5}]},
        "mark": "bar",
        "encoding": {"x": {"field": "k", "type": "nominal"}, "y": {"field": "v"}},
    }
    render.clear_cache()
    svg = charts.render_svg(spec)
    root = ET.fromstring(svg)  # well-formed: every &, <, > and quote escaped
    texts = [el.text for el in root.iter() if el.text]
    assert label.replace("\t", " ") in texts or label in texts
    attributes = [value for el in root.iter() for value in el.attrib.values()]
    assert any('A & B <c> "q"' in value for value in attributes)
    assert "&#x9;" in svg or "\t" not in label  # a tab in an attribute stays a character
