"""A cleared quick chart forgets the result it showed.

Found by mypy ("None" not callable): a result whose rows the chart fetches when first shown,
then ``clear()``, then the chart shown: it fetched through the cleared (None) pager, and a
worker failed with "'NoneType' object is not callable" in place of the chart's message."""

from __future__ import annotations

from lantide.ui.sql.chart_widget import QuickChartWidget
from lantide.ui.workers import WorkerPool

COLUMNS = [{"name": "day", "type": "INTEGER"}, {"name": "total", "type": "DOUBLE"}]


def test_a_cleared_chart_fetches_nothing_when_shown(qtbot):
    pool = WorkerPool()
    chart = QuickChartWidget(pool)
    qtbot.addWidget(chart)
    fetched = []

    def fetch(offset: int, limit: int):
        fetched.append((offset, limit))
        return [(i, float(i)) for i in range(offset, offset + limit)]

    # hidden: the first rows now, the rest when the chart is first shown
    chart.set_result(COLUMNS, [(0, 0.0), (1, 1.0)], 5_000, fetch)
    chart.clear()
    chart.show()
    qtbot.waitExposed(chart)

    assert pool.running == []  # no fetch started for the result that is gone
    assert chart.canvas.message == "Run the query to chart its result."
    assert pool.wait(5_000)
    assert fetched == []
