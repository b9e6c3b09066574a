"""The agent's event stream as Qt signals: the one bridge between a chat turn and the UI.

:class:`AgentTurnBridge` holds the :class:`~lantide.agent.session.AgentSession` of the chat's
conversation and runs each turn in a worker of :mod:`lantide.ui.workers`: the generator
``session.run_turn(message, cancel)`` is iterated there and every event is handed to the
UI thread with ``context.emit``. Stop calls ``Worker.cancel``, whose ``on_cancel`` cancels
the turn's :class:`~lantide.agent.cancel.CancelToken` (that closes the model's HTTP stream
and interrupts the agent's running query at once). Background results (the conversation's
title, knowledge proposals) arrive from the agent's own threads and are forwarded the same
way.

Events also reach the rest of the app here, dispatched on their types
(:mod:`lantide.agent.events`): ledger steps go to the ledger panel, changed documents to
their open tabs (announced once, from the :class:`~lantide.agent.events.DocumentChanged`
event; an edit left pending for the analyst's review from
:class:`~lantide.agent.events.EditProposed`), and a tool that declares it touches cached
tables (``Tool.touches`` in the tool registry, carried by
:class:`~lantide.agent.events.ToolReturned`) refreshes the explorer.
:class:`UiAppState` is the agent's app state: the live open tabs, unsaved text included,
and the focused project, which it owns (an agent's focus change goes through it, once).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThread, Signal

from lantide.agent.app_state import AppState, OpenTab
from lantide.errors import LantideError
from lantide.workspace.layout import project_relpath, sql_tab_relpath

if TYPE_CHECKING:
    from lantide.agent.app_state import TabState
    from lantide.agent.cancel import CancelToken
    from lantide.agent.events import Event
    from lantide.agent.session import AgentSession
    from lantide.agent.tools.registry import ToolRegistry
    from lantide.ui.services import AppServices
    from lantide.ui.workers import Worker

log = logging.getLogger(__name__)

APP_INSTRUCTION = "app_instruction"  # conversation event marking a message the app sent
TEXT_TABS = ("plan", "report", "sql")  # tabs whose unsaved text the agent is given


def warm_up_agent() -> None:
    """Import the agent, the ``openai`` SDK and the tokenizer (call from a worker), so the
    first turn does not pay for them and their objects are frozen out of the collector's
    way (:mod:`lantide.ui.startup.gc_pauses`) before an answer streams.

    Building the tokenizer is one call into tiktoken's Rust core that holds the GIL for
    50-200 ms: a one-time hitch, taken here (a moment after start-up) rather than while
    the first answer streams."""
    from lantide.ui.startup.gc_pauses import loading_long_lived

    with loading_long_lived("agent libraries"):
        import openai

        import lantide.agent.session  # noqa: F401 - the loop, prompt, tools
        from lantide.tokens import count_tokens

        # Resources load lazily on first access; no request is made (the address is unused).
        _ = openai.OpenAI(api_key="warm-up", base_url="http://127.0.0.1:9/v1").chat.completions
        count_tokens("warm up")


def tab_path(ref) -> str:
    """The workspace-relative path the agent knows a tab by."""
    if ref.kind in ("plan", "report"):
        return project_relpath(ref.project, ref.name)
    if ref.kind == "sql":
        return sql_tab_relpath(ref.project, ref.name)
    return ref.name


class UiCallTimedOut(LantideError):
    code = "APP_BUSY"


class _UiCall:
    """A function a worker hands to the UI thread, and its outcome."""

    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as exc:  # handed back to the waiting worker
            self.error = exc
        finally:
            self.done.set()


class UiAppState(QObject):
    """The agent's :class:`~lantide.agent.app_state.AppStateProvider` in the desktop app,
    over :class:`~lantide.ui.services.AppServices`, the one owner of the focused project:
    the agent reads the focus from it and changes it through it
    (``AppServices.focus_project``: memory now, ``session.json`` written once, soon after,
    by a worker); the file is never read back while the app runs.

    It also gives the live open tabs, with the active tab's unsaved text (a dirty Plan,
    Report or SQL tab) as ``OpenTab.content``, so the agent sees what the analyst sees. The
    agent runs in a worker and must not touch widgets, so the state is snapshot on the UI
    thread: :meth:`capture` when a turn starts, and again each time the agent asks
    (:meth:`app_state` from the worker queues the request to the UI thread and waits for the
    answer). When the UI thread does not answer within ``ASK_TIMEOUT_S`` (it is closing the
    window and waiting for the worker), the last snapshot serves.
    """

    ASK_TIMEOUT_S = 2.0
    _sig_call = Signal(object)

    def __init__(self, services: AppServices, parent: QObject | None = None):
        super().__init__(parent)
        self.services = services
        self._lock = threading.Lock()
        self._latest = AppState()
        self._sig_call.connect(self._run_call)  # queued: a worker emits, the UI thread runs

    def capture(self) -> AppState:
        """Snapshot the state now (UI thread) and keep it as the latest."""
        services = self.services
        tabs = services.open_tabs()
        active = services.active_tab()
        keys = [t.key() for t in tabs]
        index = keys.index(active.key()) if active is not None and active.key() in keys else None
        unsaved = services.active_unsaved_text() if index is not None else None
        open_tabs = []
        for i, t in enumerate(tabs):
            content = unsaved if i == index and t.kind in TEXT_TABS else None
            open_tabs.append(OpenTab(t.kind, tab_path(t), t.dirty or content is not None, content))
        state = AppState(
            focused_project=services.focused_project_name(), open_tabs=open_tabs, active_tab=index
        )
        with self._lock:
            self._latest = state
        return state

    def app_state(self) -> AppState:
        try:
            return self._on_ui_thread(self.capture)
        except UiCallTimedOut:  # the UI thread is busy closing: the last snapshot serves
            with self._lock:
                return self._latest

    def focused_project_name(self) -> str | None:
        # One attribute of AppServices, set on the UI thread: safe to read from a worker.
        return self.services.focused_project_name()

    def focus_project(self, dirname: str | None) -> None:
        self._on_ui_thread(lambda: self.services.focus_project(dirname))

    def tab_state(self, path: str) -> TabState:
        tab = next((t for t in self.services.open_tabs() if tab_path(t) == path), None)
        return {
            "open": tab is not None,
            "dirty": bool(tab and tab.dirty),
            "reloaded": bool(tab and not tab.dirty),
        }

    def _on_ui_thread(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` run on the UI thread (queued when called from a worker, which waits
        up to ``ASK_TIMEOUT_S``); its result, or its exception raised here."""
        if QThread.currentThread() is self.thread():
            return fn()
        call = _UiCall(fn)
        try:
            self._sig_call.emit(call)
        except RuntimeError:  # the chat panel is gone
            raise UiCallTimedOut(
                "the app window is closing", hint="Open the workspace again to go on."
            ) from None
        if not call.done.wait(self.ASK_TIMEOUT_S):
            raise UiCallTimedOut(
                "the app did not answer in time (it may be closing)", hint="Try again in a moment."
            )
        if call.error is not None:
            raise call.error
        return call.result

    def _run_call(self, call: _UiCall) -> None:
        call.run()


