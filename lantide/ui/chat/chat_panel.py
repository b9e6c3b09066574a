"""The chat panel: talk with the agent about the workspace.

- The answer streams in as rendered Markdown; each tool call is a compact card that
  expands to its arguments (SQL coloured) and result; a query step links to the ledger.
- ``ask_user`` questions appear inline with their choices and a box for any answer.
- Stop cancels the turn at once (the model's stream is closed, its query interrupted).
- Conversations are listed, named by the secondary model after the first exchange (or
  renamed by hand) and reopened as they were.
- Messages the app sends for the analyst (:meth:`ask`, e.g. *Resolve (N)*) look different
  from what the analyst typed.
- Without a model profile the panel explains how to add one; the rest of the app works.

The agent runs through :class:`~lantide.ui.chat.chat_bridge.AgentTurnBridge`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QMetaMethod, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.chat.chat_activity import ChatActivity
from lantide.ui.chat.chat_bridge import AgentTurnBridge, warm_up_agent
from lantide.ui.chat.chat_markdown import warm_up
from lantide.ui.chat.chat_messages import SetupCard
from lantide.ui.chat.chat_transcript import ChatTranscript
from lantide.ui.chat.conversation_list import ConversationPicker
from lantide.ui.elided_label import ElidedLabel
from lantide.ui.icons import icon
from lantide.ui.shortcuts import shortcut
from lantide.workspace.settings import resolve_profile

if TYPE_CHECKING:
    from lantide.agent.events import Event
    from lantide.ui.services import AppServices

# After the database opened: the renderer and the agent load a moment after start-up, so
# that tiktoken's tokenizer build (one call holding the GIL for 50-200 ms) lands while
# the analyst is still taking in the new window, not in the first turn they send.
WARM_UP_DELAY_MS = 250
NO_MODEL_TEXT = "No model is configured yet"
NO_MODEL_HINT = (
    "The agent needs a model to answer; everything else works without one. Add a "
    "profile in Settings › Models: the base URL of any OpenAI-compatible server "
    "(OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, …), the model name, and its "
    "API key, which is kept in the system keyring. Or start Lantide with "
    "OPENAI_BASE_URL, OPENAI_API_KEY and LANTIDE_MODEL set."
)


class ChatInput(QPlainTextEdit):
    """Enter sends; Shift+Enter starts a new line; Esc stops the answer being written."""

    sig_submitted = Signal()
    sig_stop_requested = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.sig_submitted.emit()
            return
        if QKeySequence(event.keyCombination()) == shortcut("chat_stop"):
            self.sig_stop_requested.emit()
            return
        super().keyPressEvent(event)


class ChatPanel(QWidget):
    # Open the settings dialog (the main window connects it; the no-model notice uses it).
    sig_settings_requested = Signal()
    sig_agent_loaded = Signal()  # the agent, its SDK and the tokenizer are loaded (warm-up)

    def __init__(self, services: AppServices, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ChatPanel")
        self.services = services
        self.bridge = AgentTurnBridge(services, self)
        self.activity = ChatActivity(self)
        self._queued: list[tuple[str, bool]] = []
        self._model: bool | None = None  # a model profile is configured (None: not known yet)
        self._model_text = ""

        self.picker = ConversationPicker(services, self)
        self.picker.sig_conversation_chosen.connect(self.open_conversation)
        self.picker.sig_new_requested.connect(self.new_conversation)
        self.picker.sig_rename_requested.connect(self.rename_conversation)
        self.no_model = SetupCard(
            NO_MODEL_TEXT, NO_MODEL_HINT, "Open Settings", self._open_settings
        )
        self.no_model.hide()  # until the profile lookup says so
        self.transcript = ChatTranscript(self)
        self.transcript.sig_step_clicked.connect(self._step_clicked)
        self.transcript.sig_question_answered.connect(self._answer_question)
        services.sig_edit_decided.connect(self.transcript.edit_decided)
        self.input = ChatInput(self)
        self.input.setPlaceholderText("Ask about your data…  (Enter sends, Shift+Enter: new line)")
        self.input.setFixedHeight(72)
        self.input.setAccessibleName("Message to the agent")
        self.input.sig_submitted.connect(self.send_typed)
        self.input.sig_stop_requested.connect(self.stop)
        self.send_button = QPushButton(icon("run", "accent"), "Send", self)
        self.send_button.clicked.connect(self.send_typed)
        self.stop_button = QPushButton(icon("stop"), "Stop", self)
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.hide()
        self.model_label = ElidedLabel("", self)  # never what keeps the chat from narrowing
        self.model_label.setStyleSheet("color: gray; font-size: small;")
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.model_label, 1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.send_button)
        bottom = QVBoxLayout()
        bottom.setContentsMargins(8, 4, 8, 8)
        bottom.setSpacing(4)
        bottom.addWidget(self.input)
        bottom.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.picker)
        # The card's wrapped text grows tall in a narrow dock: it scrolls rather than
        # making the window taller or being cut off.
        self.no_model_area = QScrollArea(self)
        self.no_model_area.setWidgetResizable(True)
        self.no_model_area.setFrameShape(QFrame.Shape.NoFrame)
        self.no_model_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.no_model_area.setContentsMargins(8, 4, 8, 4)
        # the card at its own height at the top, however tall the area (a tall dock)
        card_column = QWidget(self.no_model_area)
        card_layout = QVBoxLayout(card_column)
        card_layout.setContentsMargins(0, 0, 0, 0)
        card_layout.addWidget(self.no_model)
        card_layout.addStretch(1)
        self.no_model_area.setWidget(card_column)
        self.no_model_area.hide()
        layout.addWidget(self.no_model_area)
        layout.addWidget(self.transcript, 1)
        layout.addLayout(bottom)

        self.bridge.sig_event_received.connect(self._event)
        self.bridge.sig_turn_running.connect(self._running_changed)
        self.bridge.sig_turn_failed.connect(self._turn_failed)
        self.bridge.sig_conversation_changed.connect(self._conversation_changed)
        services.sig_settings_changed.connect(lambda _s: self._update_model_state())
        self._update_model_state()
        self.picker.reload(then=self._open_latest)
        # Markdown, Pygments and sqlglot load in the background, not on the first answer,
        # and after the start-up work (database, explorer), not competing with it.
        self.bridge.when_engine_ready(
            lambda: QTimer.singleShot(WARM_UP_DELAY_MS, self, self._warm_up_markdown)
        )
        self._agent_warmed = False
        self.agent_loaded = False

    # -- public API ------------------------------------------------------------------------
    def ask(self, text: str) -> None:
        """Send ``text`` to the agent for the analyst (shown as an instruction from Lantide).
        While a turn runs it is queued and sent when the turn ends."""
        if not text.strip():
            return
        if self.bridge.running:
            self._queued.append((text, True))
            self.transcript.add_notice("Queued until the current answer is finished.")
            return
        self._send(text, instruction=True)

    def send_typed(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.bridge.running:
            return
        if self._send(text, instruction=False):
            self.input.clear()

    def stop(self) -> None:
        self._queued.clear()
        self.bridge.stop()

    def focus_input(self) -> None:
        self.input.setFocus()

    @property
    def running(self) -> bool:
        return self.bridge.running

    def new_conversation(self) -> None:
        if self.bridge.running:
            return
        self.bridge.new_conversation()
        self.transcript.reset()
        self.picker.set_current(None)

    def open_conversation(self, conversation_id: str) -> None:
        if self.bridge.running:
            self.picker.set_current(self.bridge.conversation_id)
            return
        self.bridge.open_conversation(
            conversation_id, on_opened=self._replay, on_error=self._open_failed
        )

    def rename_conversation(self, title: str) -> None:
        session = self.bridge.session
        if session is None:
            return
        conversation_id = session.conversation.id
        self.services.workers.submit(
            lambda _ctx: session.conversation.set_title(title),
            on_result=lambda _r: self._titled(conversation_id, title),
            on_error=lambda exc: self.services.report_error(exc, "Renaming the conversation"),
            name="rename conversation",
        )

    def shutdown(self) -> None:
        self.bridge.close()

    def _titled(self, conversation_id: str, title: str) -> None:
        self.picker.set_title(conversation_id, title)
        self.services.sig_conversation_titled.emit(conversation_id, title)

    # -- sending ---------------------------------------------------------------------------
    def _send(self, text: str, *, instruction: bool) -> bool:
        if self._model is False:
            self._update_model_state()
            self.transcript.add_notice(
                f"{NO_MODEL_TEXT}: add a model profile in Settings.", level="warning"
            )
            return False
        self.transcript.answer_open_questions(text)
        self.transcript.add_user(text, instruction=instruction)
        return self.bridge.send(text, instruction=instruction)

    def _answer_question(self, answer: str) -> None:
        if not self.bridge.running:
            self._send(answer, instruction=False)

    # -- reacting --------------------------------------------------------------------------
    def _event(self, event: Event) -> None:
        from lantide.agent.events import ConversationTitled  # loaded after start-up

        self.transcript.handle_event(event)
        self.activity.on_event(event)
        if isinstance(event, ConversationTitled):
            self.picker.set_title(event.conversation_id, event.title)
            self.services.sig_conversation_titled.emit(event.conversation_id, event.title)

    def _running_changed(self, running: bool) -> None:
        self.send_button.setVisible(not running)
        self.stop_button.setVisible(running)
        self.picker.setEnabled(not running)
        if not running:
            self.model_label.setText(self._model_text)
        self.activity.running_changed(running)  # "thinking…", "running a query…"
        if not running and self._queued:
            text, instruction = self._queued.pop(0)
            self._send(text, instruction=instruction)

    def _turn_failed(self, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        self.transcript.add_notice(message, hint=getattr(exc, "hint", None), level="error")
        if getattr(exc, "code", "") == "NO_MODEL":
            self._update_model_state()

    def _conversation_changed(self, conversation_id) -> None:
        self.services.set_conversation(conversation_id)
        self.picker.set_current(conversation_id)

    def _open_latest(self, infos) -> None:
        if infos and self.bridge.session is None and not self.bridge.running:
            self.open_conversation(infos[0].id)

    def _replay(self, opened) -> None:
        session, steps = opened
        self.transcript.replay(session.conversation, steps)
        # what became of the edits it proposed (decided since, in the app or with lantide edits)
        self.services.workers.submit(
            _edit_states,
            self.services.workspace,
            session.conversation.id,
            on_result=self._edit_states,
            name="edit states",
        )

    def _edit_states(self, states: dict) -> None:
        for edit_id, state in states.items():
            self.transcript.edit_decided(edit_id, state)

    def _open_failed(self, exc: BaseException) -> None:
        self.services.report_error(exc, "Opening the conversation")
        self.picker.set_current(self.bridge.conversation_id)

    def _step_clicked(self, step_id: str) -> None:
        conversation_id = self.bridge.conversation_id
        if conversation_id and step_id:
            self.services.sig_step_selected.emit(conversation_id, step_id)

    # -- model state -----------------------------------------------------------------------
    def _update_model_state(self) -> None:
        """Find the primary model profile in a worker (it asks the keyring, which can be
        slow), then show whether the agent can answer."""
        settings = self.services.settings

        def shown(profile) -> None:
            self._model = profile is not None
            self._model_text = f"{profile.model} · {profile.name}" if profile else "no model"
            self.no_model.setVisible(profile is None)
            self.no_model_area.setVisible(profile is None)
            self.transcript.show_hint(profile is not None)
            self.send_button.setEnabled(profile is not None)
            if not self.bridge.running:
                self.model_label.setText(self._model_text)
            if profile is not None and not self._agent_warmed:
                self._agent_warmed = True
                self.bridge.when_engine_ready(
                    lambda: QTimer.singleShot(WARM_UP_DELAY_MS, self, self._warm_up_agent)
                )

        self.services.workers.submit(
            lambda _ctx: resolve_profile(settings, "primary"),
            on_result=shown,
            on_error=lambda exc: shown(None),
            name="find the model profile",
        )

    # Not while a turn runs: it loads what it needs itself, and its stream is best left alone.
    def _warm_up_markdown(self) -> None:
        if not self.bridge.running:
            self.services.workers.submit(
                lambda _ctx: _load_markdown_renderer(),
                name="load the Markdown renderer",
                on_error=lambda exc: None,
            )

    # Also while a turn runs (it started before the warm-up): then everything is loaded
    # already and this returns at once; a cold turn waits on the same import locks.
    def _warm_up_agent(self) -> None:
        self.services.workers.submit(
            lambda _ctx: warm_up_agent(),
            name="load the agent",
            on_result=self._agent_loaded,  # a slot: gone with us
            on_error=lambda exc: None,
        )

    def _agent_loaded(self, _result=None) -> None:
        self.agent_loaded = True
        self.sig_agent_loaded.emit()

    def _open_settings(self) -> None:
        signal = QMetaMethod.fromSignal(self.sig_settings_requested)
        if self.isSignalConnected(signal):
            self.sig_settings_requested.emit()
            return
        opener = getattr(self.window(), "open_settings", None)
        if callable(opener):
            opener()


def _load_markdown_renderer() -> None:
    from lantide.ui.startup.gc_pauses import loading_long_lived

    with loading_long_lived("Markdown renderer"):
        warm_up()


def _edit_states(_context, workspace, conversation_id: str) -> dict[str, str]:
    """Per edit the conversation proposed, what the analyst made of it (every project)."""
    from lantide.docs.edit_review import edit_states
    from lantide.errors import LantideError

    states: dict[str, str] = {}
    for project in workspace.list_projects():
        try:
            states.update(edit_states(project, conversation_id))
        except LantideError:
            continue
    return states
