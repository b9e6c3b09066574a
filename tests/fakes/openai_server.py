"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests that drive the real
``openai`` client (in process, or ``lantide chat`` in a subprocess).

How to script it::

    from tests.fakes.openai_server import FakeOpenAIServer, Turn, ToolCall

    with FakeOpenAIServer(model="fake-model", context_length=32_768) as server:
        server.script(
            Turn(tool_calls=[ToolCall("show_tables", {})]),      # 1st chat request
            Turn.rate_limited(retry_after=0.1),                    # 2nd: 429 + Retry-After
            Turn(text="Four tables. [[QUERY_STEP]] ..."),          # 3rd
        )
        env = server.env()          # OPENAI_BASE_URL, OPENAI_API_KEY, LANTIDE_MODEL
        ...run `lantide chat` with env, or openai.OpenAI(base_url=server.base_url, ...)
        server.assert_done()        # every turn used, nothing unexpected
        server.chat_requests        # the JSON bodies received, in order

Each chat completion request takes the next scripted :class:`Turn`, streamed (SSE,
chunked transfer encoding) when the request says ``stream: true``, else one JSON body.
Text is sent in small deltas; each tool call's arguments are split across several deltas,
as real servers do. A turn can instead answer an HTTP error (``status``, ``error``,
``headers`` such as ``Retry-After``), break the connection off after ``break_after`` chunks
(no terminating chunk: the client sees an incomplete read), or stream slowly (``delay``
seconds between chunks) so a test can cancel mid-stream; ``server.client_disconnects``
counts streams the client closed early. ``expect`` is called with the request body; an
``AssertionError`` there answers 500 and is reported by :meth:`assert_done`.

Background calls (conversation titles, knowledge proposals) are requests without
``tools``: with ``background_reply`` set they are answered from :meth:`script_background`
turns, then with that text (or ``background_reply(body)`` when it is callable), and
recorded in ``background_requests`` instead.

``GET /v1/models`` and ``GET /v1/models/ID`` list the model with its context length
(``context_length``, ``max_model_len``) unless ``context_length`` is None. With
``enforce_context`` a request whose estimated size exceeds the context length answers
400 ``context_length_exceeded`` with OpenAI's wording. Like OpenAI, a history where an
assistant's tool call lacks its tool result answers 400.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_API_KEY = "sk-fake-test-key-0123456789abcdef"


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments  # deliberately malformed JSON is allowed
        return json.dumps(self.arguments)


