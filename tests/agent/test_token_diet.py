"""The token diet: the tool schemas as sent, and a prompt whose start stays identical from
one request to the next (what servers' prefix caches reuse)."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from lantide.agent.tools import default_registry
from lantide.tokens import count_tokens
from tests.agent.scripted_model import reply

PLANNING_TOOLS_MAX_TOKENS = 1_200


def wire_json(value) -> str:
    """JSON as the openai SDK puts it in the request body (compact separators)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def issue_json(value) -> str:
    """The issue's measure: ``json.dumps`` with its default separators (2,072 tokens for
    the 19 Planning tools before the diet)."""
    return json.dumps(value)


def test_planning_tool_schemas_fit_the_token_budget(session_factory):
    prompt = session_factory().prompt_preview(context_window=32_000)
    assert prompt.state == "planning"
    names = {t["function"]["name"] for t in prompt.tools}
    # the diet is in the schemas, not in offering fewer tools
    assert {
        "read_plan",
        "update_plan",
        "resolve_annotations",
        "run_query",
        "run_sql_tab",
        "create_sql_tab",
        "ask_user",
        "patch_step",
        "show_tables",
        "read_schema",
    } <= names
    # the 19 of the issue's count and profile_columns, less focus_project and
    # sync_tab_content, sent only when they can act (one project, no tab: test_sent_tools.py)
    assert len(names) == 18 and not names & {"focus_project", "sync_tab_content"}
    # the budget holds for every tool the state offers, each with every argument (as with
    # several projects and open tabs), not only for what this workspace is sent
    session = session_factory()
    ctx = session.tool_context()
    offered = [
        t.schema(external_databases=False) for t in session.registry.offered("planning", ctx)
    ]
    assert len(offered) == 20
    for tools in (prompt.tools, offered):
        sent, spaced = count_tokens(wire_json(tools)), count_tokens(issue_json(tools))
        assert sent <= PLANNING_TOOLS_MAX_TOKENS, f"{len(tools)} tools: {sent} tokens as sent"
        assert spaced <= PLANNING_TOOLS_MAX_TOKENS, f"{len(tools)} tools: {spaced} tokens spaced"


def _shape(schema):
    """Argument names, required lists, enums and types: the meaning a schema carries."""
    if isinstance(schema, dict):
        keep = {
            k: _shape(v)
            for k, v in schema.items()
            if k in ("type", "properties", "required", "enum", "items") and v != []
        }
        if "properties" in schema:
            keep["properties"] = {name: _shape(p) for name, p in schema["properties"].items()}
        return keep
    if isinstance(schema, list):
        return [_shape(x) for x in schema]
    return schema


def test_sent_schemas_keep_every_argument_type_enum_and_required():
    for tool in (default_registry().get(n) for n in default_registry().names()):
        sent = tool.schema()["function"]
        # arguments a result names when they matter (on_demand) are left out of what is sent
        full = {
            **tool.parameters,
            "properties": {
                k: v
                for k, v in tool.parameters.get("properties", {}).items()
                if k not in tool.on_demand
            },
        }
        if full.get("properties"):
            assert _shape(sent["parameters"]) == _shape(full), tool.name
        else:
            assert "parameters" not in sent, tool.name
        assert sent.get("description", "") == tool.description


def test_lean_parameters_drops_only_validation_keywords():
    from lantide.agent.tools.registry import lean_parameters

    full = {
        "type": "object",
        "additionalProperties": False,
        "required": [],
        "properties": {
            "name": {"type": "string", "minLength": 1, "pattern": "^a"},
            "kind": {"type": "string", "enum": ["a", "b"], "default": "a"},
        },
    }
    assert lean_parameters(full) == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "kind": {"type": "string", "enum": ["a", "b"]}},
    }


def test_a_call_outside_the_sent_schema_is_still_refused(session_factory):
    """Dropping additionalProperties from what is sent must not loosen validation."""
    session = session_factory()
    outcome = session.registry.call(
        "read_schema", {"table": "orders", "colour": "red"}, session.tool_context()
    )
    assert not outcome.ok and outcome.result["error"] == "BAD_ARGUMENTS"


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):  # strings of any lengths: the common prefix
        if x != y:
            break
        n += 1
    return n


@pytest.mark.usefixtures("agent_edits_apply")  # the open-annotation count changes at once
def test_consecutive_requests_share_the_prefix_through_the_knowledge_layer(
    session_factory, scripted, open_ws
):
    """Across a turn boundary after ask_user (the 'last question' note appears) and within a
    turn where an annotation is resolved (the open count changes), every request repeats the
    previous one's system text at least up to the end of the knowledge layer."""
    scripted.add(
        reply(
            "",
            (
                "ask_user",
                {
                    "question": "Which denominator?",
                    "choices": ["All Q2 actives", "Signed up before Q2"],
                },
            ),
        )
    )
    item = {"id": "7be204", "mode": "B", "answer": "All customers active in Q2."}
    scripted.add(reply("", ("resolve_annotations", {"document": "plan", "items": [item]})))
    scripted.add(reply("Resolved the denominator note."))
    session = session_factory()
    knowledge = session.prompt_preview(32_000).layer("knowledge").text.strip()
    assert knowledge  # the sample project has approved knowledge
    list(session.run_turn("Resolve the denominator question"))
    events = list(session.run_turn("All Q2 actives"))
    assert [e.ok for e in events if e.name == "tool_returned"] == [True]
    scripted.assert_done()

    systems = [r["messages"][0]["content"] for r in scripted.requests]
    assert "Your last question" not in systems[0] and "Your last question" in systems[1]
    assert "3 open annotations" in systems[1] and "2 open annotations" in systems[2]
    tools = [r["tools"] for r in scripted.requests]
    for (before, after), (tools_before, tools_after) in zip(
        pairwise(systems), pairwise(tools), strict=True
    ):
        end_of_knowledge = before.index(knowledge) + len(knowledge)
        assert _shared_prefix(before, after) >= end_of_knowledge
        assert tools_before == tools_after


