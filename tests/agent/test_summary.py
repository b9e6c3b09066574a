"""The Context Summary: same shape every turn, within 300 tokens for a big workspace."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from lantide.agent.app_state import AppState, OpenTab
from lantide.agent.summary import format_time, gather_facts, render_summary
from lantide.tokens import count_tokens
from lantide.workspace.model import Workspace

FIELDS = [
    "Time",
    "Workspace",
    "Project",
    "Active tab",
    "Open tabs",
    "Cached tables",
    "External databases",
    "Statistical analysis",
]


def labels(text):
    return re.findall(r"^- ([A-Za-z ]+):", text, re.M)


def test_time_format_with_offsets():
    t = datetime(2026, 11, 30, 10, 5, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    assert format_time(t) == "2026-11-30 10:05 (UTC+5:30)"
    t = datetime(2026, 1, 2, 3, 4, tzinfo=timezone(timedelta(hours=-7)))
    assert format_time(t) == "2026-01-02 03:04 (UTC-7)"


def test_big_workspace_stays_within_300_tokens(tmp_path):
    ws = Workspace.create(tmp_path / "w", name="Regional analytics workspace " + "x" * 200)
    for i in range(20):
        ws.create_project(f"project number {i:02d} with a rather long descriptive name")
    ws.settings["connections"] = [
        {"name": f"warehouse_{i}", "kind": "postgresql"} for i in range(12)
    ]
    project = ws.project("project number 07 with a rather long descriptive name")
    tabs = [
        OpenTab(
            "sql",
            f"projects/{project.dirname}/sql/step_{i:02d}_" + "y" * 80 + ".sql",
            dirty=i % 3 == 0,
        )
        for i in range(50)
    ]
    app = AppState(project.dirname, tabs, active_tab=49)
    analysis = {"turn": 12, "project": project.dirname, "reason": "a regression " * 40}
    text = render_summary(gather_facts(ws, app, project, cached_tables=1000, analysis=analysis))
    assert count_tokens(text) <= 300, count_tokens(text)
    assert "Statistical analysis: approved in turn 12" in text
    assert labels(text) == FIELDS
    assert "Open tabs: 50" in text and "Cached tables: 1000" in text
    assert "and 7 more" in text


def test_same_shape_without_a_project_or_tabs(tmp_path):
    ws = Workspace.create(tmp_path / "w")
    text = render_summary(gather_facts(ws, AppState(), None, cached_tables=None))
    assert labels(text) == FIELDS
    assert "Project: none focused" in text and "Active tab: none" in text
    assert "Statistical analysis: not approved" in text
