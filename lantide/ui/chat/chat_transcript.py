"""The chat transcript: a scrolling column of messages, tool cards, questions and notices,
built from the agent's live events or replayed from a conversation file.

It follows the bottom while the analyst is there and stays put when they scrolled up to
read. Step links (in tool cards and on ``[[QUERY_STEP]]`` lines) are re-emitted as
``sig_step_clicked``; an answer to an inline question as ``sig_question_answered``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from lantide.ui.chat.chat_answer import AssistantMessageWidget
from lantide.ui.chat.chat_bridge import APP_INSTRUCTION
from lantide.ui.chat.chat_markdown import STEP_MARKER
from lantide.ui.chat.chat_messages import NoticeWidget, QuestionWidget, UserMessageWidget
from lantide.ui.chat.reflection_card import ReflectionCardWidget
from lantide.ui.chat.tool_card import ToolCardWidget

if TYPE_CHECKING:
    from lantide.agent.events import Event, StateChanged

EMPTY_TEXT = (
    "Ask about the workspace's data: the agent reads the Plan and the schemas, runs "
    "small, checked queries, and records every query step in the ledger below."
)
# Tools shown by their own widget rather than a card (ask_user: the inline question).
INLINE_TOOLS = {"ask_user"}
# a step line that landed on its step links to it, a mismatched one too (the ledger panel
# then says which numbers its result does not hold)
LINKED = ("parsed", "mismatch")
STEP_LINES_EVENT = "step_lines_read"  # lantide.agent.summary_check.STEP_LINES_EVENT
W = TypeVar("W", bound=QWidget)


def step_lines(lines: Any) -> list[tuple[str | None, str]]:
    """A StepLinesRead's lines (from the event or the conversation file) as (id, outcome)."""
    out: list[tuple[str | None, str]] = []
    for line in lines if isinstance(lines, (list, tuple)) else []:
        if isinstance(line, dict):
            step_id = line.get("step_id")
            out.append((step_id if isinstance(step_id, str) else None, str(line.get("outcome"))))
    return out


def is_background(code: str | None) -> bool:
    return code is not None and code.startswith(("BACKGROUND", "KNOWLEDGE"))


