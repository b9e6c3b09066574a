"""Fixtures of the document tests: real workspaces, real Markdown and sidecar files."""

from __future__ import annotations

import json

import pytest

from lantide.workspace.atomic import atomic_write_text
from lantide.workspace.model import Project, Workspace
from tests.charts.conftest import opened  # noqa: F401 - the sample workspace with its query service


@pytest.fixture
def sample_project(sample_workspace) -> Project:
    """The sample's "Q3 churn" project: plan.md with three open annotations."""
    return Project.load(sample_workspace, "q3-churn")


@pytest.fixture
def make_project(empty_workspace):
    """``make_project(plan_text, sidecar=None, name="p")``: a project with that Plan.

    ``sidecar`` is a dict (written as JSON), a str (written as it is) or None (no file).
    """
    ws = Workspace.open(empty_workspace, lock=False)

    def _make(plan_text: str, sidecar=None, name: str = "p") -> Project:
        project = ws.create_project(name, plan_text=plan_text)
        if sidecar is not None:
            text = sidecar if isinstance(sidecar, str) else json.dumps(sidecar, indent=2)
            atomic_write_text(project.dir / "plan.annotations.json", text)
        return project

    return _make
