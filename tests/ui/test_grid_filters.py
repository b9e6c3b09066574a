"""Filtering the result grid by column: the popup sends what was typed, DuckDB counts and
pages the rows passing (a 1.5-million-row cached table), the sort composes with the filter,
a bad value is refused with what to type, and the filter bar takes filters away."""

from __future__ import annotations

from PySide6.QtCore import Qt

from lantide.ui.sql.result_model import ROLE_FILTERED
from tests.ui.conftest_data import BIG_ROWS
from tests.ui.test_grid_sorting import rows_at
from tests.ui.test_sql_tab import make_tab, run_and_wait

NAME, AMOUNT, DAY, BUCKET = 1, 2, 3, 4
# name = 'customer ' || (i % 5000): 'customer 42' is in 42, 420-429, 4200-4299 (111 of 5000)
CUSTOMER_42 = 111 * BIG_ROWS // 5000


def filter_by_popup(qtbot, panel, column: int, op: str, **typed) -> None:
    panel.edit_filter(column)
    popup = panel.filter_popup
    assert popup is not None and popup.isVisible()
    popup.op.setCurrentIndex(popup.op.findData(op))
    for field, text in typed.items():
        getattr(popup, field).setText(text)
    qtbot.keyClick(popup, Qt.Key.Key_Return)


def test_a_text_filter_counts_and_pages_in_duckdb_and_composes_with_the_sort(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    panel, grid, model = tab.result, tab.result.grid, tab.result.model
    counts: list[int] = []
    model.sig_filters_changed.connect(lambda _filters, n: counts.append(n))
    filter_by_popup(qtbot, panel, NAME, "contains", value="CUSTOMER 42")
    assert model.rowCount() == BIG_ROWS  # the UI thread did not wait for DuckDB
    qtbot.waitUntil(lambda: model.rowCount() == CUSTOMER_42, timeout=30_000)
    # the first page showed first (count unknown: -1), then the count came
    assert counts == [-1, CUSTOMER_42] and not model.counting
    assert model.filters == [{"column": "name", "op": "contains", "value": "CUSTOMER 42"}]
    assert model.headerData(NAME, Qt.Orientation.Horizontal, ROLE_FILTERED)
    assert not model.headerData(AMOUNT, Qt.Orientation.Horizontal, ROLE_FILTERED)
    assert panel.filter_bar.isVisible()
    assert panel.filter_bar.chip_texts == ["name contains “CUSTOMER 42”"]
    assert f"{CUSTOMER_42:,} of {BIG_ROWS:,} rows" in panel.filter_bar.label.text()
    assert f"{CUSTOMER_42:,} match 1 filter" in panel.summary.text()
    for first in (0, 20_000, CUSTOMER_42 - 5):  # deep pages of the filtered result
        names = [r[NAME] for r in rows_at(qtbot, grid, model, first)]
        assert all(n.startswith("customer 42") for n in names), names
    # the sort keeps the filter; the filter keeps the sort
    grid.sort_by(AMOUNT, Qt.SortOrder.DescendingOrder)
    assert model.rowCount() == CUSTOMER_42
    top = rows_at(qtbot, grid, model, 0)
    assert all(r[NAME].startswith("customer 42") for r in top)
    # i % 1000 of those: 42, 420-429, 200-299; the largest amount is 429 * 1.25
    assert [r[AMOUNT] for r in top] == ["536.25"] * 5
    filter_by_popup(qtbot, panel, BUCKET, "null")
    qtbot.waitUntil(lambda: len(model.filters) == 2 and not model.counting, timeout=30_000)
    assert model.order_by == [("amount", "desc")]
    rows = rows_at(qtbot, grid, model, 0, 3)
    assert [r[BUCKET] for r in rows] == ["NULL"] * 3 and all("42" in r[NAME] for r in rows)
    assert model.rowCount() == 11 * BIG_ROWS // 5000  # i % 10 == 0: 420, 4200, ... 4290

    # a chip of the filter bar takes its filter away; Clear filters takes all
    chips = panel.filter_bar.findChildren(type(panel.filter_bar.clear_button), "FilterChip")
    assert len(chips) == 2
    chips[0].click()
    qtbot.waitUntil(lambda: len(model.filters) == 1, timeout=30_000)
    assert model.filters[0]["column"] == "bucket"
    panel.filter_bar.clear_button.click()
    qtbot.waitUntil(lambda: model.rowCount() == BIG_ROWS, timeout=30_000)
    assert not model.filters and not panel.filter_bar.isVisible()
    assert "match" not in panel.summary.text()


def test_a_bad_value_is_refused_and_the_rows_shown_stay(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    panel, model = tab.result, tab.result.model
    filter_by_popup(qtbot, panel, DAY, "range", low="2024-12-01", high="")
    qtbot.waitUntil(lambda: bool(model.filters) and not model.counting, timeout=30_000)
    expected = sum(1 for d in range(365) if d >= 335) * (BIG_ROWS // 365) + sum(
        1 for i in range(BIG_ROWS - BIG_ROWS % 365, BIG_ROWS) if i % 365 >= 335
    )
    assert model.rowCount() == expected
    with qtbot.waitSignal(panel.sig_problem_reported, timeout=30_000) as problem:
        filter_by_popup(qtbot, panel, AMOUNT, "range", low="3,5")
    assert "Filter not applied" in problem.args[0] and "not a number" in problem.args[0]
    assert [f["column"] for f in model.filters] == ["day"] and model.rowCount() == expected
    assert rows_at(qtbot, panel.grid, model, 0, 3)[0][DAY] >= "2024-12-01"


def test_a_newer_filter_cancels_the_older_and_its_late_count_is_dropped(
    qtbot, app_services, monkeypatch
):
    import threading

    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    panel, model = tab.result, tab.result.model
    query, let_go = app_services.query, threading.Event()
    count_filtered = query.count_filtered

    def held(relation, filters=None):  # the first filter's count stays out until let go
        if filters and filters[0].get("value") == "customer 1":
            assert let_go.wait(60)
        return count_filtered(relation, filters)

    monkeypatch.setattr(query, "count_filtered", held)

    def counting() -> list:
        return [w for w in app_services.workers.running if w.name.startswith("Count")]

    try:
        panel.apply_filters([{"column": "name", "op": "contains", "value": "customer 1"}])
        qtbot.waitUntil(lambda: bool(counting()), timeout=30_000)
        first = counting()[0]
        assert model.counting  # its first page shows, its count is on the way
        panel.apply_filters([{"column": "name", "op": "contains", "value": "customer 42"}])
        assert first.context.cancelled  # the newer filter cancelled the older one's count
        qtbot.waitUntil(lambda: model.rowCount() == CUSTOMER_42, timeout=30_000)
    finally:
        let_go.set()
    qtbot.waitUntil(first.done.is_set, timeout=30_000)
    qtbot.wait(200)  # the late answer, had it not been dropped, would land now
    assert model.rowCount() == CUSTOMER_42 and not model.counting
    assert model.filters[0]["value"] == "customer 42"