def test_recent_steps_list_only_the_steps_the_sent_history_does_not_show(session_factory, scripted):
    """A step whose result is in the history is not repeated above it (and the system text
    stays the same while the turn records steps); a step of a turn the history dropped is."""
    from lantide.agent.prompt import output_reserve

    scripted.add(reply("", ("run_query", {"sql": "SELECT count(*) AS n FROM customers"})))
    scripted.add(reply("", ("run_query", {"sql": "SELECT count(*) AS n FROM orders"})))
    scripted.add(reply("2,000 customers and their orders."))
    s = session_factory()
    list(s.run_turn("How many customers and orders?"))
    first, second = (step["step_id"] for step in s.ledger.steps())
    systems = [r["messages"][0]["content"] for r in scripted.requests]
    assert "# Recent query steps" not in "".join(systems)
    assert systems[1] == systems[2]  # a new step does not change the text above the history

    full = s.prompt_preview(32_000)
    assert full.layer("recent_steps").text == ""
    assert first in json.dumps(full.messages[1:]) and second in json.dumps(full.messages[1:])

    base = full.tokens - full.layer("history").tokens
    window = (base + 30) * 4 // 3  # room for almost no history
    small = s.prompt_preview(window)
    assert output_reserve(window) == window // 4 and small.dropped_turns == [1]
    assert first in small.layer("recent_steps").text and second in small.layer("recent_steps").text
    scripted.assert_done()


def test_the_staging_rule_is_in_the_core_only_when_the_workspace_has_external_databases(
    session_factory, open_ws
):
    """The rules for external databases (staging, the large-remote warning and its id) can
    only apply to a workspace that has one: without, the core leaves them out."""
    from lantide.query.connections import add_connection

    session = session_factory()
    core = session.prompt_preview(32_000).layer("core").text
    assert "External databases: none" in session.prompt_preview(32_000).layer("summary").text
    assert "staged" not in core and "large_remote_warning_id" not in core
    assert "Source Run (source_run_sql_tab)" in core  # the rest of the QEM stays

    add_connection(open_ws, "warehouse", "Driver={PostgreSQL Unicode};Server=localhost")
    core = session.prompt_preview(32_000).layer("core").text
    assert "External databases are staged" in core
    assert "large_remote_warning_id" in core and "large_remote_warning_ids" in core


def test_remote_only_arguments_are_offered_only_with_an_external_database(session_factory, open_ws):
    """large_remote_warning_id(s) answer a warning only an external database can give: the
    sent schemas carry them only then (a call is still checked against the full schema)."""
    from lantide.query.connections import add_connection

    open_ws.project("q3-churn").approve_plan()
    session = session_factory()

    def sent_args():
        return {
            t["function"]["name"]: set(t["function"].get("parameters", {}).get("properties", {}))
            for t in session.prompt_preview(32_000).tools
        }

    args = sent_args()
    assert args["run_query"] == {"sql", "result_label", "purpose"}  # max_cell_chars: on demand
    assert "large_remote_warning_id" not in args["run_sql_tab"]
    assert "large_remote_warning_ids" not in args["source_run_sql_tab"]
    add_connection(open_ws, "warehouse", "Driver={PostgreSQL Unicode};Server=localhost")
    args = sent_args()
    assert "large_remote_warning_id" in args["run_query"] | args["run_sql_tab"]
    assert "large_remote_warning_ids" in args["source_run_sql_tab"]


def test_a_query_result_says_why_it_was_materialized_once_and_leaves_timing_to_the_ledger(
    session_factory, scripted, open_ws
):
    open_ws.project("q3-churn").approve_plan()
    scripted.add(
        reply(
            "",
            (
                "run_query",
                {"sql": "SELECT count(*) AS n FROM customers", "purpose": "customer count"},
            ),
        )
    )
    scripted.add(reply("[[QUERY_STEP]] customer count — one row\n\n2,000 customers."))
    scripted.add(
        reply(
            json.dumps(
                {
                    "ok": True,
                    "checklist": {
                        i: {"ok": True, "note": "ok"}
                        for i in ("denominator", "grain", "filters", "checks", "traced")
                    },
                    "problems": [],
                }
            )
        )
    )
    s = session_factory()
    list(s.run_turn("How many customers?"))
    (result,) = [
        json.loads(m["content"]) for m in scripted.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert result["reason_code"] == "executing_step" and result["materialized"] is True
    assert "materialize_reason" not in result and "duration_ms" not in result
    step = s.ledger.steps()[0]  # the ledger keeps both
    assert step["materialize_reason"] and step["duration_ms"] >= 0


def test_on_demand_arguments_are_named_by_the_results_that_need_them(session_factory):
    """max_cell_chars, show_tables' name/limit, read_step's offset/rows and ask_user's
    analysis are not sent every request: the result (or the core prompt's consent rule) that
    needs one names it, and a call with it is still accepted."""
    from lantide.agent.tools.registry import tool_error  # noqa: F401  (the registry loads)

    registry = default_registry()
    assert registry.get("run_query").on_demand == {"max_cell_chars"}
    assert registry.get("show_tables").on_demand == {"name", "limit"}
    assert registry.get("read_step").on_demand == {"offset", "rows"}
    assert registry.get("ask_user").on_demand == {"analysis"}
    s = session_factory()
    outcome = registry.call(
        "show_tables", json.dumps({"name": "cust*", "limit": 1}), s.tool_context()
    )
    assert outcome.ok and [t["name"] for t in outcome.result["tables"]] == ["customers"]
