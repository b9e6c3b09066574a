"""App state, the active tab payload, knowledge catalog wiring, profiles, tool validation."""

from __future__ import annotations

import json

from lantide.agent.app_state import AppState, OpenTab, SessionFileAppState
from lantide.agent.events import DocumentChanged
from lantide.agent.session import model_clients
from lantide.agent.tools import default_registry
from lantide.workspace.settings import ModelProfile, Settings
from tests.agent.scripted_model import reply
from tests.fakes.openai_server import FakeOpenAIServer


class LiveApp:
    """What the desktop app supplies: live tabs, unsaved text, the focus it owns, what a
    tab does with a changed file."""

    def __init__(self, state: AppState):
        self.state = state
        self.asked: list[str] = []

    def app_state(self) -> AppState:
        return self.state

    def focused_project_name(self) -> str | None:
        return self.state.focused_project

    def focus_project(self, dirname: str | None) -> None:
        self.state.focused_project = dirname

    def tab_state(self, path: str) -> dict:
        self.asked.append(path)
        return {"open": True, "dirty": False, "reloaded": True}


def test_session_file_app_state(open_ws):
    session = open_ws.load_session()
    session.update(
        open_tabs=[
            {"type": "plan", "path": "projects/q3-churn/plan.md", "dirty": True},
            {"type": "sql", "path": "projects/q3-churn/sql/clean_orders.sql"},
            {"nonsense": 1},
        ],
        active_tab=1,
    )
    open_ws.save_session(session)
    state = SessionFileAppState(open_ws).app_state()
    assert state.focused_project == "q3-churn"
    assert [t.type for t in state.open_tabs] == ["plan", "sql"] and state.open_tabs[0].dirty
    assert state.active.path == "projects/q3-churn/sql/clean_orders.sql"


def test_session_file_in_the_desktop_apps_form(open_ws):
    session = open_ws.load_session()
    tabs = [
        {"kind": "plan", "project": "q3-churn", "name": "plan.md", "dirty": False},
        {"kind": "sql", "project": "q3-churn", "name": "clean_orders", "dirty": True},
        {"kind": "table", "project": None, "name": "customers", "dirty": False},
    ]
    session.update(open_tabs=tabs, active_tab=tabs[1])
    open_ws.save_session(session)
    state = SessionFileAppState(open_ws).app_state()
    assert [t.path for t in state.open_tabs] == [
        "projects/q3-churn/plan.md",
        "projects/q3-churn/sql/clean_orders.sql",
        "customers",
    ]
    assert state.active_tab == 1 and state.active.dirty


def test_active_plan_with_unsaved_edits_is_what_the_model_sees(session_factory):
    unsaved = "# Plan: Q3 churn\n\nUNSAVED EDIT by the analyst\n"
    app = LiveApp(
        AppState(
            "q3-churn",
            [
                OpenTab("plan", "projects/q3-churn/plan.md", True, unsaved),
                OpenTab("sql", "projects/q3-churn/sql/clean_orders.sql"),
            ],
            0,
        )
    )
    s = session_factory(app=app)
    prompt = s.prompt_preview(32_000)
    active = prompt.messages[-1]
    assert active["role"] == "user" and active["content"].startswith("# Active tab: plan")
    assert "UNSAVED EDIT by the analyst" in active["content"]
    assert "Open annotations: 3." in active["content"] and "7be204" in active["content"]
    system = prompt.messages[0]["content"]
    assert "- Active tab: plan projects/q3-churn/plan.md, unsaved edits" in system
    assert "- Open tabs: 2" in system
    assert "The active tab has unsaved edits" in system

    app.state.active_tab = 1
    active = s.prompt_preview(32_000).messages[-1]["content"]
    assert "```sql" in active and "NOT c.is_test_account" in active


def test_html_report_section_only_when_one_is_active(session_factory, open_ws):
    project = open_ws.project("q3-churn")
    (project.dir / "report.html").write_text("<h1>Report</h1>")
    app = LiveApp(AppState("q3-churn", [OpenTab("report", "projects/q3-churn/report.html")], 0))
    assert "HTML report" in session_factory(app=app).prompt_preview(32_000).messages[0]["content"]
    plain = LiveApp(AppState("q3-churn", [OpenTab("report", "projects/q3-churn/report.md")], 0))
    assert (
        "HTML report"
        not in session_factory(app=plain).prompt_preview(32_000).messages[0]["content"]
    )


def test_sync_tab_content_asks_the_app_to_reload(session_factory, scripted):
    app = LiveApp(AppState("q3-churn", [], None))
    scripted.add(
        reply(
            "",
            ("sync_tab_content", {"path": "projects/q3-churn/plan.md"}),
            ("sync_tab_content", {"path": "../outside.md"}),
        )
    )
    scripted.add(reply("Refreshed."))
    s = session_factory(app=app)
    events = list(s.run_turn("refresh the plan tab"))
    results = [e.result for e in events if e.name == "tool_returned"]
    assert results[0]["reloaded"] is True and app.asked == ["projects/q3-churn/plan.md"]
    changed = [e.path for e in events if isinstance(e, DocumentChanged)]
    assert changed == ["projects/q3-churn/plan.md"]  # the one announcement the app acts on
    assert results[1]["error"] == "BAD_PATH"


