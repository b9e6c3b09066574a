"""What a turn reports, as past-tense event objects.

:meth:`lantide.agent.loop.AgentSession.run_turn` is a plain generator of these. The
command line prints them (``--json``: ``to_dict()`` per line); the desktop app turns them
into Qt signals in one worker bridge. Every event has a stable ``event`` name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

if TYPE_CHECKING:
    from lantide.agent.ledger_types import LedgerStep, ReflectionLine
    from lantide.agent.message_types import ToolCall

# What a tool touches (``Tool.touches`` in the tool registry; carried by ToolReturned), so
# an app refreshes what changed without a list of tool names of its own.
TOUCHES_TABLES = "tables"  # cached tables created, replaced or dropped
TOUCHES_DOCUMENTS = "documents"  # Plan, Report or SQL tab files (DocumentChanged names them)
TOUCHES_PROJECT = "project"  # a project's focus, status or existence (StateChanged says which)
TOUCHES = frozenset({TOUCHES_TABLES, TOUCHES_DOCUMENTS, TOUCHES_PROJECT})

# StateChanged.what
FOCUSED_PROJECT = "focused_project"
PROJECT_STATUS = "project_status"
ANALYSIS_ACTIVE = "analysis_active"


@dataclass(frozen=True)
class Event:
    name: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, object]:
        """The event as JSON (``--json``): its name and its fields, which vary by event."""
        return {"event": self.name, **asdict(self)}


@dataclass(frozen=True)
class TurnStarted(Event):
    name: ClassVar[str] = "turn_started"
    conversation_id: str
    turn: int
    state: str
    project: str | None


@dataclass(frozen=True)
class TextDelta(Event):
    """A piece of the assistant's answer as it streams in."""

    name: ClassVar[str] = "text_delta"
    text: str


@dataclass(frozen=True)
class AssistantMessage(Event):
    """The assistant's complete message of one iteration (text and the tools it called)."""

    name: ClassVar[str] = "assistant_message"
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    partial: bool = False


@dataclass(frozen=True)
class ToolCalled(Event):
    name: ClassVar[str] = "tool_called"
    call_id: str
    tool: str
    arguments: dict[str, object]  # as the model sent them (not yet checked)


@dataclass(frozen=True)
class ToolReturned(Event):
    name: ClassVar[str] = "tool_returned"
    call_id: str
    tool: str
    ok: bool
    result: Mapping[str, object]  # as the model reads it (JSON)
    duration_ms: int
    touches: tuple[str, ...] = ()  # what the tool declares it may change (TOUCHES)


@dataclass(frozen=True)
class StepRecorded(Event):
    """A query step was appended to the ledger."""

    name: ClassVar[str] = "step_recorded"
    step: LedgerStep


@dataclass(frozen=True)
class StepSummarized(Event):
    """A step's ``[[QUERY_STEP]]`` line was parsed (or found missing or malformed)."""

    name: ClassVar[str] = "step_summarized"
    step_id: str
    summary: str | None
    summary_status: str


class StepLineOutcome(TypedDict):
    """What became of one ``[[QUERY_STEP]]`` line (:class:`StepLinesRead`)."""

    step_id: str | None
    outcome: str


@dataclass(frozen=True)
class StepLinesRead(Event):
    """What became of each ``[[QUERY_STEP]]`` line of the last assistant message, in order:
    ``{"step_id": the step it was recorded on or None, "outcome": ...}``, the outcome a
    summary_status (parsed, mismatch, malformed) or why it was not recorded (unknown_step,
    duplicate, unpaired). A screen shows this, never a line's position among the steps."""

    name: ClassVar[str] = "step_lines_read"
    lines: tuple[StepLineOutcome, ...]


@dataclass(frozen=True)
class ReflectionRecorded(Event):
    """The review before reporting ran (:mod:`lantide.agent.reflection`); ``reflection`` is
    its ledger line: ``subject``, ``ok``, ``checklist`` [{item, ok, note}], ``problems``."""

    name: ClassVar[str] = "reflection_recorded"
    reflection: ReflectionLine


@dataclass(frozen=True)
class TokenBudgetReached(Event):
    """The conversation's tokens crossed the warning share (``stopped`` False) or its whole
    budget (``stopped`` True: no further model request in this conversation)."""

    name: ClassVar[str] = "token_budget_reached"
    used: int
    budget: int
    stopped: bool


@dataclass(frozen=True)
class QuestionAsked(Event):
    """The turn pauses; the analyst's next message answers."""

    name: ClassVar[str] = "question_asked"
    question: str
    choices: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ModelRetrying(Event):
    name: ClassVar[str] = "model_retrying"
    attempt: int
    delay_seconds: float
    reason: str


@dataclass(frozen=True)
class TurnContinued(Event):
    """The iteration limit was reached and the turn went on by itself (a setting)."""

    name: ClassVar[str] = "turn_continued"
    round: int
    rounds: int
    iterations: int


@dataclass(frozen=True)
class ContextCompacted(Event):
    name: ClassVar[str] = "context_compacted"
    compacted_results: int
    tokens_before: int
    tokens_after: int
    context_window: int


@dataclass(frozen=True)
class DocumentChanged(Event):
    """A file the analyst may have open changed; a clean editor tab reloads it."""

    name: ClassVar[str] = "document_changed"
    path: str
    project: str | None = None


@dataclass(frozen=True)
class EditProposed(Event):
    """An edit of the agent waits for the analyst's review (``.lantide/edits``); the file
    itself did not change. The app shows the edit's hunks in the document's tab."""

    name: ClassVar[str] = "edit_proposed"
    path: str
    project: str
    edit_id: str


@dataclass(frozen=True)
class StateChanged(Event):
    """Focused project, project status or analysis consent changed (``what``:
    FOCUSED_PROJECT, PROJECT_STATUS or ANALYSIS_ACTIVE)."""

    name: ClassVar[str] = "state_changed"
    what: str
    project: str | None
    value: Any = None


@dataclass(frozen=True)
class LogLinesSkipped(Event):
    """Lines of this conversation's files (conversation, ledger) that could not be used:
    each ``{"file", "line", "reason"}``. They were skipped, never sent to the model, and
    the files are left as they are."""

    name: ClassVar[str] = "log_lines_skipped"
    problems: list[dict[str, Any]] = field(default_factory=list)

    def describe(self) -> list[str]:
        return [f"{p['file']} line {p['line']}: {p['reason']}" for p in self.problems]


@dataclass(frozen=True)
class ErrorOccurred(Event):
    name: ClassVar[str] = "error"
    code: str
    message: str
    hint: str | None = None


@dataclass(frozen=True)
class ConversationTitled(Event):
    name: ClassVar[str] = "conversation_titled"
    conversation_id: str
    title: str


@dataclass(frozen=True)
class KnowledgeReorganized(Event):
    """Large knowledge without headings was grouped by the secondary model."""

    name: ClassVar[str] = "knowledge_reorganized"
    scope: str
    applied: bool
    reason: str | None = None
    diff: str | None = None


@dataclass(frozen=True)
class KnowledgeProposed(Event):
    """Entries proposed from the analyst's words, queued for their approval."""

    name: ClassVar[str] = "knowledge_proposed"
    entries: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TurnFinished(Event):
    """The end of a turn. ``reason``: answered, question, cancelled, iteration_limit,
    repeated_failure, repeated_call, context_full, reflection_failed, token_budget or error.
    ``message`` is the engine's own note, if any."""

    name: ClassVar[str] = "turn_finished"
    reason: str
    conversation_id: str
    iterations: int
    message: str | None = None
