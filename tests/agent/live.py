"""Agent sessions that talk to the loopback OpenAI-compatible server through the real
``openai`` client (:class:`lantide.agent.model_client.OpenAIModelClient`)."""

from __future__ import annotations

import json
from dataclasses import replace

from lantide.agent.model_client import OpenAIModelClient
from lantide.workspace.settings import AgentSettings, ResolvedProfile, Settings
from tests.fakes.openai_server import FAKE_API_KEY


def live_client(server, agent: AgentSettings | None = None) -> OpenAIModelClient:
    profile = ResolvedProfile(
        name="environment",
        base_url=server.base_url,
        model=server.model,
        api_key=FAKE_API_KEY,
        context_window=None,
    )
    # no retries: an unexpected request fails the test at once instead of backing off
    agent = replace(agent or AgentSettings(), max_retries=0, request_timeout_seconds=20)
    return OpenAIModelClient(profile, agent)


def live_session(
    session_factory, server, settings: Settings | None = None, conversation_id: str | None = None
):
    settings = settings or Settings()
    return session_factory(
        conversation_id, settings=settings, model=live_client(server, settings.agent)
    )


def run(session, message):
    return list(session.run_turn(message))


def tool_results(body: dict) -> dict[str, dict]:
    """tool_call_id -> parsed tool result, of one request body."""
    return {
        m["tool_call_id"]: json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"
    }


def calls_of(body: dict) -> dict[str, str]:
    """tool_call_id -> tool name, of the assistant messages in one request body."""
    return {
        c["id"]: c["function"]["name"] for m in body["messages"] for c in m.get("tool_calls") or []
    }


def results_by_tool(body: dict) -> dict[str, list[dict]]:
    names = calls_of(body)
    out: dict[str, list[dict]] = {}
    for cid, result in tool_results(body).items():
        out.setdefault(names.get(cid, "?"), []).append(result)
    return out
