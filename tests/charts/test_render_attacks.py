"""The renderer under attack: a spec that would run for ever, many threads at once, and a
fresh engine after a stopped one. Real QuickJS, real vega."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from lantide import charts
from lantide.charts import ChartError, render


def _bars(label: str) -> dict:
    return {
        "data": {"values": [{"k": label, "v": 3}, {"k": "other", "v": 5}]},
        "mark": "bar",
        "encoding": {"x": {"field": "k", "type": "nominal"}, "y": {"field": "v"}},
    }


@pytest.mark.slow
def test_a_spec_that_never_ends_is_stopped_and_the_next_chart_draws(monkeypatch):
    monkeypatch.setattr(render, "TIME_LIMIT_SECONDS", 2)
    render._engine_thread().submit(lambda: setattr(render, "_engine", None)).result()
    endless = {
        "data": {"sequence": {"start": 0, "stop": 200_000_000, "as": "n"}},
        "mark": "point",
        "encoding": {"x": {"field": "n", "type": "quantitative"}},
    }
    with pytest.raises(ChartError) as err:
        charts.render_svg(endless)
    assert err.value.code == "CHART_TOO_BIG"
    assert "fewer rows" in err.value.hint
    assert "after-stop" in charts.render_svg(_bars("after-stop"))  # a fresh engine


def test_many_threads_at_once_each_get_their_own_chart():
    labels = [f"thread-{i}" for i in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        svgs = list(pool.map(lambda label: charts.render_svg(_bars(label)), labels))
    for label, svg in zip(labels, svgs, strict=True):
        assert svg.startswith("<svg") and label in svg
        assert not any(other in svg for other in labels if other != label)
