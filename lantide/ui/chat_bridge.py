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
the window. :class:`UiAppState` gives the agent the live open-tab state.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject, Signal

from lantide.agent.app_state import AppState, OpenTab

log = logging.getLogger(__name__)

# Tools whose success may have created or replaced cached tables.
TABLE_TOOLS = {"run_query", "run_sql_tab", "source_run_sql_tab", "create_sql_tab"}
APP_INSTRUCTION = "app_instruction"  # conversation event marking a message the app sent


def tab_path(ref) -> str:
    """The workspace-relative path the agent knows a tab by."""
    if ref.kind in ("plan", "report"):
        return f"projects/{ref.project}/{ref.name}"
    if ref.kind == "sql":
        return f"projects/{ref.project}/sql/{ref.name}.sql"
    return ref.name


class UiAppState:
    """The agent's :class:`~lantide.agent.app_state.AppStateProvider`, read from the live
    window state (called on the turn's worker thread; it only reads copies)."""

    def __init__(self, services):
        self.services = services

    def app_state(self) -> AppState:
        tabs = self.services.open_tabs()
        active = self.services.active_tab()
        keys = [t.key() for t in tabs]
        index = keys.index(active.key()) if active is not None and active.key() in keys else None
        return AppState(focused_project=self.services.focused_project_name(),
                        open_tabs=[OpenTab(t.kind, tab_path(t), t.dirty) for t in tabs],
                        active_tab=index)

    def file_changed(self, path: str) -> dict[str, Any]:
        tab = next((t for t in self.services.open_tabs() if tab_path(t) == path), None)
        # The signal is queued to the UI thread, where a clean tab reloads.
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
                                 settings=self.services.settings, app=UiAppState(self.services),
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
            elif name in ("assistant_message", "turn_finished"):
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
        prompt = getattr(self.session, "last_prompt", None)
        if prompt is not None:
            self.services.report_tokens(prompt.tokens)
