"""Talking to the model: any OpenAI-compatible endpoint through the ``openai`` SDK.

:class:`ModelClient` is the engine's boundary to the model; the loop only sees it, so tests
can script a model at this boundary. :class:`OpenAIModelClient` is the real one:

- streaming chat completions with tool calls assembled from their deltas;
- a request timeout, and retries with exponential backoff on 429, 5xx and connection
  errors that honour ``Retry-After``; each wait is announced (:class:`RetryScheduled`) and
  can be cancelled;
- a stream that breaks off mid-answer raises :class:`ModelStreamBroken` carrying what was
  received, so the turn can keep it;
- cancel closes the HTTP stream at once (:class:`~lantide.agent.cancel.CancelToken`);
- the context window is discovered (:mod:`lantide.agent.context_window`).

The SDK's own retries are off: ours are visible to the analyst and stop on cancel. The
``openai`` import happens on first use, off start-up paths. The API key is passed to the
SDK only; it is masked out of every error message.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar, cast

from lantide.agent.cancel import CancelToken, TurnCancelled
from lantide.agent.context_window import (
    ContextWindow,
    is_context_length_error,
    remember_context_window,
    resolve_context_window,
    window_from_error,
)
from lantide.agent.message_types import Message, ToolCall, ToolSchema
from lantide.errors import LantideError
from lantide.untrusted import clean_json, clean_text
from lantide.workspace.settings import AgentSettings, ResolvedProfile

if TYPE_CHECKING:
    import openai
    from openai import Stream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

T = TypeVar("T")

MAX_RETRY_AFTER = 60.0
BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0


class ModelError(LantideError):
    code = "MODEL_ERROR"


class ModelStreamBroken(ModelError):
    """The stream ended before the answer did. ``partial`` holds what arrived."""

    code = "MODEL_STREAM_BROKEN"

    def __init__(self, message: str, partial: ModelReply, *, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.partial = partial


class ContextLengthExceeded(ModelError):
    code = "CONTEXT_LENGTH_EXCEEDED"

    def __init__(self, message: str, limit: int | None):
        super().__init__(message, hint="Lantide compacts the conversation and tries again.")
        self.limit = limit


@dataclass
class ToolCallRequest:
    """One tool call the model asked for; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str = ""

    def parsed_arguments(self) -> dict[str, object]:
        """The arguments as an object; raises ValueError naming what is wrong."""
        text = self.arguments.strip() or "{}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"arguments are not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(value, dict):
            raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
        cleaned: dict[str, object] = clean_json(value)  # "\\ud800" decodes to a lone surrogate
        return cleaned

    def to_message(self) -> ToolCall:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class Usage(TypedDict, total=False):
    """The server's token usage: the SDK's ``CompletionUsage`` as a dict, None fields left
    out (a server may report only some, or add its own)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: dict[str, object]  # cached_tokens (the prefix cache), ...
    completion_tokens_details: dict[str, object]


@dataclass
class ModelReply:
    """A complete (or, inside :class:`ModelStreamBroken`, partial) assistant message."""

    content: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None  # the server's usage (nested details included)

    def to_message(self) -> Message:
        msg: Message = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return msg


@dataclass
class TextChunk:
    text: str


@dataclass
class RetryScheduled:
    attempt: int
    delay_seconds: float
    reason: str


ModelOutput = TextChunk | RetryScheduled | ModelReply


class ModelClient(Protocol):
    """What the loop needs from a model. Implementations must honour ``cancel``."""

    model: str

    def stream_chat(
        self, messages: list[Message], tools: list[ToolSchema], cancel: CancelToken
    ) -> Iterator[ModelOutput]:
        """Yield text chunks and retry notices, then exactly one :class:`ModelReply`."""
        ...

    def complete(self, system: str, user: str, cancel: CancelToken | None = None) -> str:
        """A short non-streamed answer without tools (background calls)."""
        ...

    def context_window(self) -> ContextWindow: ...

    def learn_context_window(self, tokens: int | None) -> ContextWindow:
        """Record that the window is at most ``tokens`` (or smaller than assumed)."""
        ...


class _ToolCallAssembler:
    """Tool calls arrive as deltas keyed by index: an id and name once, arguments in parts."""

    def __init__(self) -> None:
        self._calls: dict[int, ToolCallRequest] = {}

    def add(self, delta_calls: list[ChoiceDeltaToolCall] | None) -> None:
        for d in delta_calls or []:
            index = d.index if d.index is not None else len(self._calls)
            call = self._calls.setdefault(index, ToolCallRequest(id="", name=""))
            if d.id:
                call.id = d.id
            fn = d.function
            if fn is not None:
                if fn.name and fn.name != call.name:
                    # OpenAI sends the name once; some servers repeat it in every delta
                    call.name += fn.name
                if fn.arguments:
                    call.arguments += fn.arguments

    def calls(self) -> list[ToolCallRequest]:
        out: list[ToolCallRequest] = []
        for n, index in enumerate(sorted(self._calls)):
            call = self._calls[index]
            call.id = clean_text(call.id or f"call_{n}")
            call.name = clean_text(call.name)
            call.arguments = clean_text(call.arguments)
            out.append(call)
        return out


def backoff_delay(attempt: int, retry_after: float | None) -> float:
    """Seconds before retry ``attempt`` (1-based): the server's Retry-After when given
    (capped), else exponential backoff with jitter."""
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, MAX_RETRY_AFTER)
    delay = min(BACKOFF_MAX, BACKOFF_BASE * 2.0 ** (attempt - 1))
    return delay * (0.75 + random.random() * 0.5)


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        import email.utils
        import time

        parsed = email.utils.parsedate_tz(value)
        return max(0.0, email.utils.mktime_tz(parsed) - time.time()) if parsed else None


class OpenAIModelClient:
    """:class:`ModelClient` over the ``openai`` SDK for one resolved profile."""

    def __init__(self, profile: ResolvedProfile, agent: AgentSettings | None = None):
        self.profile = profile
        self.model = profile.model
        self.agent = agent or AgentSettings()
        self._client: openai.OpenAI | None = None
        self._window: ContextWindow | None = None

    # -- plumbing
    def _sdk(self) -> openai.OpenAI:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self.profile.api_key or "not-needed",  # local servers take any key
                base_url=self.profile.base_url,
                timeout=openai.Timeout(self.agent.request_timeout_seconds, connect=10.0),
                max_retries=0,
            )
        return self._client

    def _mask(self, text: str) -> str:
        key = self.profile.api_key
        return text.replace(key, "***") if key else text

    def _where(self) -> str:
        return f"model {self.model!r} at {self.profile.base_url}"

    def _classify(self, exc: Exception) -> tuple[bool, ModelError]:
        """(retryable, error to raise when not retried) for an SDK exception."""
        import openai

        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            body = exc.body if isinstance(exc.body, dict) else {}
            message = self._mask(str(body.get("message") or exc.message))
            code = body.get("code") if isinstance(body.get("code"), str) else None
            # before the retryable statuses: some servers answer a too-long request with a
            # 413 or a 5xx, and sending the same request again cannot succeed
            if status != 429 and is_context_length_error(message, code):  # 429: a rate limit
                return False, ContextLengthExceeded(message, window_from_error(message))
            if status == 429 or status >= 500:
                return True, ModelError(
                    f"{self._where()} answered HTTP {status}: {message}",
                    hint="The server is busy or failing; try again in a moment.",
                )
            if status in (401, 403):
                return False, ModelError(
                    f"{self._where()} refused the API key (HTTP {status}): {message}",
                    hint="Set OPENAI_API_KEY, or store the key for this profile in "
                    "Settings > Models (it is kept in the system keyring).",
                    code="MODEL_AUTH",
                )
            if status == 404:
                return False, ModelError(
                    f"{self._where()} was not found (HTTP 404): {message}",
                    hint="Check the model name (LANTIDE_MODEL or the profile) and the base URL.",
                    code="MODEL_NOT_FOUND",
                )
            return False, ModelError(
                f"{self._where()} answered HTTP {status}: {message}",
                hint="Check the profile's model and base URL.",
            )
        if isinstance(exc, openai.APIConnectionError):
            kind = (
                "timed out" if isinstance(exc, openai.APITimeoutError) else "could not be reached"
            )
            return True, ModelError(
                f"{self._where()} {kind}",
                hint="Check that the server runs and the base URL is right.",
                code="MODEL_UNREACHABLE",
            )
        return False, ModelError(f"{self._where()}: {self._mask(str(exc))}")

    def _with_retries(
        self, make_request: Callable[[], T], cancel: CancelToken | None
    ) -> Generator[RetryScheduled, None, T]:
        """Call ``make_request`` until it succeeds; yields RetryScheduled before each wait."""
        attempts = max(0, int(self.agent.max_retries)) + 1
        for attempt in range(1, attempts + 1):
            if cancel is not None:
                cancel.raise_if_cancelled()
            try:
                return make_request()
            except TurnCancelled:
                raise
            except Exception as exc:
                if cancel is not None and cancel.cancelled:
                    raise TurnCancelled() from None
                retryable, error = self._classify(exc)
                if not retryable or attempt == attempts:
                    raise error from None
                headers = getattr(getattr(exc, "response", None), "headers", None)
                delay = backoff_delay(attempt, _retry_after(headers))
                status = getattr(exc, "status_code", None)
                yield RetryScheduled(attempt, delay, f"HTTP {status}" if status else error.message)
                if cancel is not None and cancel.wait(delay):
                    raise TurnCancelled() from None
                elif cancel is None:
                    import time

                    time.sleep(delay)
        raise AssertionError("unreachable")

    # -- ModelClient
    def stream_chat(
        self, messages: list[Message], tools: list[ToolSchema], cancel: CancelToken
    ) -> Iterator[ModelOutput]:
        def request() -> Stream[ChatCompletionChunk]:
            kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
            if tools:
                kwargs["tools"] = tools
            if self.agent.stream_usage:
                kwargs["stream_options"] = {"include_usage": True}
            stream: Stream[ChatCompletionChunk] = self._sdk().chat.completions.create(**kwargs)
            return stream

        stream = yield from self._with_retries(request, cancel)
        yield from self._read_stream(stream, cancel)

    def _read_stream(
        self, stream: Stream[ChatCompletionChunk], cancel: CancelToken
    ) -> Iterator[ModelOutput]:
        text: list[str] = []
        calls = _ToolCallAssembler()
        finish_reason: str | None = None
        usage: Usage | None = None

        def partial() -> ModelReply:
            return ModelReply("".join(text), calls.calls(), finish_reason, usage)

        with cancel.on_cancel(stream.close):
            try:
                for chunk in stream:
                    if cancel.cancelled:
                        break
                    chunk_usage = getattr(chunk, "usage", None)  # absent on some servers' chunks
                    if chunk_usage is not None:
                        # the SDK's model, its fields checked by pydantic
                        usage = cast(Usage, chunk_usage.model_dump(exclude_none=True))
                    for choice in chunk.choices or []:
                        delta = choice.delta
                        if delta is not None and delta.content:
                            piece = clean_text(delta.content)
                            text.append(piece)
                            yield TextChunk(piece)
                        if delta is not None and delta.tool_calls:
                            calls.add(delta.tool_calls)
                        if choice.finish_reason:
                            finish_reason = choice.finish_reason
            except Exception as exc:
                if cancel.cancelled:
                    raise _cancelled(partial()) from None
                _retryable, error = self._classify(exc)
                raise ModelStreamBroken(
                    f"the answer from {self._where()} broke off after "
                    f"{len(''.join(text))} characters ({error.message})",
                    partial(),
                    hint="What arrived is kept in the conversation; send the message again "
                    "or 'continue'.",
                ) from None
            finally:
                stream.close()
        if cancel.cancelled:
            raise _cancelled(partial())
        if finish_reason is None:
            raise ModelStreamBroken(
                f"the answer from {self._where()} ended without a finish reason",
                partial(),
                hint="What arrived is kept in the conversation; send 'continue' to go on.",
            )
        yield partial()

    def complete(self, system: str, user: str, cancel: CancelToken | None = None) -> str:
        def request() -> ChatCompletion:
            return self._sdk().chat.completions.create(
                model=self.model,
                stream=False,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            )

        gen = self._with_retries(request, cancel)
        while True:
            try:
                next(gen)  # retry notices are not shown for background calls
            except StopIteration as stop:
                response: ChatCompletion = stop.value
                break
        choice = response.choices[0] if response.choices else None
        return clean_text(choice.message.content or "").strip() if choice else ""

    def context_window(self) -> ContextWindow:
        if self._window is None:
            card = None
            if not self.profile.context_window:
                card = self._model_card()
            self._window = resolve_context_window(self.profile, card)
        return self._window

    def _model_card(self) -> dict[str, object] | None:
        """This model's /v1/models entry, or None (a server without the route is fine)."""
        try:
            client = self._sdk().with_options(timeout=5.0, max_retries=0)
            try:
                return client.models.retrieve(self.model).to_dict()
            except Exception:
                for card in client.models.list().data:
                    if card.id == self.model:
                        return card.to_dict()
        except Exception:
            return None
        return None

    def list_models(self, timeout: float = 10.0) -> list[dict[str, object]]:
        """The endpoint's ``/v1/models`` entries (for *Test connection*); a failure is a
        :class:`ModelError` worded like the chat's, with the key masked."""
        try:
            client = self._sdk().with_options(timeout=timeout, max_retries=0)
            return [card.to_dict() for card in client.models.list().data]
        except Exception as exc:
            raise self._classify(exc)[1] from None

    def learn_context_window(self, tokens: int | None) -> ContextWindow:
        current = self.context_window().tokens
        learned = tokens if tokens and tokens < current else int(current * 0.75)
        self._window = ContextWindow(learned, "learned")
        # an unreadable settings file stays as it is; the window is still used now
        with contextlib.suppress(LantideError):
            remember_context_window(self.profile, learned)
        return self._window


def _cancelled(partial: ModelReply) -> TurnCancelled:
    exc = TurnCancelled()
    exc.partial = partial  # the loop keeps what arrived before the stop
    return exc
