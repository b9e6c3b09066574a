"""Pytest fixtures around the fake OpenAI server; use them from a conftest.py with
``from tests.fakes.fixtures import fake_openai  # noqa: F401``."""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def fake_openai():
    """A started :class:`FakeOpenAIServer` (background calls answered with a title)."""
    with FakeOpenAIServer(background_reply="Q3 churn by region") as server:
        yield server
