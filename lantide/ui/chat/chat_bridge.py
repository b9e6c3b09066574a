"""The agent's event stream as Qt signals: the one bridge between a chat turn and the UI.

:class:`AgentTurnBridge` holds the :class:`~lantide.agent.session.AgentSession` of the chat's
conversation and runs each turn in a worker of :mod:`lantide.ui.workers`: the generator
``session.run_turn(message, cancel)`` is iterated there and every event is handed to the
UI thread with ``context.emit``. Stop calls ``Worker.cancel``, whose ``on_cancel`` cancels
the turn's :class:`~lantide.agent.cancel.CancelToken` (that closes the model's HTTP stream
and interrupts the agent's running query at once). Background results (the conversation's
title, knowledge proposals) arrive from the agent's own threads and are forwarded the same
way.

Events also reach the rest of the app here: ledger steps go to the ledger panel, changed
documents to their open tabs, new cached tables to the explorer, a focused project to
the window. :class:`UiAppState` gives the agent the live open-tab state, unsaved text
included.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from lantide.agent.app_state import AppState, OpenTab
from lantide.workspace.layout import project_relpath, sql_tab_relpath

log = logging.getLogger(__name__)

# Tools whose success may have created or replaced cached tables.
TABLE_TOOLS = {"run_query", "run_sql_tab", "source_run_sql_tab", "create_sql_tab"}
APP_INSTRUCTION = "app_instruction"  # conversation event marking a message the app sent
TEXT_TABS = ("plan", "report", "sql")  # tabs whose unsaved text the agent is given


def warm_up_agent() -> None:
    """Import the agent, the ``openai`` SDK and the tokenizer (call from a worker), so the
    first turn does not pay for them and their objects are frozen out of the collector's
    way (:mod:`lantide.ui.gc_pauses`) before an answer streams.

    Building the tokenizer is one call into tiktoken's Rust core that holds the GIL for
    50-200 ms: a one-time hitch, taken here (a moment after start-up) rather than while
    the first answer streams."""
    from lantide.ui.gc_pauses import loading_long_lived

    with loading_long_lived("agent libraries"):
        import lantide.agent.session  # noqa: F401 - the loop, prompt, tools
        import openai

        from lantide.tokens import count_tokens

        # Resources load lazily on first access; no request is made (the address is unused).
        openai.OpenAI(api_key="warm-up", base_url="http://127.0.0.1:9/v1").chat.completions
        count_tokens("warm up")


def tab_path(ref) -> str:
    """The workspace-relative path the agent knows a tab by."""
    if ref.kind in ("plan", "report"):
        return project_relpath(ref.project, ref.name)
    if ref.kind == "sql":
        return sql_tab_relpath(ref.project, ref.name)
    return ref.name


class UiAppState(QObject):
    """The agent's :class:`~lantide.agent.app_state.AppStateProvider`: the live open tabs,
    with the active tab's unsaved text (a dirty Plan, Report or SQL tab) as
    ``OpenTab.content``, so the agent sees what the analyst sees.

    The agent runs in a worker and must not touch widgets, so the state is snapshot on the
    UI thread: :meth:`capture` when a turn starts, and again each time the agent asks
    (:meth:`app_state` from the worker queues the request to the UI thread and waits for the
    answer). When the UI thread does not answer within ``ASK_TIMEOUT_S`` (it is closing the
    window and waiting for the worker), the last snapshot serves.
    """

    ASK_TIMEOUT_S = 2.0
    _sig_asked = Signal()

    def __init__(self, services, parent: QObject | None = None):
        super().__init__(parent)
        self.services = services
        self._condition = threading.Condition()
        self._asked = self._answered = 0
        self._latest = AppState()
        self._sig_asked.connect(self._answer)  # queued: the worker emits, the UI answers

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
            open_tabs.append(OpenTab(t.kind, tab_path(t), t.dirty or content is not None,
                                     content))
        state = AppState(focused_project=services.focused_project_name(), open_tabs=open_tabs,
                         active_tab=index)
        with self._condition:
            self._latest = state
        return state

    def app_state(self) -> AppState:
        if QThread.currentThread() is self.thread():
            return self.capture()
        with self._condition:
            self._asked += 1
            wanted = self._asked
        try:
            self._sig_asked.emit()
        except RuntimeError:  # the chat panel is gone; the last snapshot is all there is
            pass
        else:
            with self._condition:
                self._condition.wait_for(lambda: self._answered >= wanted, self.ASK_TIMEOUT_S)
        with self._condition:
            return self._latest

    def _answer(self) -> None:
        with self._condition:
            asked = self._asked
        self.capture()
        with self._condition:
            self._answered = max(self._answered, asked)
            self._condition.notify_all()

    def file_changed(self, path: str) -> dict[str, Any]:
        tab = next((t for t in self.services.open_tabs() if tab_path(t) == path), None)
        # The signals are queued to the UI thread, in this order: the tab keeps the text it
        # had (to offer Keep / Undo), then a clean tab reloads.
        self.services.sig_agent_edited.emit(str(self.services.workspace.root / path))
        self.services.notify_paths_changed([self.services.workspace.root / path])
        return {"open": tab is not None, "dirty": bool(tab and tab.dirty),
                "reloaded": bool(tab and not tab.dirty)}


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

    def __init__(self, services, parent: QObject | None = None):
        super().__init__(parent)
        self.services = services
        self.session = None
        self.worker = None
        self._cancel = None
        self._opening = None
        # Made here, on the UI thread: it answers the agent's questions from there.
        self.app_state = UiAppState(services, self)
        self._sig_background.connect(self._handle_event)

    # -- sessions --------------------------------------------------------------------------
    @property
    def conversation_id(self) -> str | None:
        return self.session.conversation.id if self.session is not None else None

    def _new_session(self, conversation_id: str | None):
        from lantide.agent.services import EngineServices
        from lantide.agent.session import AgentSession

        engine = EngineServices(self.services.workspace, self.services.settings,
                                query_service=self.services.query)
        return AgentSession.open(self.services.workspace, conversation_id,
                                 settings=self.services.settings, app=self.app_state,
                                 services=engine, on_background_event=self._background_event)

    def _background_event(self, event) -> None:
        """Called on the agent's background threads; queued to the UI thread."""
        try:
            self._sig_background.emit(event)
        except RuntimeError:  # the panel was closed while the background call ran
            pass

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
        fired = []

        def once(*_):
            if not fired:
                fired.append(True)
                for signal in (services.sig_query_ready, services.sig_query_failed):
                    try:
                        signal.disconnect(once)
                    except (RuntimeError, TypeError):
                        pass
                callback()

        services.sig_query_ready.connect(once)
        services.sig_query_failed.connect(once)

    def open_conversation(self, conversation_id: str, on_opened=None, on_error=None) -> None:
        """Reopen a conversation (its file and ledger read in a worker); then
        ``on_opened((session, ledger_steps))``."""
        if self.running:
            return
        if self.services.query is None and self.services.query_error is None:
            self.when_engine_ready(lambda: self.open_conversation(conversation_id, on_opened,
                                                                  on_error))
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
            read, on_result=opened, on_error=on_error or self.sig_turn_failed.emit,
            name="open conversation")

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
                context.emit(("session", current))
            if instruction:
                # Filed under the previous turn number: the turn's own number is derived
                # from the last one recorded, which this event must not move.
                current.conversation.add_event(APP_INSTRUCTION, current.conversation.last_turn,
                                               text=message)
            for event in current.run_turn(message, cancel):
                context.emit(event)
            return current

        self.worker = self.services.workers.submit(
            turn, on_event=self._handle_event, on_error=self._turn_failed,
            on_finished=self._turn_ended, on_cancel=cancel.cancel, name="agent turn")
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
    def _handle_event(self, event) -> None:
        if isinstance(event, tuple) and event and event[0] == "session":
            self.session = event[1]
            self.sig_conversation_changed.emit(self.session.conversation.id)
            return
        name = getattr(event, "name", "")
        services = self.services
        try:
            if name == "step_recorded":
                services.sig_step_recorded.emit(dict(event.step))
            elif name == "step_summarized":
                services.sig_step_recorded.emit({
                    "step_id": event.step_id, "summary": event.summary,
                    "summary_status": event.summary_status,
                    "conversation_id": self.conversation_id, "partial": True})
            elif name == "tool_returned" and event.ok and event.tool in TABLE_TOOLS:
                services.notify_tables_changed()
            elif name == "document_changed":
                services.notify_paths_changed([services.workspace.root / event.path])
            elif name == "state_changed":
                self._state_changed(event)
            elif name in ("assistant_message", "turn_finished", "reflection_recorded",
                          "token_budget_reached"):
                self._report_tokens()
        except Exception as exc:  # a side effect must never break the chat's stream
            log.warning("handling %s failed: %s", name, exc)
        self.sig_event_received.emit(event)

    def _state_changed(self, event) -> None:
        if event.what in ("focused_project", "project_focused", "focus"):
            if event.project != self.services.focused_project_name():
                self.services.focus_project(event.project)
        elif event.project:
            project_json = self.services.workspace.projects_dir / event.project / "project.json"
            self.services.notify_paths_changed([project_json])

    def _report_tokens(self) -> None:
        """The conversation's tokens so far (its budget's count: every request, reviews
        and background calls included), for the status bar."""
        budget = getattr(self.session, "budget", None)
        self.services.report_tokens(budget.used if budget is not None else 0)
