"""The quick chart of a result whose category repeats (11 regions on 33 rows, one per
quarter): bars of a region side by side, coloured by the quarter, not 33 bars with the
region written 33 times; without such a column the rows of a region are summed. Labels
that do not fit are thinned and slanted, never drawn over each other."""

from __future__ import annotations

from lantide.ui.sql.chart_canvas import BAR, ChartCanvas, label_layout
from lantide.ui.sql.chart_widget import QuickChartWidget, chart_data

REGIONS = [f"region {chr(65 + i)}" for i in range(11)]
COLUMNS = [
    {"name": "region", "type": "VARCHAR"},
    {"name": "quarter", "type": "VARCHAR"},
    {"name": "revenue", "type": "DOUBLE"},
]
ROWS = [(r, q, float(10 * i + n)) for i, r in enumerate(REGIONS) for n, q in enumerate("123")]


def test_repeated_categories_are_coloured_by_the_column_that_tells_them_apart():
    data = chart_data(BAR, COLUMNS, ROWS, 0, 2)
    assert data.x == REGIONS  # 11 categories, each labelled once
    assert data.series == ["1", "2", "3"] and data.series_label == "quarter"
    assert len(data.y) == 33 and data.bar_group[:3] == [0, 0, 0]
    assert data.bar_series[:3] == [0, 1, 2] and data.y[:3] == [0.0, 1.0, 2.0]


def test_without_such_a_column_the_rows_of_a_category_are_summed():
    columns = [COLUMNS[0], COLUMNS[2]]
    rows = [(r, v) for r, _q, v in ROWS]
    data = chart_data(BAR, columns, rows, 0, 1)
    assert data.x == REGIONS and data.series == []
    assert data.y[0] == 0.0 + 1.0 + 2.0 and data.y[10] == 100.0 + 101.0 + 102.0
    assert "33 rows summed into 11 region values" in data.note


def test_the_grouped_chart_draws_and_saves_as_it_shows(qtbot):
    from lantide.ui.workers import WorkerPool

    widget = QuickChartWidget(WorkerPool())
    qtbot.addWidget(widget)
    widget.resize(520, 300)
    widget.show()
    widget.set_result(COLUMNS, ROWS, len(ROWS), table="revenue_by_region")
    assert widget.kind_box.currentData() == BAR
    canvas: ChartCanvas = widget.canvas
    canvas.grab()  # paints
    tips = canvas.hit_texts()
    assert len(tips) == 33 and tips[0] == "region A, quarter 1: 0"
    spec = widget.spec()
    assert spec["encoding"]["color"] == {"field": "quarter", "type": "nominal"}
    assert spec["encoding"]["xOffset"]["field"] == "quarter"
    assert spec["encoding"]["y"]["aggregate"] == "sum"


def test_labels_that_do_not_fit_are_slanted_and_thinned():
    assert label_layout(widest=40, slot=60, line_height=15) == (False, 1)  # side by side
    assert label_layout(widest=60, slot=40, line_height=15) == (True, 1)  # slanted
    slanted, every = label_layout(widest=60, slot=12, line_height=15)  # 33 bars in 400 px
    assert slanted and every == 3 and every * 12 >= 15 * 2.2
    assert label_layout(widest=80, slot=30, line_height=15)[1] * 30 >= 33


def test_a_chart_without_room_says_so(qtbot):
    canvas = ChartCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(400, 70)  # as at 1024x700 with the editor open: no room for a plot
    canvas.set_data(chart_data(BAR, COLUMNS, ROWS, 0, 2))
    canvas.show()
    image = canvas.grab().toImage()
    background = image.pixelColor(2, 2)
    drawn = sum(
        image.pixelColor(x, y) != background
        for x in range(0, image.width(), 2)
        for y in range(0, image.height(), 2)
    )
    assert drawn > 20  # the sentence, not an empty box
