"""Fixtures of the evaluation tests."""

from tests.fakes.fixtures import fake_openai  # noqa: F401