@dataclass
class Turn:
    """One scripted answer to one chat completion request."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None  # default: "tool_calls" with calls, else "stop"
    chunk_size: int = 12  # characters of text per delta
    args_chunk_size: int = 7  # characters of tool-call arguments per delta
    delay: float = 0.0  # seconds between chunks
    break_after: int | None = None  # close the connection after this many chunks
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    expect: Callable[[dict], None] | None = None
    # the text made from the request body instead of ``text`` (e.g. to cite a step id the
    # script cannot know before the request, as a model reads it from a tool result)
    text_from: Callable[[dict], str] | None = None

    @classmethod
    def rate_limited(cls, retry_after: float = 0.2, **kw) -> Turn:
        return cls(
            status=429,
            headers={"Retry-After": f"{retry_after:g}"},
            error={
                "message": "Rate limit reached for requests",
                "type": "requests",
                "code": "rate_limit_exceeded",
            },
            **kw,
        )

    @classmethod
    def server_error(cls, status: int = 503, **kw) -> Turn:
        return cls(
            status=status,
            error={"message": "The server is overloaded", "type": "server_error", "code": None},
            **kw,
        )

    @classmethod
    def context_length_error(cls, limit: int, used: int | None = None, **kw) -> Turn:
        used = used or limit + 1000
        return cls(
            status=400,
            error={
                "message": (
                    f"This model's maximum context length is {limit} tokens. However, your "
                    f"messages resulted in {used} tokens. Please reduce the length of the "
                    f"messages."
                ),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            },
            **kw,
        )


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: bytes


class FakeOpenAIServer:
    def __init__(
        self,
        *,
        model: str = "fake-model",
        context_length: int | None = 32_768,
        enforce_context: bool = False,
        background_reply: str | Callable[[dict], str] | None = None,
        api_key: str = FAKE_API_KEY,
    ):
        self.model = model
        self.context_length = context_length
        self.enforce_context = enforce_context
        self.background_reply = background_reply
        self.api_key = api_key
        self.requests: list[ReceivedRequest] = []  # every request, any path
        self.chat_requests: list[dict] = []  # bodies of scripted chat requests
        self.background_requests: list[dict] = []
        self.problems: list[str] = []
        self.client_disconnects = 0
        self._last_prompt = ""
        self._turns: deque[Turn] = deque()
        self._background: deque[Turn] = deque()
        self._lock = threading.Lock()
        self._counter = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def start(self) -> FakeOpenAIServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self, **extra: str) -> dict[str, str]:
        """Environment for a subprocess that should talk to this server."""
        env = {
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": self.api_key,
            "LANTIDE_MODEL": self.model,
        }
        env.update(extra)
        return env

    # -- scripting
    def script(self, *turns: Turn) -> None:
        with self._lock:
            self._turns.extend(turns)

    def script_background(self, *turns: Turn) -> None:
        with self._lock:
            self._background.extend(turns)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns)

    def assert_done(self) -> None:
        problems = list(self.problems)
        if self._turns:
            problems.append(f"{len(self._turns)} scripted turn(s) never requested")
        assert not problems, "fake OpenAI server: " + "; ".join(problems)

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.chat_requests) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {n} chat requests, got {len(self.chat_requests)}")
            time.sleep(0.01)

    # -- internals used by the handler
    def _next_id(self) -> str:
        with self._lock:
            self._counter += 1
            return f"{self._counter}"

    def _take_turn(self, body: dict) -> Turn | None:
        background = "tools" not in body and self.background_reply is not None
        with self._lock:
            if background:
                self.background_requests.append(body)
                if self._background:
                    return self._background.popleft()
                reply = self.background_reply
                return Turn(text=reply(body) if callable(reply) else reply)
            self.chat_requests.append(body)
            if not self._turns:
                self.problems.append(
                    f"unexpected chat request #{len(self.chat_requests)} (no scripted turn left)"
                )
                return None
            turn = self._turns.popleft()
        if turn.text_from is not None:
            turn = dataclasses.replace(turn, text=turn.text_from(body))
        return turn


def _history_problem(messages: list[dict]) -> str | None:
    """What OpenAI rejects: a tool call without its result, a result without its call."""
    pending: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in pending:
                return (
                    f"Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceeding message with 'tool_calls' (messages[{i}])."
                )
            pending.discard(call_id)
            continue
        if pending:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {sorted(pending)} "
                f"(messages[{i}])."
            )
        if role == "assistant":
            pending = {c["id"] for c in msg.get("tool_calls") or []}
    if pending:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            f"responding to each 'tool_call_id'. Missing: {sorted(pending)}."
        )
    return None


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return  # a client closing its keep-alive connection is normal
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeOpenAIServer  # set by FakeOpenAIServer.start

    def log_message(self, format, *args):  # keep test output clean
        pass

    # -- plumbing
    def _record(self, body: dict | None, raw: bytes) -> None:
        self.fake.requests.append(
            ReceivedRequest(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw
            )
        )

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self,
        status: int,
        message: str,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        error: dict | None = None,
    ) -> None:
        body = {
            "error": error
            or {"message": message, "type": "invalid_request_error", "param": None, "code": code}
        }
        self._send_json(status, body, headers)

    # -- routes
    def do_GET(self):
        self._record(None, b"")
        path = self.path.split("?")[0].rstrip("/")
        if path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [self._model_card()]})
        elif path.startswith("/v1/models/"):
            name = path[len("/v1/models/") :]
            if name == self.fake.model:
                self._send_json(200, self._model_card())
            else:
                self._error(404, f"The model '{name}' does not exist", "model_not_found")
        else:
            self._error(404, f"no route {self.path}")

    def _model_card(self) -> dict:
        card = {"id": self.fake.model, "object": "model", "created": 0, "owned_by": "fake"}
        if self.fake.context_length is not None:
            card["context_length"] = self.fake.context_length
            card["max_model_len"] = self.fake.context_length
        return card

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._record(None, raw)
            self._error(400, "We could not parse the JSON body of your request.")
            return
        self._record(body, raw)
        if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
            self._error(404, f"no route {self.path}")
            return
        turn = self.fake._take_turn(body)
        if turn is None:
            self._error(500, "fake server: no scripted turn left for this request")
            return
        if turn.expect is not None:
            try:
                turn.expect(body)
            except AssertionError as exc:
                self.fake.problems.append(f"expectation failed: {exc}")
                self._error(500, f"fake server: expectation failed: {exc}")
                return
        problem = _history_problem(body.get("messages") or [])
        if problem:
            self.fake.problems.append(problem)
            self._error(400, problem)
            return
        if self.fake.enforce_context and self.fake.context_length:
            used = (
                len(json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))) // 4
            )
            if used > self.fake.context_length:
                t = Turn.context_length_error(self.fake.context_length, used)
                self._error(400, "", error=t.error)
                return
        if turn.status != 200:
            self._error(
                turn.status,
                "",
                headers=turn.headers,
                error=turn.error
                or {
                    "message": f"scripted HTTP {turn.status}",
                    "type": "server_error",
                    "code": None,
                },
            )
            return
        if body.get("stream"):
            self._stream(turn, body)
        else:
            self._complete(turn, body)

    # -- answers
    def _usage(self, body: dict, turn: Turn) -> dict:
        text = json.dumps(body.get("messages", []))
        prompt = len(text) // 4
        completion = max(
            1, len(turn.text) // 4 + sum(len(c.arguments_json()) // 4 for c in turn.tool_calls)
        )
        # a prefix cache as OpenAI's: what this prompt shares with the one before it
        previous, self.fake._last_prompt = self.fake._last_prompt, text
        shared = len(os.path.commonprefix([previous, text])) if previous else 0
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": shared // 4},
        }

    def _call_ids(self, turn: Turn) -> list[str]:
        return [c.id or f"call_{self.fake._next_id()}" for c in turn.tool_calls]

    def _complete(self, turn: Turn, body: dict) -> None:
        ids = self._call_ids(turn)
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.tool_calls:
            message["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_json()},
                }
                for cid, c in zip(ids, turn.tool_calls, strict=True)
            ]
        self._send_json(
            200,
            {
                "id": f"chatcmpl-{self.fake._next_id()}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", self.fake.model),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": turn.finish_reason
                        or ("tool_calls" if turn.tool_calls else "stop"),
                    }
                ],
                "usage": self._usage(body, turn),
            },
        )

    def _deltas(self, turn: Turn) -> list[dict]:
        deltas: list[dict] = [{"role": "assistant", "content": ""}]
        text = turn.text
        for i in range(0, len(text), max(1, turn.chunk_size)):
            deltas.append({"content": text[i : i + turn.chunk_size]})
        for index, (cid, call) in enumerate(
            zip(self._call_ids(turn), turn.tool_calls, strict=True)
        ):
            deltas.append(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": cid,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            args = call.arguments_json()
            step = max(1, turn.args_chunk_size)
            for i in range(0, len(args), step):
                deltas.append(
                    {
                        "tool_calls": [
                            {"index": index, "function": {"arguments": args[i : i + step]}}
                        ]
                    }
                )
        return deltas

    def _stream(self, turn: Turn, body: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {
            "id": f"chatcmpl-{self.fake._next_id()}",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body.get("model", self.fake.model),
        }
        events = [
            dict(base, choices=[{"index": 0, "delta": d, "finish_reason": None}])
            for d in self._deltas(turn)
        ]
        events.append(
            dict(
                base,
                choices=[
                    {
                        "index": 0,
                        "delta": {},
                        "finish_reason": turn.finish_reason
                        or ("tool_calls" if turn.tool_calls else "stop"),
                    }
                ],
            )
        )
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(dict(base, choices=[], usage=self._usage(body, turn)))
        try:
            for n, event in enumerate(events):
                if turn.break_after is not None and n >= turn.break_after:
                    self._break_off()
                    return
                self._chunk(f"data: {json.dumps(event)}\n\n".encode())
                if turn.delay:
                    time.sleep(turn.delay)
            self._chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.fake.client_disconnects += 1
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _break_off(self) -> None:
        """End the connection without the terminating chunk, like a dropped proxy."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
