"""The explorer's tooltip of a data table says what the reader skipped (the rule lives in
the query layer; the explorer only shows it)."""

from __future__ import annotations


def test_a_table_read_differently_says_so_in_its_tooltip(empty_workspace):
    from lantide.query import QueryService
    from lantide.ui.explorer.explorer_snapshot import table_rows
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    (empty_workspace / "data" / "titled.csv").write_text("Q1 report\nid,v\n1,2\n3,4\n")
    (empty_workspace / "data" / "plain.csv").write_text("id,v\n1,2\n")
    ws = Workspace.open(empty_workspace)
    service = QueryService(ws, QuerySettings())
    try:
        rows = {r["name"]: r for r in table_rows(None, service)["tables"]}
    finally:
        service.close()
        ws.close()
    assert rows["titled"]["description"] == (
        "data/titled.csv is read differently from what it says: line 1 skipped: taken for a "
        "title above the table"
    )
    assert rows["plain"]["description"] is None