class ChatTranscript(QScrollArea):
    sig_step_clicked = Signal(str)
    sig_question_answered = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._landed: dict[str, str] = {}  # replay of an old conversation: linked steps
        self._by_name = False
        self.setWidgetResizable(True)
        self.setAccessibleName("Chat transcript")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._content = QWidget(self)
        self._column = QVBoxLayout(self._content)
        self._column.setContentsMargins(10, 10, 10, 10)
        self._column.setSpacing(8)
        self._column.addStretch(1)
        self.empty_label = QLabel(EMPTY_TEXT, self._content)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setStyleSheet("color: gray; padding: 24px;")
        self._column.insertWidget(0, self.empty_label)
        self.setWidget(self._content)
        self._follow = True
        self._hint_wanted = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(lambda v: setattr(self, "_follow", v >= bar.maximum() - 4))
        bar.rangeChanged.connect(lambda _lo, hi: bar.setValue(hi) if self._follow else None)
        self.reset()

    def show_hint(self, wanted: bool) -> None:
        """Show the empty transcript's hint on using the agent, or not: while no model is
        set up, the set-up card above says what to do, and in a short dock the hint would
        only show its last lines (the transcript keeps to its bottom)."""
        self._hint_wanted = wanted
        empty = self._column.count() <= 2  # nothing but the hint and the stretch
        self.empty_label.setVisible(wanted and empty)
        # Empty and without its hint, the transcript gives its height to what is above
        # it (the set-up card); the first notice or message brings it back (_add).
        if self.parentWidget() is not None:
            self.setVisible(wanted or not empty)

    # -- building blocks -----------------------------------------------------------------
    def reset(self) -> None:
        while self._column.count() > 2:  # keep the empty-state text and the stretch
            item = self._column.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.empty_label.setVisible(self._hint_wanted)
        self.cards: dict[str, ToolCardWidget] = {}
        self.questions: list[QuestionWidget] = []
        self.current_answer: AssistantMessageWidget | None = None
        self.last_answer: AssistantMessageWidget | None = None
        self._follow = True

    def _add(self, widget: W, *, align: Qt.AlignmentFlag | None = None) -> W:
        self.empty_label.hide()
        if self.isHidden() and self.parentWidget() is not None:
            self.show()  # hidden while empty without its hint (show_hint)
        if align is not None:
            row = QWidget(self._content)
            line = QHBoxLayout(row)
            line.setContentsMargins(0, 0, 0, 0)
            if align == Qt.AlignmentFlag.AlignRight:
                line.addStretch(1)
                line.addWidget(widget, 4)
            else:
                line.addWidget(widget, 1)
            self._column.insertWidget(self._column.count() - 1, row)
        else:
            self._column.insertWidget(self._column.count() - 1, widget)
        return widget

    def widgets(self, kind: type | None = None) -> list[QWidget]:
        """Transcript entries in order (for tests and accessibility)."""
        found = []
        for i in range(self._column.count() - 1):
            item = self._column.itemAt(i)
            widget = item.widget() if item is not None else None
            if widget is None or widget is self.empty_label:
                continue
            inner = (
                [w for w in widget.findChildren(QWidget) if w.parent() is widget]
                if type(widget) is QWidget
                else [widget]
            )
            for w in inner:
                if kind is None or isinstance(w, kind):
                    found.append(w)
        return found

    def add_user(self, text: str, *, instruction: bool = False) -> UserMessageWidget:
        self.current_answer = None
        self._follow = True
        return self._add(
            UserMessageWidget(text, instruction=instruction),
            align=None if instruction else Qt.AlignmentFlag.AlignRight,
        )

    def add_notice(
        self, text: str, *, hint: str | None = None, level: str = "info", actions=()
    ) -> NoticeWidget:
        self.current_answer = None
        return self._add(NoticeWidget(text, hint=hint, level=level, actions=list(actions)))

    def _answer_widget(self) -> AssistantMessageWidget:
        if self.current_answer is None:
            widget = AssistantMessageWidget()
            widget.sig_step_clicked.connect(self.sig_step_clicked)
            self.current_answer = self._add(widget)
        return self.current_answer

    def add_card(self, call_id: str, tool: str, arguments: dict) -> ToolCardWidget:
        self.current_answer = None
        card = ToolCardWidget(call_id, tool, arguments)
        card.sig_step_clicked.connect(self.sig_step_clicked)
        self.cards[call_id] = card
        return self._add(card)

    def add_reflection(self, reflection: dict) -> ReflectionCardWidget:
        self.current_answer = None
        return self._add(ReflectionCardWidget(reflection))

    def add_question(self, question: str, choices: list[str]) -> QuestionWidget:
        self.current_answer = None
        widget = QuestionWidget(question, choices)
        widget.sig_answered.connect(self.sig_question_answered)
        self.questions.append(widget)
        return self._add(widget)

    def answer_open_questions(self, answer: str) -> None:
        for question in self.questions:
            if question.answer is None:
                question.set_answered(answer)

    def edit_decided(self, edit_id: str, state: str) -> None:
        """The analyst decided the agent's edit ``edit_id``: its card says what it is now."""
        for card in self.cards.values():
            if card.result and card.result.get("edit_id") == edit_id:
                card.set_review_state(state)

    def card_for_step(self, step_id: str) -> ToolCardWidget | None:
        return next((c for c in self.cards.values() if c.step_id == step_id), None)

    # -- live events -----------------------------------------------------------------------
    def handle_event(self, event: Event) -> None:
        # Imported here: the agent's modules load after start-up (warm_up_agent).
        from lantide.agent.events import (
            AssistantMessage,
            ContextCompacted,
            DocumentChanged,
            ErrorOccurred,
            KnowledgeProposed,
            KnowledgeReorganized,
            LogLinesSkipped,
            ModelRetrying,
            QuestionAsked,
            ReflectionRecorded,
            StateChanged,
            StepLinesRead,
            StepSummarized,
            TextDelta,
            TokenBudgetReached,
            ToolCalled,
            ToolReturned,
            TurnContinued,
            TurnFinished,
        )

        match event:
            case TextDelta():
                self._answer_widget().append(event.text)
            case AssistantMessage():
                if event.text.strip():
                    widget = self._answer_widget()
                    widget.set_text(event.text)
                    self.last_answer = widget
                elif self.current_answer is not None and not self.current_answer.text.strip():
                    self.current_answer.deleteLater()
                self.current_answer = None
            case ToolCalled():
                if event.tool not in INLINE_TOOLS:
                    self.add_card(event.call_id, event.tool, event.arguments)
            case ToolReturned():
                card = self.cards.get(event.call_id)
                if card is not None:
                    card.set_result(event.ok, dict(event.result), event.duration_ms)
            case StepSummarized():
                card = self.card_for_step(event.step_id)
                if card is not None:
                    card.set_step(event.step_id, event.summary)
            case StepLinesRead():
                if self.last_answer is not None:
                    self.last_answer.set_step_lines(step_lines(event.lines))
            case QuestionAsked():
                self.add_question(event.question, list(event.choices))
            case ReflectionRecorded():
                self.add_reflection(dict(event.reflection))
            case TokenBudgetReached():
                self.add_notice(
                    f"This conversation has used {event.used:,} of its "
                    f"{event.budget:,}-token budget"
                    + (": the agent stops here." if event.stopped else "."),
                    hint="Start a new conversation, or change the budget in Settings.",
                    level="error" if event.stopped else "warning",
                )
            case ModelRetrying():
                self.add_notice(
                    f"The model did not answer ({event.reason}); trying again in "
                    f"{event.delay_seconds:g} s (attempt {event.attempt}).",
                    level="warning",
                )
            case TurnContinued():
                self.add_notice(
                    f"Reached the step limit; going on by itself (round "
                    f"{event.round} of {event.rounds}, Settings > Agent)."
                )
            case ContextCompacted():
                self.add_notice(
                    f"Earlier tool results were shortened to fit the model's "
                    f"context window ({event.tokens_before:,} → "
                    f"{event.tokens_after:,} tokens)."
                )
            case ErrorOccurred():
                if is_background(event.code):  # the title or a knowledge proposal
                    self.add_notice(f"Background task: {event.message}", hint=event.hint)
                else:
                    self.add_notice(event.message, hint=event.hint, level="error")
            case LogLinesSkipped():
                lines = event.describe()
                shown = "; ".join(lines[:3]) + (
                    f"; and {len(lines) - 3} more" if len(lines) > 3 else ""
                )
                self.add_notice(
                    f"Some saved lines of this conversation could not be read "
                    f"and were left out: {shown}.",
                    hint="The files are left as they are; the rest of the conversation goes on.",
                    level="warning",
                )
            case KnowledgeReorganized():
                self.add_notice(
                    f"The {event.scope} knowledge was grouped under headings"
                    + ("." if event.applied else f" (not applied: {event.reason}).")
                )
            case DocumentChanged():
                self.add_notice(f"Updated {event.path}.")
            case StateChanged():
                self.add_notice(_state_text(event))
            case KnowledgeProposed():
                self.add_notice(
                    f"Proposed knowledge, waiting for your review in the Knowledge "
                    f"panel: {'; '.join(event.entries)}"
                )
            case TurnFinished():
                for card in self.cards.values():
                    card.set_cancelled()
                if event.reason == "cancelled":
                    self.add_notice("Stopped. Send a new message to go on.")

    # -- replay ------------------------------------------------------------------------------
    def replay(self, conversation, steps: list[dict[str, Any]] | None = None) -> None:
        """Show a reopened conversation as it happened."""
        self.reset()
        # the texts the app sent, in order; each marks the next user message equal to it
        instructions = [e.get("text") for e in conversation.events((APP_INSTRUCTION,))]
        answered = {e.get("question") for e in conversation.events(("question_answered",))}
        answers = {
            e.get("question"): e.get("answer") for e in conversation.events(("question_answered",))
        }
        # the engine's outcome of each answer's step lines, answer by answer, in order
        parsed_steps = [
            step_lines(e.get("lines")) for e in conversation.events((STEP_LINES_EVENT,))
        ]
        # a conversation kept before the engine recorded the outcomes: a line is linked only
        # when it names a step whose summary landed, never by its position
        self._landed = {
            s["step_id"]: str(s.get("summary_status"))
            for s in steps or []
            if s.get("summary_status") in LINKED
        }
        self._by_name = not parsed_steps
        for record in conversation.records:
            kind = record.get("type")
            if kind == "event" and record.get("kind") == "question_asked":
                question = self.add_question(
                    record.get("question", ""), list(record.get("choices") or [])
                )
                if record.get("question") in answered:
                    question.set_answered(answers.get(record.get("question")) or "")
                continue
            if kind == "event" and record.get("kind") == "reflection":
                self.add_reflection(record.get("reflection") or {})
                continue
            if kind not in ("message", "messages"):
                continue
            messages = [record.get("message")] if kind == "message" else record.get("messages", [])
            meta = [record] if kind == "message" else (record.get("meta") or [])
            for i, message in enumerate(messages):
                if not isinstance(message, dict):
                    continue
                extra = meta[i] if i < len(meta) and isinstance(meta[i], dict) else {}
                self._replay_message(message, extra, record.get("turn"), instructions, parsed_steps)
        self.current_answer = None

    def _lines_by_name(self, content: str) -> list[tuple[str | None, str]]:
        from lantide.agent.ledger import parse_step_lines

        out: list[tuple[str | None, str]] = []
        for line in parse_step_lines(content, set(self._landed)):
            status = self._landed.get(line.step_ref or "")
            out.append((line.step_ref, status) if status else (None, ""))
        return out

    def _replay_message(
        self,
        message: dict,
        extra: dict,
        turn,
        instructions,
        parsed_steps: list[list[tuple[str | None, str]]],
    ) -> None:
        role = message.get("role")
        content = message.get("content") or ""
        if role == "user" and extra.get("engine_note"):
            return  # the engine's words to the model (a reflection's problems): its card shows them
        if role == "user":
            instruction = bool(instructions) and content == instructions[0]
            if instruction:
                instructions.pop(0)
            self.add_user(content, instruction=instruction)
        elif role == "assistant":
            if extra.get("engine_note"):
                self.add_notice(content)
            elif content.strip():
                widget = self._answer_widget()
                if STEP_MARKER in content and parsed_steps:
                    widget.step_lines = parsed_steps.pop(0)
                elif STEP_MARKER in content and self._by_name:
                    widget.step_lines = self._lines_by_name(content)
                widget.set_text(content)
                self.current_answer = None
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                if function.get("name") in INLINE_TOOLS:
                    continue
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except json.JSONDecodeError:
                    arguments = {"arguments": function.get("arguments")}
                self.add_card(call.get("id", ""), function.get("name", "?"), arguments)
        elif role == "tool":
            card = self.cards.get(message.get("tool_call_id", ""))
            if card is None:
                return
            try:
                result = json.loads(content) if content else {}
            except json.JSONDecodeError:
                result = {"text": content}
            result = result if isinstance(result, dict) else {"result": result}
            card.set_result(bool(extra.get("ok", "error" not in result)), result)


def _state_text(event: StateChanged) -> str:
    from lantide.agent.events import ANALYSIS_ACTIVE, FOCUSED_PROJECT, PROJECT_STATUS

    if event.what == FOCUSED_PROJECT:
        return f"Focused project {event.project}."
    if event.what == PROJECT_STATUS:
        return f"Project {event.project} is now {event.value}."
    if event.what == ANALYSIS_ACTIVE:
        where = f"project {event.project}" if event.project else "this conversation"
        return f"Statistical analysis is approved for {where} (until its status changes)."
    return f"{event.what}: {event.value}"
