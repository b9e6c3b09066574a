from __future__ import annotations

import pytest

from tests.agent.scripted_model import ScriptedModel
from tests.fakes.fixtures import fake_openai  # noqa: F401  (fixture)


@pytest.fixture
def scripted():
    model = ScriptedModel()
    yield model


@pytest.fixture
def open_ws(sample_workspace):
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace)
    yield ws
    ws.close()


@pytest.fixture
def session_factory(open_ws, scripted):
    """Sessions on the sample workspace sharing one set of engine services, as the desktop
    app shares its query service (DuckDB allows one per database and process)."""
    from lantide.agent.services import EngineServices
    from lantide.agent.session import AgentSession
    from lantide.workspace.settings import Settings

    made = []
    services = EngineServices(open_ws, Settings())

    def make(conversation_id=None, **kwargs):
        kwargs.setdefault("settings", Settings())
        kwargs.setdefault("model", scripted)
        kwargs.setdefault("background_model", scripted)
        kwargs.setdefault("services", services)
        s = AgentSession.open(open_ws, conversation_id, **kwargs)
        made.append(s)
        return s

    yield make
    for s in made:
        s.background.wait(5)
        s.close()
    services.close()
