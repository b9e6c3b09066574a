"""The seam between a chat turn and the app (issue 14, items 3 and 4), with the real
agent loop, the real ``openai`` client against the scripted loopback server, the real
query service and real files:

- the focused project has one owner, the app state the bridge passes in: the agent reads
  it (not a stale ``session.json``), and an agent's focus change writes the file once;
- an agent's document edit reaches the UI once;
- a tool declares what it touches, so a new tool that touches cached tables refreshes the
  explorer without a list in the UI.
"""

from __future__ import annotations

import pytest

from lantide.agent.events import TOUCHES_TABLES, TurnStarted
from lantide.agent.tools import default_registry
from lantide.agent.tools.registry import Tool, ToolRegistry, params
from lantide.ui.chat.chat_bridge import AgentTurnBridge
from lantide.workspace import atomic
from tests.conftest import set_agent_edits
from tests.fakes.fixtures import background_answer
from tests.fakes.openai_server import FakeOpenAIServer, ToolCall, Turn


@pytest.fixture
def model(monkeypatch):
    with FakeOpenAIServer(background_reply=background_answer) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


def run_turn(qtbot, bridge: AgentTurnBridge, text: str) -> list:
    events = []
    bridge.sig_event_received.connect(events.append)
    failed = []
    bridge.sig_turn_failed.connect(failed.append)
    with qtbot.waitSignal(
        bridge.sig_turn_running, timeout=30_000, check_params_cb=lambda running: running is False
    ):
        assert bridge.send(text)
    assert not failed, failed
    return events


@pytest.fixture
def bridge_on(qtbot):
    made = []

    def make(services, **kwargs) -> AgentTurnBridge:
        bridge = AgentTurnBridge(services, **kwargs)
        made.append(bridge)
        return bridge

    yield make
    for bridge in made:
        bridge.close()


def count_session_writes(monkeypatch, workspace) -> list:
    """Every atomic write of ``workspace``'s session.json, in order (the writer wrapped)."""
    writes = []
    real = atomic.atomic_write_json

    def counting(path, data, *args, **kwargs):
        if str(path) == str(workspace.session_path):
            writes.append(data.get("focused_project"))
        return real(path, data, *args, **kwargs)

    import lantide.workspace.model as model_module

    monkeypatch.setattr(model_module, "atomic_write_json", counting)
    return writes


def test_an_agent_focus_change_writes_session_json_once(
    qtbot, shell_services, bridge_on, model, monkeypatch
):
    services = shell_services()
    services.workspace.create_project("retention")
    writes = count_session_writes(monkeypatch, services.workspace)
    focused = []
    services.sig_project_focused.connect(focused.append)
    # a project that does not exist first: refused, nothing written, the focus stays
    model.script(
        Turn(tool_calls=[ToolCall("focus_project", {"project": "no-such"})]),
        Turn(tool_calls=[ToolCall("focus_project", {"project": "retention"})]),
        Turn(text="Focused on retention."),
    )
    events = run_turn(qtbot, bridge_on(services), "Work on retention.")
    assert [
        e.ok for e in events if getattr(e, "tool", None) == "focus_project" and hasattr(e, "ok")
    ] == [False, True]
    # whatever is still pending is written now, on this thread: the count is final
    services.flush_session(wait=True)
    assert writes == ["retention"]
    assert focused == ["retention"]  # the window heard of it once
    assert services.focused_project_name() == "retention"
    assert services.workspace.load_session()["focused_project"] == "retention"


def test_the_agent_reads_the_focus_the_app_holds_not_a_stale_session_file(
    qtbot, shell_services, bridge_on, model
):
    services = shell_services()
    services.workspace.create_project("retention", plan_text="# Plan: retention\n\nRETAINED\n")
    services.focus_project("retention")
    services.flush_session(wait=True)
    # another process (a `lantide` command) leaves session.json naming the old project
    session = services.workspace.load_session()
    session["focused_project"] = "q3-churn"
    services.workspace.save_session(session)

    model.script(Turn(tool_calls=[ToolCall("read_plan", {})]), Turn(text="Read it."))
    events = run_turn(qtbot, bridge_on(services), "What does the plan say?")
    started = next(e for e in events if isinstance(e, TurnStarted))
    assert started.project == "retention"
    tool_result = model.chat_requests[1]["messages"][-1]
    assert tool_result["role"] == "tool" and "RETAINED" in tool_result["content"]


def test_an_agent_document_edit_reaches_the_ui_once(qtbot, shell_services, bridge_on, model):
    services = shell_services()
    plan = services.workspace.project("q3-churn").document_path("plan")
    before = plan.read_text(encoding="utf-8")
    announced, proposed = [], []
    services.sig_files_changed.connect(
        lambda changes: announced.extend(c for c in changes if c.path == plan)
    )
    services.sig_edit_proposed.connect(lambda path, edit_id: proposed.append((path, edit_id)))
    text = before + "\n## Added by the agent\n"
    bridge = bridge_on(services)
    model.script(Turn(tool_calls=[ToolCall("update_plan", {"content": text})]), Turn(text="Added."))
    run_turn(qtbot, bridge, "Add a section.")
    # the turn's end is queued after every signal the turn sent: the counts are final
    assert plan.read_text(encoding="utf-8") == before  # pending the analyst's review
    assert [p for p, _ in proposed] == [str(plan)] and announced == []
    # written at once (agent_edits: apply): the change is announced once, nothing proposed
    set_agent_edits(services.workspace.root, "apply")
    model.script(Turn(tool_calls=[ToolCall("update_plan", {"content": text})]), Turn(text="Added."))
    run_turn(qtbot, bridge, "Add a section.")
    assert plan.read_text(encoding="utf-8") == text
    assert len(announced) == 1 and len(proposed) == 1


class _Tool(Tool):
    @property
    def description(self) -> str:  # no prompt file for a tool made in a test
        return "Makes a cached table."


def test_a_new_tool_that_touches_tables_refreshes_the_explorer(
    qtbot, shell_services, bridge_on, model
):
    services = shell_services()

    def make_table(ctx, args):
        ctx.services.query().run_query("SELECT 1 AS one", result_label="made_by_tool")
        return {"made": "made_by_tool"}

    base = default_registry()
    registry = ToolRegistry(
        [base.get(n) for n in base.names()]
        + [_Tool("make_table", params(), make_table, touches=frozenset({TOUCHES_TABLES}))]
    )
    refreshed = []
    services.sig_tables_changed.connect(lambda: refreshed.append(True))
    model.script(Turn(tool_calls=[ToolCall("make_table", {})]), Turn(text="Made."))
    run_turn(qtbot, bridge_on(services, registry=registry), "Make a table.")
    assert refreshed == [True]


def test_a_tool_that_touches_nothing_does_not_refresh_the_explorer(
    qtbot, shell_services, bridge_on, model
):
    services = shell_services()
    refreshed, returned = [], []
    services.sig_tables_changed.connect(lambda: refreshed.append(True))
    model.script(Turn(tool_calls=[ToolCall("read_plan", {})]), Turn(text="Read."))
    events = run_turn(qtbot, bridge_on(services), "Read the plan.")
    returned = [e for e in events if getattr(e, "tool", None) == "read_plan"]
    assert returned and returned[-1].ok and returned[-1].touches == ()
    assert refreshed == []  # the turn ended after every signal it sent
