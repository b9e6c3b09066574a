"""The agent reaches the query, docs and knowledge layers through typed interfaces
(lantide.agent.services) that the layers' real classes satisfy, so a rename on either side
is a failing test and a type error, not a tool that breaks at run time."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env


def _members(protocol) -> list[str]:
    return sorted(
        n
        for n, v in vars(protocol).items()
        if not n.startswith("_") and (callable(v) or isinstance(v, property))
    )


def _protocol_pairs():
    from lantide.agent.services import AgentKnowledge, AgentQuery
    from lantide.knowledge.base import KnowledgeBase
    from lantide.query.service import QueryService

    return [(AgentQuery, QueryService), (AgentKnowledge, KnowledgeBase)]


@pytest.mark.parametrize("index", [0, 1])
def test_each_layer_has_what_the_agent_calls_with_the_same_parameters(index):
    protocol, concrete = _protocol_pairs()[index]
    members = _members(protocol)
    assert members  # the interface names what the agent uses
    for name in members:
        wanted = vars(protocol)[name]
        if isinstance(wanted, property):
            continue  # an attribute of the instance (e.g. catalog), checked below
        real = getattr(concrete, name, None)
        assert callable(real), f"{concrete.__name__} has no {name}()"
        want = [(p.name, p.kind) for p in inspect.signature(wanted).parameters.values()]
        have = [(p.name, p.kind) for p in inspect.signature(real).parameters.values()]
        assert want == have, f"{concrete.__name__}.{name}: {have} != {want}"


def test_query_service_satisfies_the_interface_on_a_real_workspace(sample_workspace):
    from lantide.agent.services import EngineServices
    from lantide.query.catalog import Catalog
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import Settings

    ws = Workspace.open(sample_workspace)
    services = EngineServices(ws, Settings())
    try:
        assert not services.query_opened  # nothing opens DuckDB before a tool needs it
        query = services.query()
        assert services.query_opened and services.query() is query
        assert isinstance(query.catalog, Catalog)
        assert services.cached_table_count() == len(query.catalog.all_cached())
        project = ws.focused_project()
        view = services.documents.agent_view(project, "plan")
        assert view["document"] == "plan" and view["open_annotation_count"] >= 1
        kb = services.knowledge(project)
        assert services.knowledge(project) is kb  # cached per project
        assert kb.layer(budget_tokens=500).tokens <= 500
    finally:
        services.close()
        ws.close()
    assert not services.query_opened


def test_the_agent_session_loads_no_layer_it_does_not_use_yet():
    """Importing the agent (``lantide prompt``, the chat panel) pays for neither DuckDB nor
    the Markdown parser: the layers load inside the calls that need them."""
    code = (
        "import sys, json, lantide.agent.session, lantide.agent.services\n"
        "print(json.dumps(sorted(m for m in ('duckdb', 'markdown_it', 'lantide.docs',"
        " 'lantide.knowledge', 'lantide.query.service') if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=str(REPO),
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
