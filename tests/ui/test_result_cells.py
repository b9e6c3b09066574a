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
