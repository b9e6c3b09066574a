"""Fixtures of the adversarial tests, shared from the query tests."""

from tests.query.conftest import open_service  # noqa: F401
