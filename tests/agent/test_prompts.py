"""The prompt layers: every template renders, the order is stable-first, tools follow state."""

from __future__ import annotations

import json

import pytest

from lantide.templates import list_templates, render_prompt
from lantide.tokens import count_tokens

STEP = {
    "step_id": "9f2c41d07a11",
    "tool": "run_query",
    "purpose": "Q2 active customers",
    "row_count": 1412,
    "cached_table_name": "q2_active",
    "summary": "1,412 active in Q2",
    "summary_status": "parsed",
}
PROJECT = {"name": "Q3 churn", "plan": "plan.md", "report": "report.md", "status": "planning"}
STATE = dict(
    project=PROJECT,
    project_delivered=False,
    open_annotations=3,
    plan_approval={"approved": True, "at": "2026-11-30T10:00:00Z", "changed_since_approval": True},
    analysis_active=False,
    html_report_active=True,
    active_tab_dirty=True,
    answered_question="Which denominator?",
    purpose_max_chars=40,
    edit_review={
        "decisions": [
            {
                "edit": "e1a2b3c4",
                "document": "projects/q3/report.md",
                "action": "rejected",
                "hunks": [1],
            }
        ],
        "pending": ["e5d6e7f8"],
    },
)
# Templates of the agent and the context each receives in production.
CONTEXTS = {
    "core.md.j2": dict(
        preview_rows=200, purpose_max_chars=40, external_databases=True, project_argument=True
    ),
    "state_no_project.md.j2": dict(project_count=3),
    "state_planning.md.j2": STATE,
    "state_executing.md.j2": {**STATE, "analysis_active": True, "project_delivered": True},
    "sections/conditional.md.j2": STATE,
    "context_summary.md.j2": dict(
        now="2026-11-30 10:15 (UTC+1)",
        workspace="Sample workspace",
        project=PROJECT,
        active_tab={"type": "plan", "path": "projects/q3-churn/plan.md", "dirty": True},
        open_tabs=4,
        cached_tables=12,
        external_databases=["warehouse"],
        analysis={"turn": 3, "project": "q3-churn", "reason": "price vs quantity"},
        past_steps=57,
        outside_agents=[
            {"name": "Claude Code", "mode": "execute", "calls": 12, "queries": 4, "minutes_ago": 3}
        ],
    ),
    "recent_steps.md.j2": dict(
        steps=[
            STEP,
            {
                **STEP,
                "step_id": "s2",
                "summary": None,
                "summary_status": "missing",
                "purpose": None,
            },
        ]
    ),
    "active_tab.md.j2": dict(
        tab={"type": "plan", "path": "projects/q3-churn/plan.md", "dirty": False},
        document={
            "text": '# Plan\n<mark data-annotation-id="a1">x</mark>',
            "open_annotation_count": 1,
            "annotation_summary": [{"id": "a1", "quote": "x", "comment": "why?"}],
        },
        sql=None,
        table=None,
        text="",
        truncated=True,
    ),
    "history_note.md.j2": dict(dropped_turns=4, events=["turn 2: focused project q3-churn"]),
    "notes/iteration_limit.md.j2": dict(iterations=12, steps=["s1", "s2"], last_tool="run_query"),
    "notes/repeated_failure.md.j2": dict(
        reason="the same call kept failing",
        tool="run_query",
        message="DROP is not allowed",
        hint="Use SELECT",
    ),
    "notes/repeated_call.md.j2": dict(tool="read_schema", times=4),
    "notes/context_full.md.j2": dict(
        window=8192, source="endpoint", tokens=6400, reserve=2048, steps=["s1"]
    ),
    "notes/result_check.md.j2": dict(code="JOIN_FAN_OUT"),
    "notes/reflection_failed.md.j2": dict(problems=["the denominator counts test accounts"]),
    "notes/reflection_refused.md.j2": {},
    "notes/report_rules.md.j2": {},
    "notes/edit_pending.md.j2": dict(path="projects/q3/report.md", reading=False),
    "notes/reflection_unresolved.md.j2": dict(attempts=2, problems=["grain: per order"]),
    "notes/token_budget.md.j2": dict(used=201_345, budget=200_000),
    "notes/report_evidence.md.j2": {},
    "notes/step_summaries.md.j2": dict(
        problems=[
            dict(problem="mismatch", step_id="s2", numbers=["120,000"], values=["2,000"]),
            dict(problem="unknown_step", step_id="s9", line="[[QUERY_STEP]] s9: x — 5"),
            dict(problem="duplicate", step_id="s2", line="[[QUERY_STEP]] s2: again — 2"),
            dict(problem="unpaired", line="[[QUERY_STEP]] churn — 4%", why="no step waited"),
        ]
    ),
    "reflection/checklist.md.j2": dict(
        subject="final_answer",
        items=["denominator", "grain", "filters", "checks", "traced"],
        unresolved=True,
    ),
    "reflection/input.md.j2": dict(
        subject="update_report",
        question="How many churned?",
        plan="# Plan\nChurned: …",
        plan_cut=True,
        knowledge="## Knowledge\n- Exclude test accounts.",
        steps=[
            {
                **STEP,
                "sql": "SELECT 1",
                "columns": ["n"],
                "checks": [{"code": "JOIN_FANOUT", "severity": "error", "message": "3.1x"}],
            }
        ],
        unresolved=[
            {"step_id": "s1", "code": "JOIN_FANOUT", "message": "3.1x", "evidence": "ratio 3.1"}
        ],
        draft="412 churned (s1).",
        draft_cut=False,
    ),
    "background/conversation_title.md.j2": {},
    # sent by the desktop app's Resolve (N) button as the analyst's message
    "requests/resolve_annotations.md.j2": dict(
        count=3,
        document_label="Plan",
        project="Q3 churn",
        document="plan",
        path="projects/q3-churn/plan.md",
    ),
    # Lantide's own consent question and its buttons (lantide.agent.consent)
    "consent/question.md.j2": dict(
        project="Q3 churn",
        analyses=["a correlation"],
        functions=["corr()"],
        reason="Is price related to quantity?",
    ),
    "consent/choices.md.j2": {},
    "background/conversation_title_input.md.j2": dict(
        user_message="Which regions churned?", assistant_message="DE-BY, then IT-25."
    ),
}
# The MCP server's tool descriptions and playbook (lantide.mcp.extra_tools renders them so).
MCP_CONTEXT = dict(
    purpose_max_chars=40,
    show_tables_limit=40,
    modes=[
        {"name": "Observe", "tools": ["run_query"]},
        {"name": "Execute", "tools": ["run_sql_tab"]},
    ],
)
CONTEXTS.update({t: MCP_CONTEXT for t in list_templates() if t.startswith("mcp/")})
# Templates owned by other layers, rendered by their own tests.
OTHER_OWNERS = ("knowledge.md.j2", "background/knowledge_", "patch_guidance.md.j2")


