"""Fixtures of the adversarial tests, shared from the query, agent and update tests."""

from tests.agent.conftest import open_ws, scripted, session_factory  # noqa: F401
from tests.query.conftest import open_service  # noqa: F401
from tests.update.conftest import feed_server, release  # noqa: F401
