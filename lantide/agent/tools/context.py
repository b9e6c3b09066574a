"""What a tool handler gets: the workspace, the conversation, the layers, the turn's state.

Handlers return a JSON-able dict (the tool result the model reads) and may queue events
(:meth:`ToolContext.emit`) that the loop yields right after the tool's result.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

from lantide.agent.app_state import AppStateProvider, focused_project
from lantide.agent.cancel import CancelToken
from lantide.agent.conversation import Conversation
from lantide.agent.events import Event
from lantide.agent.ledger import Ledger
from lantide.agent.services import EngineServices
from lantide.errors import LantideError
from lantide.workspace.model import Project, Workspace
from lantide.workspace.settings import Settings

if TYPE_CHECKING:
    from lantide.agent.tools.registry import ToolError


class NoProjectError(LantideError):
    code = "NO_PROJECT"


class AskedQuestion(TypedDict):
    """What ask_user asked; the loop records it (``question_asked``) and ends the turn."""

    question: str
    choices: list[str]
    question_kind: str
    analysis: NotRequired[list[str]]  # a consent question: the kinds of analysis it names
    project: NotRequired[str | None]  # ... and the project it is for


@dataclass
class ToolContext:
    workspace: Workspace
    settings: Settings
    conversation: Conversation
    ledger: Ledger
    app: AppStateProvider
    services: EngineServices
    cancel: CancelToken
    state: str
    turn: int
    events: list[Event] = field(default_factory=list)
    pending_steps: list[str] = field(default_factory=list)  # steps awaiting [[QUERY_STEP]]
    question: AskedQuestion | None = None  # set by ask_user: the turn pauses
    knowledge_offers_tool: bool = False  # set from the knowledge layer each iteration
    # tokens a tool result may take in the next request (set by the loop before each call;
    # None outside the loop, e.g. an outside agent's call)
    room_tokens: int | None = None

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def drain_events(self) -> list[Event]:
        out, self.events = self.events, []
        return out

    def project(self, name: str | None = None) -> Project:
        """The named project, else the focused one."""
        if name:
            return self.workspace.project(name)
        project = self.focused_project()
        if project is None:
            names = ", ".join(p.dirname for p in self.workspace.list_projects()) or "none yet"
            raise NoProjectError(
                "no project is focused",
                hint=f"Pass project, or call focus_project first (projects: {names}).",
            )
        return project

    def focused_project(self) -> Project | None:
        """The project the app state holds focused (its owner; see agent.app_state)."""
        return focused_project(self.workspace, self.app)

    def analysis(self) -> dict[str, object] | None:
        """The approval of statistical analysis in force for the focused project (its
        ``analysis_activated`` event; see agent.consent), or None."""
        from lantide.agent.consent import analysis_state

        try:
            project = self.focused_project()
        except LantideError:
            return None
        return analysis_state(self.conversation, project)

    def analysis_active(self) -> bool:
        return self.analysis() is not None

    def outside_agent(self) -> bool:
        """Whether an outside agent (MCP) makes the calls: it cannot be asked for consent."""
        return False

    def statistics_refusal(self, sql: str) -> ToolError | None:
        """The refusal of ``sql`` when it runs statistical analysis without consent (the one
        gate every path that runs SQL for an agent goes through), or None."""
        from lantide.agent.consent import consent_refusal

        return consent_refusal(sql, self.state, self.analysis(), outside=self.outside_agent())

    def relpath(self, path: str | os.PathLike[str]) -> str:
        """A workspace-relative path with forward slashes."""
        from pathlib import Path

        try:
            return Path(path).resolve().relative_to(self.workspace.root).as_posix()
        except ValueError:
            return str(path)
