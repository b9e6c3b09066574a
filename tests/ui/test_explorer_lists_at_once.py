"""The explorer lists a new SQL tab from the moment it opens and its file once saved, and
chart files as soon as they are written (by the app, the agent, another program). Before,
the app's own writes were skipped by the watcher and charts were not listed at all."""

from __future__ import annotations

from lantide.ui.explorer.explorer import ROLE_NODE
from lantide.ui.tree_items import child_items, top_level_items

SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
    "data": {"table": "customers"},
    "mark": "bar",
    "encoding": {"x": {"field": "region", "type": "nominal"}},
}


def _project_children(explorer, project: str = "q3-churn") -> dict[str, str]:
    """label -> detail of the project's rows."""
    for group in top_level_items(explorer.tree):
        for item in child_items(group):
            if (item.data(0, ROLE_NODE) or {}).get("project") == project and (
                item.data(0, ROLE_NODE) or {}
            ).get("kind") == "project":
                return {c.text(0): c.text(1) for c in child_items(item)}
    return {}


def test_new_tabs_and_charts_are_listed_at_once(main_window, qtbot, sample_workspace):
    from lantide import charts

    window = main_window
    explorer = window.explorer
    tab = window.open_tab("sql", "q3-churn", "revenue_today")  # new: no file yet
    qtbot.waitUntil(lambda: not tab.editor.isReadOnly(), timeout=15_000)
    qtbot.waitUntil(
        lambda: _project_children(explorer).get("revenue_today.sql") == "not saved",
        timeout=3_000,
    )
    tab.editor.insertPlainText("SELECT 1 AS one")
    assert tab.save()
    qtbot.waitUntil(
        lambda: _project_children(explorer).get("revenue_today.sql") == "", timeout=3_000
    )
    # a chart the app saves (the quick chart's Save as chart file notifies its path)
    project = window.services.workspace.project("q3-churn")
    path = charts.write_chart(project, "customers by region", SPEC)
    window.services.notify_paths_changed([path], "created")
    qtbot.waitUntil(
        lambda: "customers by region.vl.json" in _project_children(explorer), timeout=3_000
    )
    # one the agent writes: its tool's return re-reads the listing
    charts.write_chart(project, "orders", SPEC)
    window.services.notify_listing_changed()
    qtbot.waitUntil(lambda: "orders.vl.json" in _project_children(explorer), timeout=3_000)
