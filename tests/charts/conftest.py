"""Fixtures of the charts tests: the sample workspace opened with its query service."""

from __future__ import annotations

import pytest


@pytest.fixture
def opened(sample_workspace):
    """``(workspace, query_service, project)`` on a fresh sample workspace; closed after."""
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    ws = Workspace.open(sample_workspace)
    query = QueryService(ws, QuerySettings())
    try:
        yield ws, query, ws.project("q3-churn")
    finally:
        query.close()
        ws.close()
