"""The agent runs a remote SQL tab end to end: the real ``openai`` client and the loopback
server drive ``run_sql_tab`` and ``source_run_sql_tab`` on a tab bound to a real private
PostgreSQL server. The agent gets the rows, the QEM's rules hold in the engine's dialect,
and the ledger names the connection, never its password."""

from __future__ import annotations

import pytest

from tests.agent.live import live_session, run
from tests.fakes.openai_server import ToolCall, Turn
from tests.query.conftest import pg_server  # noqa: F401  (the private PostgreSQL)

pytestmark = [pytest.mark.postgres]

REGIONS = (
    "-- lantide: connection=dw\n"
    "SELECT region, count(*)::int AS n FROM public.customers GROUP BY region ORDER BY region"
)
DELETE = "-- lantide: connection=dw\nDELETE FROM sales.invoices"


@pytest.fixture
def dw(open_ws, pg_server, memory_keyring):  # noqa: F811  (the fixture imported above)
    from lantide.query.connections import add_connection

    add_connection(
        open_ws,
        "dw",
        pg_server.connection_string,
        dialect="postgres",
        user=pg_server.user,
        password=pg_server.password,
    )
    open_ws.project("q3-churn").approve_plan()  # executing: every run needs a purpose
    return pg_server


def _returned(events):
    return {e.tool: e for e in events if e.name == "tool_returned"}


def _files_text(root) -> str:
    return "\n".join(
        p.read_text(errors="replace")
        for p in root.rglob("*")
        if p.is_file()
        and p.stat().st_size
        and p.suffix in (".json", ".jsonl", ".md", ".sql", ".log", ".txt", ".toml", "")
    )


def test_the_agent_runs_a_remote_tab_and_the_ledger_names_its_connection(
    session_factory, fake_openai, dw, open_ws
):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("create_sql_tab", {"name": "regions", "sql": REGIONS})]),
        Turn(tool_calls=[ToolCall("run_sql_tab", {"tab": "regions", "purpose": "regions"})]),
        Turn(
            tool_calls=[
                ToolCall("source_run_sql_tab", {"tab": "regions", "purpose": "regions again"})
            ]
        ),
        Turn(tool_calls=[ToolCall("create_sql_tab", {"name": "wipe", "sql": DELETE})]),
        Turn(text="[[QUERY_STEP]] Customers per region.\n[[QUERY_STEP]] The same, again."),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "How many customers per region in the warehouse?")
    fake_openai.assert_done()
    got = _returned(events)
    assert got["create_sql_tab"].result.get("error") is not None  # the DELETE (last call)
    assert got["create_sql_tab"].result["error"].startswith("QUERY_REFUSED")
    ran = got["run_sql_tab"].result
    assert "error" not in ran and ran["row_count"] == 3, ran
    assert [r[:2] for r in ran["preview"]] == [["DE-BY", 100], ["FR-IDF", 100], ["US-CA", 100]]
    steps = s.ledger.steps()
    by_tool = {st["tool"]: st for st in steps}
    assert by_tool["run_sql_tab"]["connection"] == "dw"
    assert by_tool["run_sql_tab"]["cached_table_name"] == "regions"
    assert got["source_run_sql_tab"].result["ran"] == 1  # its step names the connection too
    assert [st["tool"] for st in steps] == ["run_sql_tab", "source_run_sql_tab"]
    for st in steps:
        assert st.get("connection") == "dw", st
    # the password is in the keyring only: not in the ledger, the conversation or any file
    assert dw.password not in s.ledger.path.read_text()
    assert dw.password not in _files_text(open_ws.root)


def test_a_hand_written_dml_remote_tab_is_refused_to_the_agent(
    session_factory, fake_openai, dw, open_ws
):
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    tab_path(Project.load(open_ws.root, "q3-churn"), "wipe").write_text(DELETE + "\n")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_sql_tab", {"tab": "wipe", "purpose": "wipe"})]),
        Turn(text="Refused: a remote tab only reads."),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Run the wipe tab")
    fake_openai.assert_done()
    result = _returned(events)["run_sql_tab"].result
    assert result["error"] == "QUERY_REFUSED_NOT_SELECT", result
    assert not s.ledger.steps()
    assert dw.psql("SELECT count(*) FROM sales.invoices").strip() == "5000"