@pytest.mark.parametrize("name", sorted(CONTEXTS))
def test_every_agent_template_renders_with_a_realistic_context(name):
    text = render_prompt(name, **CONTEXTS[name])
    assert text.strip() and "\n\n\n" not in text
    assert "{{" not in text and "{%" not in text


def test_every_tool_description_is_a_prompt_file():
    from lantide.agent.tools import default_registry
    from lantide.agent.tools.registry import tool_description

    names = default_registry().names()
    assert sorted(f"tools/{n}.md.j2" for n in names) == [
        t for t in list_templates() if t.startswith("tools/")
    ]
    core = render_prompt("core.md.j2", **CONTEXTS["core.md.j2"])
    for name in names:
        text = tool_description(name)
        assert len(text) < 400 and "{" not in text
        # a tool sent without a description is described by the core prompt instead
        assert text or name in core, f"{name} has no description and the core omits it"
    assert "at most 40 characters" in core


def test_every_template_has_an_owner_that_renders_it():
    unowned = [
        t
        for t in list_templates()
        if t not in CONTEXTS and not t.startswith(OTHER_OWNERS + ("tools/",))
    ]
    assert unowned == []


def test_a_missing_variable_is_an_error():
    from lantide.templates import PromptTemplateError

    with pytest.raises(PromptTemplateError):
        render_prompt("state_executing.md.j2", project=PROJECT)


def test_core_carries_the_rules_and_no_state_layer_lists_tools():
    core = render_prompt("core.md.j2", **CONTEXTS["core.md.j2"])
    for rule in (
        "denominator",
        "smallest verifiable SQL",
        "exploratory",
        "never instructions",
        "[[QUERY_STEP]]",
        "COMPLEXITY_SPLIT_RECOMMENDED",
        "ask_user",
    ):
        assert rule in core
    from lantide.agent.tools import default_registry

    names = default_registry().names()
    for state in ("state_no_project.md.j2", "state_planning.md.j2", "state_executing.md.j2"):
        text = render_prompt(state, **CONTEXTS[state])
        assert "Query Execution Model" not in text  # the QEM lives in the core only
        listed = [n for n in names if n in text]
        assert listed == [], f"{state} names tools {listed}"


def test_prompt_assembly_orders_layers_and_filters_tools(session_factory, open_ws):
    session = session_factory()
    prompt = session.prompt_preview(context_window=32_000)
    assert [layer.name for layer in prompt.layers] == [
        "core",
        "state",
        "knowledge",
        "tools",
        "recent_steps",
        "state_notes",
        "summary",
        "history",
        "active_tab",
    ]
    system = prompt.messages[0]["content"]
    order = [
        system.index(marker)
        for marker in (
            "# Role",
            "# State: planning",
            "## Knowledge the analyst approved",
            "# Context summary",
        )
    ]
    assert order == sorted(order)
    assert prompt.layer("tools").tokens == count_tokens(json.dumps(prompt.tools))
    planning = {t["function"]["name"] for t in prompt.tools}
    assert {"read_plan", "resolve_annotations", "update_plan", "run_query"} <= planning
    assert not planning & {
        "update_report",
        "source_run_sql_tab",
        "activate_analysis",
        "expand_knowledge_catalog",
    }

    open_ws.project("q3-churn").approve_plan()
    executing = {t["function"]["name"] for t in session.prompt_preview(32_000).tools}
    assert {"update_report", "source_run_sql_tab"} <= executing
    # offered in executing, sent only in the turn of a yes to consent (test_sent_tools.py)
    ctx = session.tool_context()
    assert "activate_analysis" in {t.name for t in session.registry.offered("executing", ctx)}
    assert "activate_analysis" not in executing

    open_ws.focus_project(None)
    prompt = session.prompt_preview(32_000)
    assert prompt.state == "no_project"
    none = {t["function"]["name"] for t in prompt.tools}
    assert "read_plan" not in none and {"focus_project", "show_tables", "run_query"} <= none


def test_the_stable_prefix_is_identical_across_iterations(session_factory):
    session = session_factory()
    first = session.prompt_preview(32_000).messages[0]["content"]
    second = session.prompt_preview(32_000).messages[0]["content"]
    stable = first.index("# Context summary")
    assert first[:stable] == second[:stable]
