"""The agent's show_tables and run_query tools carry what the reader skipped in a file
(the notes of lantide.query.reading_notes), so the model does not take a misread table
for the file."""

from __future__ import annotations

from types import SimpleNamespace


def test_the_agent_tools_carry_the_reading_notes(empty_workspace):
    from lantide.agent.cancel import CancelToken
    from lantide.agent.services import EngineServices
    from lantide.agent.tools import query_tools
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import Settings

    (empty_workspace / "data" / "q.csv").write_text('a;b\n"unterminated,1\n')
    ws = Workspace.open(empty_workspace)
    services = EngineServices(ws, Settings())
    # the two parts of a turn's context these tools use: the engine and the turn's Stop
    ctx = SimpleNamespace(services=services, cancel=CancelToken())
    try:
        listing = query_tools.show_tables(ctx, {})
        notes = next(t for t in listing["tables"] if t["name"] == "q")["notes"]
        assert notes[0] == "line 1 skipped: taken for a title above the table"
        shaped = query_tools.shape_preview(
            services.query().run_query("SELECT * FROM q"), Settings().query.preview_rows
        )
        assert shaped["warnings"][: len(notes)] == [f"data/q.csv: {n}" for n in notes]
    finally:
        services.query().close()
        ws.close()
