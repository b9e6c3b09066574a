"""One model request as events: the loop's answer and the review before reporting read
the model's stream the same way (Stop checked at every piece, retries announced)."""

from __future__ import annotations

from collections.abc import Generator

from lantide.agent.cancel import CancelToken, TurnCancelled
from lantide.agent.events import Event, ModelRetrying, TextDelta
from lantide.agent.message_types import Message, ToolSchema
from lantide.agent.model_client import ModelClient, ModelReply, RetryScheduled, TextChunk


def stream_reply(
    model: ModelClient,
    messages: list[Message],
    tools: list[ToolSchema],
    cancel: CancelToken,
    *,
    show_text: bool = True,
) -> Generator[Event, None, ModelReply | None]:
    """Yield the request's events (text deltas when ``show_text``, retry notices); return
    its :class:`ModelReply`, or None when the client ended without one."""
    reply: ModelReply | None = None
    for out in model.stream_chat(messages, tools, cancel):
        if cancel.cancelled:
            raise TurnCancelled()
        if isinstance(out, TextChunk):
            if show_text:
                yield TextDelta(out.text)
        elif isinstance(out, RetryScheduled):
            yield ModelRetrying(out.attempt, round(out.delay_seconds, 2), out.reason)
        elif isinstance(out, ModelReply):
            reply = out
    return reply