def test_catalog_knowledge_offers_expand(session_factory, scripted, open_ws):
    project = open_ws.project("q3-churn")
    groups = "\n".join(
        f"### Metric {g}\n"
        + "\n".join(
            f"- Metric {g} rule {i}: computed from orders with a long explanation of the filters "
            f"and the denominator used in every report."
            for i in range(12)
        )
        for g in range(8)
    )
    project.knowledge_path.write_text(
        f"# Project knowledge\n\n## Rules\n{groups}\n\n## Info\n- x\n"
    )
    scripted.add(reply("", ("expand_knowledge_catalog", {"heading": "Metric 3"})))
    scripted.add(reply("Read it."))
    s = session_factory()
    prompt = s.prompt_preview(32_000)
    assert "expand_knowledge_catalog" in {t["function"]["name"] for t in prompt.tools}
    events = list(s.run_turn("What is metric 3?"))
    (result,) = [e.result for e in events if e.name == "tool_returned"]
    assert result.get("found") is True, result
    assert result["found"] is True and result["count"] == 12


def test_bad_arguments_come_back_as_tool_errors(session_factory, scripted):
    scripted.add(
        reply(
            "",
            ("set_project_status", {"status": "finished"}),
            ("run_query", {"sql": "SELECT 1", "colour": "red"}),
        )
    )
    scripted.add(reply("I will fix that."))
    s = session_factory()
    events = list(s.run_turn("finish it"))
    errors = [e.result for e in events if e.name == "tool_returned"]
    assert [e["error"] for e in errors] == ["BAD_ARGUMENTS", "BAD_ARGUMENTS"]
    assert "finished" in errors[0]["message"] and "colour" in errors[1]["message"]
    assert json.loads(open_ws_status(s))["status"] == "planning"


def open_ws_status(session) -> str:
    return (session.workspace.root / "projects" / "q3-churn" / "project.json").read_text()


def test_every_tool_schema_is_valid_and_names_match_the_contract():
    import jsonschema

    registry = default_registry()
    for name in registry.names():
        jsonschema.Draft202012Validator.check_schema(registry.get(name).parameters)
    contract = {
        "get_app_context",
        "show_tables",
        "read_schema",
        "validate_query",
        "run_query",
        "run_sql_tab",
        "source_run_sql_tab",
        "create_sql_tab",
        "read_plan",
        "read_report",
        "update_plan",
        "update_report",
        "resolve_annotations",
        "sync_tab_content",
        "focus_project",
        "set_project_status",
        "ask_user",
        "activate_analysis",
        "expand_knowledge_catalog",
        "patch_step",
    }
    assert contract <= set(registry.names())


def test_background_calls_use_the_secondary_profile():
    with FakeOpenAIServer(model="big-model", background_reply="Churn overview") as server:
        settings = Settings()
        settings.upsert_profile(ModelProfile("main", server.base_url, "big-model"))
        settings.upsert_profile(ModelProfile("small", server.base_url, "small-model"))
        settings.secondary_profile = "small"
        primary, secondary = model_clients(settings)
        assert (primary.model, secondary.model) == ("big-model", "small-model")
        assert secondary.complete("system", "user") == "Churn overview"
        assert server.background_requests[0]["model"] == "small-model"
        settings.secondary_profile = None
        primary, secondary = model_clients(settings)
        assert secondary is primary


def test_reorganize_runs_on_the_secondary_model_before_the_first_turn(
    session_factory, scripted, open_ws
):
    project = open_ws.project("q3-churn")
    entries = "\n".join(
        f"- Rule {i}: revenue of segment {i} excludes refunds and test accounts "
        f"in every quarterly figure we publish."
        for i in range(80)
    )
    project.knowledge_path.write_text(f"# Project knowledge\n\n## Rules\n{entries}\n")
    scripted.complete_answer = "not a grouping"
    scripted.add(reply("Hello."))
    s = session_factory()
    events = list(s.run_turn("hi"))
    (reorganized,) = [e for e in events if e.name == "knowledge_reorganized"]
    assert reorganized.scope == "project" and reorganized.applied is False
    assert "Rule 7" in scripted.completions[0][1]  # the file went to the secondary model
    assert "Rule 7: revenue" in project.knowledge_path.read_text()  # refused: left as it is


def test_headless_the_session_file_owns_the_focus(session_factory, scripted, open_ws, monkeypatch):
    """Without the desktop app the focus lives in session.json: the agent reads it there on
    every call (another `lantide` command may have moved it) and a focus change writes it
    once; the next tool of the same turn works in the newly focused project."""
    import lantide.workspace.model as model_module
    from lantide.workspace import atomic

    open_ws.create_project("retention", plan_text="# Plan: retention\n\nRETAINED\n")
    writes = []

    def counting(path, data, *args, **kwargs):
        if path == open_ws.session_path:
            writes.append(data.get("focused_project"))
        return atomic.atomic_write_json(path, data, *args, **kwargs)

    monkeypatch.setattr(model_module, "atomic_write_json", counting)
    scripted.add(reply("", ("focus_project", {"project": "retention"})))
    scripted.add(reply("", ("read_plan", {})))
    scripted.add(reply("Done."))
    events = list(session_factory().run_turn("Switch to retention and read its plan"))
    read = [e for e in events if e.name == "tool_returned" and e.tool == "read_plan"]
    assert "RETAINED" in json.dumps(read[0].result)
    assert writes == ["retention"]
    assert json.loads(open_ws.session_path.read_text())["focused_project"] == "retention"

    # another process moves the focus back: the next turn reads the file again
    session = open_ws.load_session()
    session["focused_project"] = "q3-churn"
    open_ws.save_session(session)
    scripted.add(reply("Back."))
    events = list(session_factory().run_turn("Where are we?"))
    assert events[0].name == "turn_started" and events[0].project == "q3-churn"
