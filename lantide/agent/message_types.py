"""The chat messages the loop sends to the model and keeps in the conversation file.

They are OpenAI chat-completion messages (the ``openai`` package's
``ChatCompletionMessageParam`` union), in the one form Lantide writes: text content only, a
tool call's arguments as JSON text. One TypedDict with the role as a field rather than the
SDK's union of one type per role, because the history code reads any message's
``tool_calls`` or ``content`` without first telling the roles apart.
"""

from __future__ import annotations

from typing import NotRequired, Required, TypedDict


class FunctionCall(TypedDict):
    name: str
    arguments: str  # JSON text, as the model sent it


class ToolCall(TypedDict):
    """One tool call of an assistant message."""

    id: str
    type: str  # "function"
    function: FunctionCall


class Message(TypedDict):
    """A message: ``role`` system, user, assistant or tool."""

    role: str
    content: NotRequired[str | None]  # None: an assistant message with only tool calls
    tool_calls: NotRequired[list[ToolCall]]  # assistant
    tool_call_id: NotRequired[str]  # tool: the call it answers


class MessageMeta(TypedDict, total=False):
    """What the conversation file keeps beside a message (never sent to the model)."""

    tool: str  # a tool result: its tool
    ok: bool  # a tool result: whether the call succeeded
    partial: bool  # an answer cut short (cancel, a broken stream)
    engine_note: bool  # Lantide's own note, not the model's words
    reflection: bool  # the review before reporting wrote it


class MessageRecord(MessageMeta, total=False):
    """One message of a conversation as :meth:`Conversation.message_records` gives it
    (an iteration record's messages each with its own meta)."""

    type: Required[str]  # "message"
    turn: Required[int | None]
    at: Required[str | None]
    message: Required[Message]


class FunctionSchema(TypedDict):
    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, object]]  # a JSON schema


class ToolSchema(TypedDict):
    """A tool as a request offers it (:meth:`lantide.agent.tools.registry.Tool.schema`)."""

    type: str  # "function"
    function: FunctionSchema
