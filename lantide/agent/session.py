"""One conversation with the agent on one workspace: the object the CLI and the UI hold.

    session = AgentSession.open(workspace, conversation_id=None)   # new, or reopen by id
    for event in session.run_turn("Which regions churned most?", cancel):
        ...                                                        # events.py
    session.prompt_preview()       # what the model would see now, layer by layer
    session.close()

The primary profile answers the turn; background calls (the conversation's title,
knowledge proposals, knowledge reorganization) use the secondary profile when one is set,
else the primary. No model configured is a clear error naming what to set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypedDict, Unpack

from lantide.agent.app_state import AppStateProvider, SessionFileAppState, focused_project
from lantide.agent.background import BackgroundRunner, conversation_title
from lantide.agent.budget import TokenBudget
from lantide.agent.cancel import CancelToken
from lantide.agent.conversation import Conversation
from lantide.agent.events import ConversationTitled, ErrorOccurred, Event
from lantide.agent.ledger import Ledger
from lantide.agent.loop import CANCELLED, ERROR, QUESTION, TurnRunner
from lantide.agent.model_client import ModelClient, OpenAIModelClient
from lantide.agent.prompt import AssembledPrompt, PromptAssembler
from lantide.agent.services import EngineServices
from lantide.agent.summary_check import (
    NOTICE_EVENT,
    TOLD_EVENT,
    SummaryNotice,
    pending_notices,
)
from lantide.agent.tools import default_registry
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import ToolRegistry, state_of
from lantide.errors import LantideError
from lantide.workspace.model import Project, Workspace
from lantide.workspace.settings import Settings, load_settings, resolve_profile


class NoModelConfigured(LantideError):
    code = "NO_MODEL"

    def __init__(self) -> None:
        super().__init__(
            "no model is configured for the agent",
            hint="Add a model profile in the desktop app (Settings > Models), or set "
            "OPENAI_BASE_URL, OPENAI_API_KEY and LANTIDE_MODEL, e.g. "
            "OPENAI_BASE_URL=http://localhost:11434/v1 LANTIDE_MODEL=llama3.1 for Ollama.",
        )


def model_clients(settings: Settings) -> tuple[ModelClient, ModelClient]:
    """(primary, secondary) clients from the settings and environment overrides."""
    primary = resolve_profile(settings, "primary")
    if primary is None:
        raise NoModelConfigured()
    secondary = resolve_profile(settings, "secondary") or primary
    main = OpenAIModelClient(primary, settings.agent)
    if (secondary.base_url, secondary.model, secondary.name) == (
        primary.base_url,
        primary.model,
        primary.name,
    ):
        return main, main
    return main, OpenAIModelClient(secondary, settings.agent)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


class SessionParts(TypedDict, total=False):
    """The optional parts of :class:`AgentSession` (its keyword arguments), for ``open``."""

    settings: Settings | None
    model: ModelClient | None
    background_model: ModelClient | None
    app: AppStateProvider | None
    services: EngineServices | None
    registry: ToolRegistry | None
    on_background_event: Callable[[Event], None] | None


class AgentSession:
    def __init__(
        self,
        workspace: Workspace,
        conversation: Conversation,
        *,
        settings: Settings | None = None,
        model: ModelClient | None = None,
        background_model: ModelClient | None = None,
        app: AppStateProvider | None = None,
        services: EngineServices | None = None,
        registry: ToolRegistry | None = None,
        on_background_event: Callable[[Event], None] | None = None,
    ):
        self.workspace = workspace
        self.settings = settings or load_settings()
        self.conversation = conversation
        self.ledger = Ledger(workspace.ledger_dir, conversation.id)
        self.budget = TokenBudget(conversation, self.settings)
        self._model = model
        self._background_model = background_model
        self.app = app or SessionFileAppState(workspace)
        self._owns_services = services is None
        self.services = services or EngineServices(workspace, self.settings)
        self.registry = registry or default_registry()
        self.assembler = PromptAssembler(self.registry)
        self.background = BackgroundRunner(on_background_event)
        self.last_prompt: AssembledPrompt | None = None
        # notices on [[QUERY_STEP]] lines no tool result has carried yet (loop.py)
        self.summary_notices: list[SummaryNotice] = pending_notices(
            conversation.events((NOTICE_EVENT, TOLD_EVENT))
        )
        self._problems_reported = False
        self._running: set[CancelToken] = set()
        self._closed = False

    @classmethod
    def open(
        cls,
        workspace: Workspace,
        conversation_id: str | None = None,
        **kwargs: Unpack[SessionParts],
    ) -> AgentSession:
        """Reopen ``conversation_id``, or start a new conversation (its file is written
        with the first message)."""
        directory = workspace.conversations_dir
        if conversation_id:
            conversation = Conversation.open(directory, conversation_id)
        else:
            conversation = Conversation.create(directory)
        return cls(workspace, conversation, **kwargs)

    # -- models (resolved on first use, so `lantide prompt` needs no model)
    @property
    def model(self) -> ModelClient:
        if self._model is None:
            self._model, secondary = model_clients(self.settings)
            self._background_model = self._background_model or secondary
        return self._model

    @property
    def background_model(self) -> ModelClient:
        if self._background_model is None:
            _ = self.model
        return self._background_model or self.model

    def complete_in_background(self, system: str, user: str) -> str:
        """``complete(system, user)`` on the secondary profile, for the knowledge layer;
        charged to the conversation's token budget."""
        from lantide.tokens import count_tokens

        answer = self.background_model.complete(system, user)
        self.budget.charge(count_tokens(system) + count_tokens(user) + count_tokens(answer or ""))
        return answer

    # -- turns
    def run_turn(self, message: str, cancel: CancelToken | None = None) -> Iterator[Event]:
        _ = self.model  # fail before the turn starts when nothing is configured
        if self._closed:
            raise LantideError(
                "this conversation's session is closed",
                hint="Open the conversation again to go on.",
                code="SESSION_CLOSED",
            )
        cancel = cancel or CancelToken()
        self._running.add(cancel)
        try:
            yield from TurnRunner(self, message, cancel).run()
        finally:
            self._running.discard(cancel)

    def skipped_log_lines(self) -> Iterator[Event]:
        """Once per session: the lines of the conversation and ledger files that were
        skipped because they could not be read or replayed."""
        if self._problems_reported:
            return
        self._problems_reported = True
        self.ledger.steps()  # reads the file, noting the lines it skipped
        problems = self.conversation.problems + self.ledger.problems
        if problems:
            from lantide.agent.events import LogLinesSkipped

            root = self.workspace.root
            yield LogLinesSkipped(
                [{**p.to_dict(), "file": _relative(p.path, root)} for p in problems]
            )

    def before_first_turn(self, turn: int) -> Iterator[Event]:
        """Knowledge too large for flat mode and without headings is grouped by the
        secondary model before a new conversation first uses it (DESIGN.md section 7)."""
        if turn != 1:
            return
        kb = self.services.knowledge(self.focused_project())
        if not kb.needs_reorganize():
            return
        from lantide.agent.events import KnowledgeReorganized

        for result in kb.reorganize(self.complete_in_background):
            yield KnowledgeReorganized(
                result.scope, bool(result.applied), result.reason, getattr(result, "diff", None)
            )

    def after_turn(self, turn: int, message: str, answer: str, reason: str) -> None:
        """Background work at the end of a turn: the title (from the first exchange that
        has an answer) and knowledge proposals. Returns at once."""
        if self.conversation.title is None and answer:

            def name() -> Event | None:
                title = conversation_title(self.complete_in_background, message, answer)
                if not title:
                    return None
                self.conversation.set_title(title)
                return ConversationTitled(self.conversation.id, title)

            self.background.submit("conversation-title", name)
        # Not after a question (the turn goes on), nor a turn that failed or was stopped:
        # the analyst's statement is proposed from the turn that answers it.
        if reason not in (QUESTION, ERROR, CANCELLED):
            self.background.submit(
                "knowledge-proposals", lambda: self._propose_knowledge(turn, message, answer)
            )

    def _propose_knowledge(self, turn: int, message: str, answer: str) -> Event | None:
        kb = self.services.knowledge(self.focused_project())
        result = kb.propose(
            self.complete_in_background,
            conversation_id=self.conversation.id,
            turn=turn,
            analyst_messages=[message],
            assistant_reply=answer,
        )
        if result.error:
            from lantide.agent.background import task_words

            return ErrorOccurred(
                "KNOWLEDGE_PROPOSAL", f"{task_words('knowledge-proposals')} failed: {result.error}"
            )
        if result.added:
            from lantide.agent.events import KnowledgeProposed

            return KnowledgeProposed([e.text for e in result.added])
        return None

    # -- what the model sees
    def focused_project(self) -> Project | None:
        """The focused project as the app state (its one owner) holds it now."""
        return focused_project(self.workspace, self.app)

    def tool_context(self, cancel: CancelToken | None = None) -> ToolContext:
        project = self.focused_project()
        return ToolContext(
            workspace=self.workspace,
            settings=self.settings,
            conversation=self.conversation,
            ledger=self.ledger,
            app=self.app,
            services=self.services,
            cancel=cancel or CancelToken(),
            state=state_of(project),
            turn=self.conversation.last_turn + 1,
        )

    def prompt_preview(self, context_window: int | None = None) -> AssembledPrompt:
        """The prompt of the next iteration, with every layer's text (``lantide prompt``)."""
        if context_window is None:
            try:
                context_window = self.model.context_window().tokens
            except NoModelConfigured:
                from lantide.agent.context_window import DEFAULT_CONTEXT_WINDOW

                context_window = DEFAULT_CONTEXT_WINDOW
        ctx = self.tool_context()
        return self.assembler.assemble(ctx, context_window, current_turn=ctx.turn, for_display=True)

    def close(self) -> None:
        """Close what this session opened (a query service passed in stays open). A turn
        still running is stopped first (its model stream closed, its query interrupted),
        so no worker goes on against a closed engine."""
        self._closed = True
        for cancel in list(self._running):
            cancel.cancel()
        if self._owns_services:
            self.services.close()