@dataclass(frozen=True)
class SessionOpened:
    """The worker opened the session of a new chat (before its first turn's events): the
    hand-off to the UI thread, in the same ordered stream. Not an agent event: it never
    leaves the app."""

    session: AgentSession


class AgentTurnBridge(QObject):
    # Every agent event, on the UI thread, in order.
    sig_event_received = Signal(object)
    # A turn started (True) or ended (False).
    sig_turn_running = Signal(bool)
    # The turn could not run or broke off (the exception: NoModelConfigured, ...).
    sig_turn_failed = Signal(object)
    # The conversation changed (the session's conversation id, or None for a new chat).
    sig_conversation_changed = Signal(object)
    # Internal: background events from the agent's threads.
    _sig_background = Signal(object)

    def __init__(
        self,
        services: AppServices,
        parent: QObject | None = None,
        *,
        registry: ToolRegistry | None = None,
    ):
        super().__init__(parent)
        self.services = services
        self.registry = registry  # the agent's tools; None: the default registry
        self.session: AgentSession | None = None
        self.worker: Worker | None = None
        self._cancel: CancelToken | None = None
        self._opening: Worker | None = None
        # Made here, on the UI thread: it answers the agent's questions from there.
        self.app_state = UiAppState(services, self)
        self._sig_background.connect(self._handle_event)

    # -- sessions --------------------------------------------------------------------------
    @property
    def conversation_id(self) -> str | None:
        return self.session.conversation.id if self.session is not None else None

    def _new_session(self, conversation_id: str | None) -> AgentSession:
        from lantide.agent.services import EngineServices
        from lantide.agent.session import AgentSession

        engine = EngineServices(
            self.services.workspace, self.services.settings, query_service=self.services.query
        )
        return AgentSession.open(
            self.services.workspace,
            conversation_id,
            settings=self.services.settings,
            app=self.app_state,
            services=engine,
            registry=self.registry,
            on_background_event=self._background_event,
        )

    def _background_event(self, event) -> None:
        """Called on the agent's background threads; queued to the UI thread."""
        # RuntimeError: the panel was closed while the background call ran
        with contextlib.suppress(RuntimeError):
            self._sig_background.emit(event)

    def new_conversation(self) -> None:
        """Start afresh; the conversation's file is created with its first message."""
        if self.running:
            return
        self._close_session()
        self._report_tokens()
        self.sig_conversation_changed.emit(None)

    def when_engine_ready(self, callback) -> None:
        """Call ``callback()`` once the app's query service opened (or failed to open).

        A session made before would open a second DuckDB connection of its own."""
        services = self.services
        if services.query is not None or services.query_error is not None:
            callback()
            return
        fired: list[bool] = []

        def once(*_):
            if not fired:
                fired.append(True)
                for signal in (services.sig_query_ready, services.sig_query_failed):
                    with contextlib.suppress(RuntimeError, TypeError):  # already disconnected
                        signal.disconnect(once)
                callback()

        services.sig_query_ready.connect(once)
        services.sig_query_failed.connect(once)

    def open_conversation(self, conversation_id: str, on_opened=None, on_error=None) -> None:
        """Reopen a conversation (its file and ledger read in a worker); then
        ``on_opened((session, ledger_steps))``."""
        if self.running:
            return
        if self.services.query is None and self.services.query_error is None:
            self.when_engine_ready(
                lambda: self.open_conversation(conversation_id, on_opened, on_error)
            )
            return

        def read(_ctx):
            session = self._new_session(conversation_id)
            return session, session.ledger.steps()

        def opened(result) -> None:
            self._close_session()
            self.session = result[0]
            self._report_tokens()
            self.sig_conversation_changed.emit(self.session.conversation.id)
            if on_opened:
                on_opened(result)

        self._opening = self.services.workers.submit(
            read,
            on_result=opened,
            on_error=on_error or self.sig_turn_failed.emit,
            name="open conversation",
        )

    def _close_session(self) -> None:
        if self.session is not None:
            try:
                self.session.close()
            except Exception as exc:  # closing must not stop the chat from going on
                log.warning("closing the agent session failed: %s", exc)
        self.session = None

    # -- turns ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.worker is not None

    def send(self, message: str, *, instruction: bool = False) -> bool:
        """Run one turn with ``message``. ``instruction`` marks a message the app wrote
        (e.g. Resolve (N)), shown differently from what the analyst typed."""
        if self.running or not message.strip():
            return False
        if self.services.query is None and self.services.query_error is None:
            # The agent shares the app's query service; wait until it is open (or failed).
            self.when_engine_ready(lambda: self.send(message, instruction=instruction))
            return True
        from lantide.agent.cancel import CancelToken

        cancel = CancelToken()
        self._cancel = cancel
        session = self.session
        self.app_state.capture()  # what the analyst sees as the turn starts

        def turn(context):
            current = session or self._new_session(None)
            if session is None:
                context.emit(SessionOpened(current))
            if instruction:
                # Filed under the previous turn number: the turn's own number is derived
                # from the last one recorded, which this event must not move.
                current.conversation.add_event(
                    APP_INSTRUCTION, current.conversation.last_turn, text=message
                )
            for event in current.run_turn(message, cancel):
                context.emit(event)
            return current

        self.worker = self.services.workers.submit(
            turn,
            on_event=self._handle_event,
            on_error=self._turn_failed,
            on_finished=self._turn_ended,
            on_cancel=cancel.cancel,
            name="agent turn",
        )
        self.sig_turn_running.emit(True)
        return True

    def stop(self) -> None:
        """Cancel the running turn (closes the model stream, interrupts its query)."""
        if self.worker is not None:
            self.worker.cancel()

    def _turn_failed(self, exc: BaseException) -> None:
        self.sig_turn_failed.emit(exc)

    def _turn_ended(self) -> None:
        self.worker = None
        self._cancel = None
        self.sig_turn_running.emit(False)
        self._report_tokens()

    def close(self) -> None:
        self.stop()
        self._close_session()

    # -- events --------------------------------------------------------------------------
    def _handle_event(self, event: Event | SessionOpened) -> None:
        if isinstance(event, SessionOpened):
            self.session = event.session
            self.sig_conversation_changed.emit(self.session.conversation.id)
            return
        try:
            self._tell_the_app(event)
        except Exception as exc:  # a side effect must never break the chat's stream
            log.warning("handling %s failed: %s", event.name, exc)
        self.sig_event_received.emit(event)

    def _tell_the_app(self, event: Event) -> None:
        """What an event changes outside the chat panel."""
        # Imported here: the agent's modules load after start-up (warm_up_agent).
        from lantide.agent.events import (
            FOCUSED_PROJECT,
            TOUCHES_DOCUMENTS,
            TOUCHES_TABLES,
            AssistantMessage,
            DocumentChanged,
            EditProposed,
            ReflectionRecorded,
            StateChanged,
            StepRecorded,
            StepSummarized,
            TokenBudgetReached,
            ToolReturned,
            TurnFinished,
        )

        services = self.services
        match event:
            case StepRecorded(step=step):
                services.sig_step_recorded.emit(dict(step))
            case StepSummarized():
                services.sig_step_recorded.emit(
                    {
                        "step_id": event.step_id,
                        "summary": event.summary,
                        "summary_status": event.summary_status,
                        "conversation_id": self.conversation_id,
                        "partial": True,
                    }
                )
            case ToolReturned(ok=True, touches=touches) if TOUCHES_TABLES in touches:
                services.notify_tables_changed()
                services.notify_listing_changed()  # e.g. create_sql_tab's file
            case ToolReturned(ok=True, touches=touches) if TOUCHES_DOCUMENTS in touches:
                services.notify_listing_changed()  # e.g. create_chart's file
            case DocumentChanged(path=path):  # written at once (agent_edits: apply): reload
                services.notify_paths_changed([services.workspace.root / path])
            case EditProposed(path=path, edit_id=edit_id):  # the tab shows it for review
                services.sig_edit_proposed.emit(str(services.workspace.root / path), edit_id)
            case StateChanged(what=what, project=str(project)) if what != FOCUSED_PROJECT:
                # The focus needs nothing here: the agent changed it through UiAppState.
                services.notify_paths_changed(
                    [services.workspace.projects_dir / project / "project.json"]
                )
            case AssistantMessage() | TurnFinished() | ReflectionRecorded() | TokenBudgetReached():
                self._report_tokens()

    def _report_tokens(self) -> None:
        """The conversation's tokens so far (its budget's count: every request, reviews
        and background calls included), for the status bar."""
        budget = getattr(self.session, "budget", None)
        self.services.report_tokens(budget.used if budget is not None else 0)
