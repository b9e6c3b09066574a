"""The Context Summary (DESIGN.md section 6, item 2): small, the same shape every turn.

Time, workspace, focused project (Plan/Report file names, status), the active tab's type
and whether it has unsaved edits, how many tabs are open, how many cached tables exist,
the external databases, whether statistical analysis is approved (and since when, for
what), how many query steps other conversations of the workspace hold (only when
there are any: ``find_similar_steps`` finds them), and the outside agents (MCP clients)
that worked in the workspace within the last hour (only when there were any), from its
activity log, so the agent knows someone else is querying beside it. No
document text, no schemas: those come through tools. Every
free-text value is capped, so a workspace of any size stays within about 300 tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from lantide.agent.app_state import AppState
from lantide.templates import render_prompt
from lantide.workspace.model import Project, Workspace

if TYPE_CHECKING:
    from lantide.workspace.activity import ConnectedClient

MAX_NAME_CHARS = 60
MAX_PATH_CHARS = 90
MAX_LISTED_DATABASES = 5
MAX_LISTED_AGENTS = 3
OUTSIDE_AGENT_MINUTES = 60  # an MCP client counts as working here within this time


def _cap(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_time(now: datetime | None = None) -> str:
    """``YYYY-MM-DD HH:MM (UTC±N)`` in local time; half-hour zones as ``UTC+5:30``."""
    now = now or datetime.now()
    if now.tzinfo is None:
        now = now.astimezone()  # the machine's local zone
    offset = now.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    zone = f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")
    return f"{now:%Y-%m-%d %H:%M} ({zone})"


@dataclass
class SummaryFacts:
    """What the summary states, gathered once per iteration."""

    now: str
    workspace: str
    project: dict[str, Any] | None
    active_tab: dict[str, Any] | None
    open_tabs: int
    cached_tables: int | None
    external_databases: list[str]
    analysis: dict[str, Any] | None = None
    past_steps: int = 0  # query steps of the workspace's other conversations
    outside_agents: list[ConnectedClient] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def gather_facts(
    workspace: Workspace,
    app: AppState,
    project: Project | None,
    cached_tables: int | None,
    now: datetime | None = None,
    analysis: dict[str, Any] | None = None,
    past_steps: int = 0,
    outside_agents: list[ConnectedClient] | None = None,
) -> SummaryFacts:
    active = app.active
    if outside_agents is None:
        outside_agents = recent_outside_agents(workspace)
    names = [_cap(c.get("name") or c.get("kind") or "unnamed", 40) for c in workspace.connections]
    if len(names) > MAX_LISTED_DATABASES:
        names = names[:MAX_LISTED_DATABASES] + [f"and {len(names) - MAX_LISTED_DATABASES} more"]
    return SummaryFacts(
        now=format_time(now),
        workspace=_cap(workspace.name, MAX_NAME_CHARS),
        project=None
        if project is None
        else {
            "name": _cap(project.name, MAX_NAME_CHARS),
            "status": project.status,
            "plan": _cap(project.plan, 40),
            "report": _cap(project.report, 40),
        },
        active_tab=None
        if active is None
        else {
            "type": _cap(active.type, 20),
            "path": _cap(active.path, MAX_PATH_CHARS),
            "dirty": active.dirty,
        },
        open_tabs=len(app.open_tabs),
        cached_tables=cached_tables,
        external_databases=names,
        analysis=None
        if analysis is None
        else {
            "turn": analysis.get("turn"),
            "project": _cap(analysis.get("project") or "", 40),
            "reason": _cap(analysis.get("reason") or "", MAX_NAME_CHARS),
        },
        past_steps=past_steps,
        outside_agents=[
            {**a, "name": _cap(a.get("name") or "client", 40)}
            for a in outside_agents[:MAX_LISTED_AGENTS]
        ],
    )


def recent_outside_agents(workspace: Workspace) -> list[ConnectedClient]:
    """MCP clients that called within :data:`OUTSIDE_AGENT_MINUTES` (none when the
    activity log cannot be read: the summary never fails for it)."""
    from lantide.workspace.activity import connected_clients

    try:
        return connected_clients(workspace.root, OUTSIDE_AGENT_MINUTES)
    except (OSError, ValueError, TypeError):
        return []


def render_summary(facts: SummaryFacts) -> str:
    return render_prompt("context_summary.md.j2", **facts.to_dict())
