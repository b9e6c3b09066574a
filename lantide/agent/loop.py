"""The ReAct loop: one analyst message in, a stream of events out.

:meth:`AgentSession.run_turn` is a plain generator. Each iteration re-assembles the
prompt (system layers, summary, the tools of the current state, history, active tab),
streams the model's answer, runs the tools it asked for and feeds their results back. A
turn ends on a final answer, on ``ask_user`` (the next message answers; the other calls of
that message are not run), on cancel, at the iteration limit (with an honest note, after up
to ``auto_continue_rounds`` automatic continuations), when the same failing call is
repeated or the same successful call goes round in a loop, when the request cannot fit
the context window, or on a model error (keeping whatever the model had sent). The
conversation file always stays a valid history: every tool call gets a result, even a cancelled one.
A refused call's result has every long text cut in its middle (a refusal may quote the
argument it refuses), and its arguments are cut in the saved assistant message when they
are over :data:`REFUSED_ARGUMENTS_KEPT` characters (issue 28: a 200 KB argument was
repeated whole in the chat and the conversation).
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Mapping
from typing import TYPE_CHECKING, Unpack

from lantide.agent.cancel import CancelToken, TurnCancelled
from lantide.agent.consent import ANALYSES, CONSENT_KIND, answer_fields
from lantide.agent.conversation import Conversation
from lantide.agent.edit_notice import mark_turn
from lantide.agent.events import (
    AssistantMessage,
    ContextCompacted,
    ErrorOccurred,
    Event,
    QuestionAsked,
    StepLineOutcome,
    StepLinesRead,
    StepRecorded,
    StepSummarized,
    TextDelta,
    ToolCalled,
    ToolReturned,
    TurnContinued,
    TurnFinished,
    TurnStarted,
)
from lantide.agent.history import MESSAGE_OVERHEAD_TOKENS, TurnCompaction, turn_floor_tokens
from lantide.agent.ledger import apply_summaries, mark_missing
from lantide.agent.message_types import Message, MessageMeta
from lantide.agent.model_client import (
    ContextLengthExceeded,
    ModelError,
    ModelReply,
    ModelStreamBroken,
    ToolCallRequest,
)
from lantide.agent.model_stream import stream_reply
from lantide.agent.prompt import AssembledPrompt, output_reserve
from lantide.agent.reflection import Reflector
from lantide.agent.summary_check import NOTICE_EVENT, STEP_LINES_EVENT, TOLD_EVENT, merged
from lantide.agent.summary_check import notice as summary_notice
from lantide.agent.tools.context import AskedQuestion, ToolContext
from lantide.agent.tools.registry import ToolError, cut_error_texts, state_of
from lantide.errors import LantideError
from lantide.templates import render_prompt

if TYPE_CHECKING:
    from lantide.agent.session import AgentSession  # which imports this module

ANSWERED, QUESTION, CANCELLED = "answered", "question", "cancelled"
ITERATION_LIMIT, REPEATED_FAILURE, ERROR = "iteration_limit", "repeated_failure", "error"
REPEATED_CALL, CONTEXT_FULL = "repeated_call", "context_full"
REFLECTION_FAILED, TOKEN_BUDGET = "reflection_failed", "token_budget"
REFUSED_ARGUMENTS_KEPT = 4_000  # characters of a refused call's arguments kept whole
SAME_CALL_RUNS = 2  # a successful call runs this often with the same arguments in one turn
SAME_CALL_STOP = 4  # ... and the turn ends when it is asked for this often


class _TurnOver(Exception):
    def __init__(self, reason: str, message: str | None = None):
        self.reason = reason
        self.message = message


def _asks(call: ToolCallRequest) -> bool:
    """Whether an ask_user call can ask (a malformed one fails and the turn goes on, as
    does a consent question naming no kind of analysis: Lantide asks nothing then)."""
    try:
        args = call.parsed_arguments()
        question = args.get("question")
    except (ValueError, AttributeError):
        return False
    analysis = args.get("analysis")
    if args.get("kind") == CONSENT_KIND and not (
        isinstance(analysis, list) and set(analysis) & set(ANALYSES)
    ):
        return False
    return isinstance(question, str) and bool(question.strip())


class TurnRunner:
    """The state of one turn; :meth:`run` is the generator."""

    def __init__(self, session: AgentSession, message: str, cancel: CancelToken):
        self.s = session
        self.message = message
        self.cancel = cancel
        self.conversation: Conversation = session.conversation
        self.turn = self.conversation.last_turn + 1
        self.compaction = TurnCompaction()
        self.pending_steps: list[str] = []
        self.turn_steps: list[str] = []
        self.failures: dict[str, int] = {}  # failing call key -> times it failed
        self.failure_results: dict[str, Mapping[str, object]] = {}  # ... and its first result
        self.failures_in_a_row = 0
        self.same_calls: dict[str, int] = {}  # successful call key -> times asked for
        self.continued = 0  # automatic continuations at the iteration limit
        self.iterations = 0
        self.last_tool: str | None = None
        self.final_text = ""
        self.context_retries = 0
        self.knowledge_offers_tool = False  # from the last assembled knowledge layer
        self.iteration_messages: list[Message] = []
        self.iteration_meta: list[MessageMeta] = []
        self.question: AskedQuestion | None = None  # asked by ask_user in this iteration
        self.reflector = Reflector(self)  # the review before reporting (reflection.py)
        self.seen_call_ids = {
            c.get("id")
            for r in self.conversation.message_records()
            for c in r["message"].get("tool_calls") or []
        }

    # -- helpers
    def context(self) -> ToolContext:
        project = self.s.focused_project()
        return ToolContext(
            workspace=self.s.workspace,
            settings=self.s.settings,
            conversation=self.conversation,
            ledger=self.s.ledger,
            app=self.s.app,
            services=self.s.services,
            cancel=self.cancel,
            state=state_of(project),
            turn=self.turn,
            pending_steps=self.pending_steps,
            knowledge_offers_tool=self.knowledge_offers_tool,
        )

    def _summaries(self, text: str) -> Iterator[Event]:
        outcome = apply_summaries(self.s.ledger, self.pending_steps, text)
        if outcome.problems:  # told in the next tool result, of this turn or a later one
            notice = summary_notice(outcome.problems)
            self.conversation.add_event(NOTICE_EVENT, self.turn, notice=notice)
            self.s.summary_notices.append(notice)
        if outcome.lines:
            lines = tuple(
                StepLineOutcome(step_id=step_id, outcome=what) for step_id, what in outcome.lines
            )
            # kept for a reopened conversation: its k-th answer with step lines gets the k-th
            self.conversation.add_event(STEP_LINES_EVENT, self.turn, lines=list(lines))
            yield StepLinesRead(lines)
        for step in outcome.updated:
            yield StepSummarized(step["step_id"], step.get("summary"), step["summary_status"])

    def _with_summary_notice(self, result: Mapping[str, object]) -> Mapping[str, object]:
        """The tool result, carrying what was wrong with the last [[QUERY_STEP]] lines."""
        if not self.s.summary_notices:
            return result
        notices, self.s.summary_notices = self.s.summary_notices, []
        self.conversation.add_event(TOLD_EVENT, self.turn)
        return {**result, "step_summaries": merged(notices)}

    def _buffer(self, message: Message, **meta: Unpack[MessageMeta]) -> None:
        self.iteration_messages.append(message)
        self.iteration_meta.append(meta)

    def _flush(self) -> None:
        """Write the iteration's messages (assistant message and tool results) together."""
        if self.iteration_messages:
            self.conversation.add_messages(self.iteration_messages, self.turn, self.iteration_meta)
            self.iteration_messages, self.iteration_meta = [], []

    def _save_assistant(self, reply: ModelReply, partial: bool = False) -> Iterator[Event]:
        message = reply.to_message()
        if partial:  # half a tool call cannot run; keep the text that arrived
            message = {"role": "assistant", "content": reply.content or ""}
        if partial:
            self._buffer(message, partial=True)
        else:
            self._buffer(message)
        if partial or not reply.tool_calls:
            self._flush()  # otherwise written with the tool results
        yield AssistantMessage(
            reply.content or "",
            [c.to_message() for c in reply.tool_calls] if not partial else [],
            partial,
        )
        yield from self._summaries(reply.content or "")

    # -- the turn
    def run(self) -> Iterator[Event]:
        pending = self.conversation.pending_question()
        if pending is not None:
            self.conversation.add_event(
                "question_answered",
                self.turn,
                question=pending.get("question"),
                answer=self.message,
                **answer_fields(pending, self.message),
            )
        self.conversation.add_message({"role": "user", "content": self.message}, self.turn)
        try:
            project = self.s.focused_project()
            state, focused = state_of(project), getattr(project, "dirname", None)
            mark_turn(self.conversation, self.turn, project)  # edit decisions told from here
        except LantideError:  # reported by the first iteration, which needs the project
            state, focused = "unknown", self.s.app.focused_project_name()
        yield TurnStarted(self.conversation.id, self.turn, state, focused)
        yield from self.s.skipped_log_lines()
        reason, note = ANSWERED, None
        try:
            yield from self.s.before_first_turn(self.turn)
            while True:
                if self.iterations >= self._iteration_limit():
                    yield from self._continue_or_stop()
                self.cancel.raise_if_cancelled()
                if self.s.budget.exhausted():
                    raise _TurnOver(
                        TOKEN_BUDGET,
                        render_prompt(
                            "notes/token_budget.md.j2",
                            used=self.s.budget.used,
                            budget=self.s.budget.budget,
                        ),
                    )
                self.iterations += 1
                reply = yield from self._ask_model()
                self._unique_call_ids(reply)
                yield from self._save_assistant(reply)
                if not reply.tool_calls:
                    self.final_text = reply.content or ""
                    review = yield from self.reflector.after_answer(self.final_text)
                    if review.give_up_note:
                        raise _TurnOver(REFLECTION_FAILED, review.give_up_note)
                    if review.retry:  # the problems went back to the model
                        continue
                    break
                yield from self._run_tools(reply)
        except _TurnOver as over:
            reason, note = over.reason, over.message
        except TurnCancelled:
            reason = CANCELLED
        except ModelStreamBroken as exc:
            yield from self._save_assistant(exc.partial, partial=True)
            yield ErrorOccurred(exc.code, exc.message, exc.hint)
            reason, note = ERROR, exc.message
        except LantideError as exc:  # the model's, or a file the turn needs is unreadable
            yield ErrorOccurred(exc.code, exc.message, exc.hint)
            reason, note = ERROR, exc.message
        if note and reason in (
            ITERATION_LIMIT,
            REPEATED_FAILURE,
            REPEATED_CALL,
            CONTEXT_FULL,
            REFLECTION_FAILED,
            TOKEN_BUDGET,
        ):
            self.conversation.add_message(
                {"role": "assistant", "content": note}, self.turn, engine_note=True
            )
            yield TextDelta(note)
            yield AssistantMessage(note)
        for step in mark_missing(self.s.ledger, self.pending_steps):
            yield StepSummarized(step["step_id"], None, "missing")
        self.conversation.add_event(
            "turn_finished",
            self.turn,
            reason=reason,
            iterations=self.iterations,
            tokens=self.s.budget.take_turn_charge(),
        )
        # background work starts before the last event: a consumer may stop reading there
        self.s.after_turn(self.turn, self.message, self.final_text, reason)
        yield TurnFinished(reason, self.conversation.id, self.iterations, note)

    def _ask_model(self) -> Generator[Event, None, ModelReply]:
        """One model call (generator; returns the reply). A context-length error shrinks the
        window, compacts and asks again, only with a smaller request."""
        too_long: int | None = None
        while True:
            ctx = self.context()
            window = self.s.model.context_window().tokens
            if too_long is not None:  # the server refused a request of this size
                window = min(window, int(too_long * 0.9))
            prompt: AssembledPrompt = self.s.assembler.assemble(
                ctx, window, self.compaction, self.turn
            )
            self.knowledge_offers_tool = ctx.knowledge_offers_tool
            if prompt.compacted_now:
                yield ContextCompacted(
                    prompt.compacted_now,
                    prompt.tokens_before_compaction,
                    prompt.layer("history").tokens,
                    prompt.context_window,
                )
            self.s.last_prompt = prompt
            if too_long is not None and (prompt.tokens >= too_long or prompt.tokens > window):
                # the same request again, or one still over the window the server just
                # named, would fail the same way: say so instead of sending it
                raise ModelError(
                    f"the request ({prompt.tokens:,} tokens) is too long for the model's "
                    f"context window ({window:,} tokens) and cannot be made "
                    "small enough",
                    hint="Start a new conversation, close large documents, or use a model "
                    "with a larger context window (Settings > Models).",
                    code="CONTEXT_WINDOW_TOO_SMALL",
                )
            if not prompt.fits:  # never send a request that leaves no room for the answer
                known = self.s.model.context_window()
                raise _TurnOver(
                    CONTEXT_FULL,
                    render_prompt(
                        "notes/context_full.md.j2",
                        window=known.tokens,
                        source=known.source,
                        tokens=prompt.tokens,
                        reserve=output_reserve(known.tokens),
                        steps=self.turn_steps,
                    ),
                )
            try:
                reply = yield from stream_reply(
                    self.s.model, prompt.messages, prompt.tools, self.cancel
                )
                if reply is None:
                    raise ModelError("the model client ended without a reply")
                self.s.budget.charge_request(prompt, reply)
                warning = self.s.budget.warning()
                if warning is not None:
                    yield warning
                return reply
            except TurnCancelled as exc:
                partial = exc.partial
                if partial is not None and partial.content:
                    yield from self._save_assistant(partial, partial=True)
                raise
            except ContextLengthExceeded as exc:
                self.context_retries += 1
                if self.context_retries > 2:
                    raise ModelError(
                        f"the request is still too long for the model: {exc.message}",
                        hint="Start a new conversation or use a model with a "
                        "larger context window.",
                    ) from None
                self.s.model.learn_context_window(exc.limit)
                too_long = prompt.tokens  # the next request must be smaller than this

    def _run_tools(self, reply: ModelReply) -> Iterator[Event]:
        answered: set[str] = set()
        try:
            yield from self._run_tool_calls(reply, answered)
        finally:
            # whatever ended the loop, every call gets a result so the history stays valid
            why = (
                "stopped by the analyst before it finished"
                if self.cancel.cancelled
                else "not run: the turn ended before this call"
            )
            self._cancel_rest(reply.tool_calls, answered, why)
            self._flush()
        if self.question is not None:
            q, self.question = self.question, None
            self.conversation.add_event("question_asked", self.turn, **q)
            yield QuestionAsked(q["question"], q["choices"])
            raise _TurnOver(QUESTION)

    def _run_tool_calls(self, reply: ModelReply, answered: set[str]) -> Iterator[Event]:
        ctx = self.context()
        # a question stops the turn: the calls beside it wait for the analyst's answer
        asking = next((c for c in reply.tool_calls if c.name == "ask_user" and _asks(c)), None)
        for call in reply.tool_calls:
            if self.cancel.cancelled:
                raise TurnCancelled()
            try:
                args = call.parsed_arguments()
            except ValueError:
                args = {}
            yield ToolCalled(call.id, call.name, args)
            key = call.name + "\x00" + json.dumps(args, sort_keys=True, default=str)
            if asking is not None and call is not asking:
                yield from self._not_run(call, answered, self._question_pending(asking))
                continue
            looping = not self.failures.get(key) and self.same_calls.get(key, 0) >= SAME_CALL_RUNS
            refused = (
                None
                if (self.failures.get(key) or looping)
                else (yield from self.reflector.before_tool(call.name, args))
            )
            outcome_result: Mapping[str, object]
            if self.failures.get(key):
                outcome_result, ok, ms = self._repeated(call.name, key), False, 0
            elif looping:
                outcome_result, ok, ms = self._looping(call.name, key), False, 0
            elif refused is not None:  # the review before reporting did not pass
                outcome_result, ok, ms = refused, False, 0
            else:
                ctx.room_tokens = self._room_for_a_result(ctx)
                try:
                    outcome = self.s.registry.call(call.name, call.arguments, ctx)
                except TurnCancelled:
                    for event in ctx.drain_events():
                        yield event
                    raise
                outcome_result, ok, ms = outcome.result, outcome.ok, outcome.duration_ms
            if not ok:  # a refusal quoting a huge argument: cut, as results are cut
                outcome_result = cut_error_texts(outcome_result)
                self._cut_arguments(call.id)
            outcome_result = self._with_summary_notice(outcome_result)
            self.last_tool = call.name
            self._buffer(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": json.dumps(
                        outcome_result, ensure_ascii=False, default=str, separators=(",", ":")
                    ),
                },
                tool=call.name,
                ok=ok,
            )
            answered.add(call.id)
            for event in ctx.drain_events():
                if isinstance(event, StepRecorded):
                    self.turn_steps.append(event.step["step_id"])
                yield event
            yield ToolReturned(
                call.id, call.name, ok, outcome_result, ms, self.s.registry.touches(call.name)
            )
            if ctx.question is not None:
                self.question = ctx.question
            if ok or looping:
                self._count_same_call(call.name, key)
            else:
                yield from self._count_failure(call.name, key, ok, outcome_result)

    def _cut_arguments(self, call_id: str) -> None:
        """The refused call's long argument strings cut in the assistant message this
        iteration writes: the conversation keeps no 200 KB copy of what was refused."""
        for message in self.iteration_messages:
            for call in message.get("tool_calls") or []:
                function = call["function"]
                arguments = function.get("arguments") or ""
                if call.get("id") == call_id and len(arguments) > REFUSED_ARGUMENTS_KEPT:
                    function["arguments"] = _cut_arguments(arguments)

    def _room_for_a_result(self, ctx: ToolContext) -> int | None:
        """Tokens the next tool result may take in the next request: what the history may
        take in a request assembled now (the window less the answer's reserve and every
        other layer) less this turn as it will be sent (its messages so far and this
        iteration's, each result already answered from at its compact size). Earlier turns
        give way first, so they are not counted."""
        prompt = self.s.last_prompt
        if prompt is None:
            return None
        budget = self.s.assembler.history_budget(ctx, prompt.context_window, self.turn)
        turn = [
            r["message"]
            for r in self.conversation.message_records()
            if int(r.get("turn") or 0) == self.turn
        ] + self.iteration_messages
        return max(0, budget - turn_floor_tokens(turn, self.compaction) - MESSAGE_OVERHEAD_TOKENS)

    def _not_run(
        self, call: ToolCallRequest, answered: set[str], result: ToolError
    ) -> Iterator[Event]:
        self._buffer(
            {
                "role": "tool",
                "tool_call_id": call.id,
                "content": json.dumps(result, ensure_ascii=False),
            },
            tool=call.name,
            ok=False,
        )
        answered.add(call.id)
        yield ToolReturned(call.id, call.name, False, result, 0)

    @staticmethod
    def _question_pending(asking: ToolCallRequest) -> ToolError:
        try:
            question = str(asking.parsed_arguments().get("question") or "")
        except ValueError:
            question = ""
        return {
            "error": "NOT_RUN_QUESTION_PENDING",
            "message": f"not run: it was sent together with a question to the analyst "
            f"({question[:160]!r}), and the turn waits for the answer",
            "hint": "After the analyst answers, call it again if it is still needed.",
        }

    def _looping(self, tool: str, key: str) -> ToolError:
        return {
            "error": "REPEATED_CALL",
            "message": f"this exact {tool} call already ran {SAME_CALL_RUNS} times in this "
            "turn with the same arguments; its result is above and it was not "
            "run again",
            "hint": "Use the result you have, change the arguments, or answer the analyst.",
        }

    def _count_same_call(self, tool: str, key: str) -> None:
        self.failures_in_a_row = 0
        self.same_calls[key] = self.same_calls.get(key, 0) + 1
        if self.same_calls[key] >= SAME_CALL_STOP:
            raise _TurnOver(
                REPEATED_CALL,
                render_prompt("notes/repeated_call.md.j2", tool=tool, times=self.same_calls[key]),
            )

    def _iteration_limit(self) -> int:
        return max(1, int(self.s.settings.agent.max_iterations)) * (1 + self.continued)

    def _continue_or_stop(self) -> Iterator[Event]:
        """At the iteration limit: go on by itself while the setting allows, else stop."""
        rounds = max(0, int(getattr(self.s.settings.agent, "auto_continue_rounds", 0) or 0))
        if self.continued >= rounds:
            raise _TurnOver(ITERATION_LIMIT, self._limit_note())
        self.continued += 1
        self.conversation.add_event(
            "turn_continued",
            self.turn,
            round=self.continued,
            rounds=rounds,
            iterations=self.iterations,
        )
        yield TurnContinued(self.continued, rounds, self.iterations)

    def _unique_call_ids(self, reply: ModelReply) -> None:
        """Some local servers number tool calls call_0, call_1 in every message; the history
        needs ids unique across the conversation to pair each call with its result."""
        for n, call in enumerate(reply.tool_calls):
            if not call.id or call.id in self.seen_call_ids:
                call.id = f"call_{self.turn}_{self.iterations}_{n}"
            self.seen_call_ids.add(call.id)

    def _repeated(self, tool: str, key: str) -> ToolError:
        previous = self.failure_results.get(key) or {}
        return {
            "error": "REPEATED_CALL",
            "message": f"this exact {tool} call already failed in this turn"
            f" ({previous.get('message', 'see above')}); it was not run again",
            "hint": "Change the arguments or the approach, or ask the analyst.",
        }

    def _count_failure(
        self, tool: str, key: str, ok: bool, result: Mapping[str, object]
    ) -> Iterator[Event]:
        if ok:
            self.failures_in_a_row = 0
            return
        self.failures_in_a_row += 1
        repeats = self.failures.get(key, 0) + 1
        self.failures[key] = repeats
        first = self.failure_results.setdefault(key, result)
        limit = max(1, int(self.s.settings.agent.max_tool_retries))
        if repeats >= 3 or self.failures_in_a_row > limit:
            why = (
                "the same call kept failing"
                if repeats >= 3
                else f"{self.failures_in_a_row} tool calls failed in a row"
            )
            raise _TurnOver(
                REPEATED_FAILURE,
                render_prompt(
                    "notes/repeated_failure.md.j2",
                    reason=why,
                    tool=tool,
                    message=first.get("message", ""),
                    hint=first.get("hint"),
                ),
            )
        yield from ()

    def _cancel_rest(self, calls: list[ToolCallRequest], answered: set[str], why: str) -> None:
        """Give every call that did not run a result, so the history stays valid."""
        for call in calls:
            if call.id in answered:
                continue
            code = "CANCELLED" if self.cancel.cancelled else "NOT_RUN"
            self._buffer(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": json.dumps({"error": code, "message": why}),
                },
                tool=call.name,
                ok=False,
            )
            answered.add(call.id)

    def _limit_note(self) -> str:
        return render_prompt(
            "notes/iteration_limit.md.j2",
            iterations=self.iterations,
            steps=self.turn_steps,
            last_tool=self.last_tool,
        )


def _cut_arguments(arguments: str) -> str:
    """Tool-call arguments with every long string cut (still a JSON object; ASCII, so no
    lone surrogate the model sent can break the next request)."""
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        value = {"unparsed": arguments}
    if not isinstance(value, dict):
        value = {"unparsed": arguments}
    return json.dumps(cut_error_texts(value), ensure_ascii=True)
