"""The SQL tab's notice about preview cells cut by the query layer."""

from __future__ import annotations

from lantide.ui.sql.sql_runs import hints_notice


def test_the_grid_says_how_to_see_a_whole_cell(sample_workspace):
    """A preview grid says how to get the whole value; a grid paging the cached table
    (whole values) does not warn at all."""
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    ws = Workspace.open(sample_workspace)
    service = QueryService(ws, QuerySettings())
    try:
        preview = service.run_query("SELECT repeat('x', 20000) AS v")
        title, _, _ = hints_notice(preview, paged=False)
        assert "cut at 10,000 characters" in title and "label" in title
        cached = service.run_query("SELECT repeat('x', 20000) AS v", result_label="wide_v")
        assert hints_notice(cached, paged=True) is None
    finally:
        service.close()
        ws.close()


def test_the_grid_filters_the_engines_warnings_by_code_not_wording(sample_workspace):
    """The SQL tab leaves out the preview notes when its grid pages the whole cached
    table, and adds how to see a whole cell, by the warnings' codes: reworded warnings
    (a new wording, a translation) are treated the same."""
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    ws = Workspace.open(sample_workspace)
    service = QueryService(ws, QuerySettings())
    try:
        for sql, label in (
            ("SELECT * FROM orders", "all_orders"),
            ("SELECT repeat('x', 20000) AS v", "wide_v"),
        ):
            result = service.run_query(sql, result_label=label)
            assert result["warnings"] and result["cached_table_name"] == label
            result["warnings"] = [f"Reworded {i}." for i, _ in enumerate(result["warnings"])]
            assert hints_notice(result, paged=True) is None, result["warnings"]
            title, _, _ = hints_notice(result, paged=False)
            assert title.startswith("Reworded 0.")
        # the cut cell's note still says how to get the whole value from the grid
        assert "label" in title
    finally:
        service.close()
        ws.close()
