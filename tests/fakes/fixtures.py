"""Pytest fixtures around the fake OpenAI server; use them from a conftest.py with
``from tests.fakes.fixtures import fake_openai  # noqa: F401``."""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeOpenAIServer


def background_answer(body: dict) -> str:
    """Background calls: no knowledge proposals, and a fixed conversation title."""
    system = next(
        (m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "system"), ""
    )
    if "knowledge" in system.lower():
        return '{"proposals": []}'
    return "Q3 churn by region"


@pytest.fixture
def fake_openai():
    """A started :class:`FakeOpenAIServer`; background calls answered by
    :func:`background_answer`."""
    with FakeOpenAIServer(background_reply=background_answer) as server:
        yield server
