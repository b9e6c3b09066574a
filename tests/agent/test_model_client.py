"""The model client against the loopback OpenAI-compatible server, with the real SDK."""

from __future__ import annotations

import threading
import time

import pytest

from lantide.agent.cancel import CancelToken, TurnCancelled
from lantide.agent.context_window import (
    known_context_window,
    window_from_error,
    window_from_model_card,
)
from lantide.agent.model_client import (
    ContextLengthExceeded,
    ModelError,
    ModelReply,
    ModelStreamBroken,
    OpenAIModelClient,
    RetryScheduled,
    TextChunk,
    backoff_delay,
)
from lantide.workspace.settings import (
    AgentSettings,
    ModelProfile,
    ResolvedProfile,
    Settings,
    load_settings,
    save_settings,
)
from tests.fakes.openai_server import FAKE_API_KEY, FakeOpenAIServer, ToolCall, Turn

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_schema",
            "parameters": {"type": "object", "properties": {"table": {"type": "string"}}},
        },
    }
]
MESSAGES = [{"role": "user", "content": "hi"}]


def client_for(server, *, name="environment", window=None, retries=3, timeout=10.0):
    profile = ResolvedProfile(
        name=name,
        base_url=server.base_url,
        model=server.model,
        api_key=FAKE_API_KEY,
        context_window=window,
    )
    return OpenAIModelClient(
        profile, AgentSettings(max_retries=retries, request_timeout_seconds=timeout)
    )


def drain(gen):
    return list(gen)


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def test_streams_text_and_assembles_tool_calls_split_across_deltas(server):
    server.script(
        Turn(
            text="Looking at the schema first.",
            chunk_size=5,
            tool_calls=[
                ToolCall("read_schema", {"table": "orders"}),
                ToolCall("read_schema", {"table": 'customers "x"'}),
            ],
            args_chunk_size=3,
        )
    )
    out = drain(client_for(server).stream_chat(MESSAGES, TOOLS, CancelToken()))
    chunks = [o.text for o in out if isinstance(o, TextChunk)]
    assert len(chunks) > 3 and "".join(chunks) == "Looking at the schema first."
    reply = out[-1]
    assert isinstance(reply, ModelReply) and reply.finish_reason == "tool_calls"
    assert [(c.name, c.parsed_arguments()) for c in reply.tool_calls] == [
        ("read_schema", {"table": "orders"}),
        ("read_schema", {"table": 'customers "x"'}),
    ]
    assert len({c.id for c in reply.tool_calls}) == 2
    body = server.chat_requests[0]
    assert body["stream"] is True and body["tools"] == TOOLS
    assert FAKE_API_KEY not in server.requests[-1].raw.decode()
    assert server.requests[-1].headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    server.assert_done()


def test_429_is_retried_after_retry_after_and_announced(server):
    server.script(Turn.rate_limited(retry_after=0.4), Turn.server_error(503), Turn(text="ok"))
    started = time.monotonic()
    out = drain(client_for(server).stream_chat(MESSAGES, TOOLS, CancelToken()))
    elapsed = time.monotonic() - started
    retries = [o for o in out if isinstance(o, RetryScheduled)]
    assert [r.reason for r in retries] == ["HTTP 429", "HTTP 503"]
    assert retries[0].delay_seconds == pytest.approx(0.4)
    assert elapsed >= 0.4
    assert out[-1].content == "ok"
    server.assert_done()


def test_retries_are_bounded_and_end_in_a_clear_error(server):
    server.script(*[Turn.server_error(502, headers={"Retry-After": "0.05"}) for _ in range(3)])
    with pytest.raises(ModelError) as info:
        drain(client_for(server, retries=2).stream_chat(MESSAGES, TOOLS, CancelToken()))
    assert "HTTP 502" in info.value.message and server.base_url in info.value.message
    server.assert_done()


def test_backoff_grows_without_retry_after_and_caps_a_long_one():
    assert backoff_delay(1, None) < backoff_delay(4, None) <= 8.0
    assert backoff_delay(1, 3600) == 60.0


def test_a_stream_cut_mid_answer_keeps_what_arrived(server):
    server.script(
        Turn(text="Q3 churn was highest in DE-BY, followed by", chunk_size=6, break_after=4)
    )
    out = []
    with pytest.raises(ModelStreamBroken) as info:
        for item in client_for(server).stream_chat(MESSAGES, TOOLS, CancelToken()):
            out.append(item)
    received = "".join(o.text for o in out if isinstance(o, TextChunk))
    assert received and info.value.partial.content == received
    assert "broke off" in info.value.message


def test_cancel_closes_the_stream_at_once(server):
    server.script(Turn(text="x" * 400, chunk_size=4, delay=0.05))
    cancel = CancelToken()
    got = []
    streaming = threading.Event()
    cancelled_at = []

    def stop_once_streaming():
        # Cancel mid-stream, however long the machine took to start it (a fixed delay
        # raced a slow start under load).
        streaming.wait(10)
        time.sleep(0.2)
        cancelled_at.append(time.monotonic())
        cancel.cancel()

    threading.Thread(target=stop_once_streaming).start()
    with pytest.raises(TurnCancelled) as info:
        for item in client_for(server).stream_chat(MESSAGES, TOOLS, cancel):
            got.append(item)
            streaming.set()
    # the rest of the stream would take about 4.5 s more
    assert time.monotonic() - cancelled_at[0] < 1.5
    assert 0 < len(info.value.partial.content) < 400
    deadline = time.monotonic() + 3
    while server.client_disconnects == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.client_disconnects == 1


def test_auth_error_names_what_to_do_and_never_shows_the_key(server):
    server.script(
        Turn(
            status=401,
            error={
                "message": f"Incorrect API key provided: {FAKE_API_KEY}",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            },
        )
    )
    with pytest.raises(ModelError) as info:
        drain(client_for(server).stream_chat(MESSAGES, TOOLS, CancelToken()))
    assert info.value.code == "MODEL_AUTH"
    assert FAKE_API_KEY not in str(info.value) and "OPENAI_API_KEY" in info.value.hint


def test_context_window_from_the_endpoint_then_known_table_then_default():
    with FakeOpenAIServer(model="my-local-model", context_length=12_288) as s:
        window = client_for(s).context_window()
        assert (window.tokens, window.source) == (12_288, "endpoint")
    with FakeOpenAIServer(model="gpt-4o-mini", context_length=None) as s:
        assert client_for(s).context_window().to_dict() == {"tokens": 128_000, "source": "known"}
    with FakeOpenAIServer(model="brand-new-model", context_length=None) as s:
        assert client_for(s).context_window().source == "default"
    with FakeOpenAIServer(model="x", context_length=999_999) as s:
        assert client_for(s, window=4_000).context_window().to_dict() == {
            "tokens": 4_000,
            "source": "profile",
        }


def test_context_length_error_is_recognised_and_learned_into_the_profile(server):
    settings = Settings()
    settings.upsert_profile(
        ModelProfile(name="local", base_url=server.base_url, model=server.model)
    )
    save_settings(settings)
    server.script(Turn.context_length_error(limit=16_000))
    client = client_for(server, name="local")
    with pytest.raises(ContextLengthExceeded) as info:
        drain(client.stream_chat(MESSAGES, TOOLS, CancelToken()))
    assert info.value.limit == 16_000
    learned = client.learn_context_window(info.value.limit)
    assert (learned.tokens, learned.source) == (16_000, "learned")
    assert load_settings().profile("local").context_window == 16_000
    # an environment-only profile remembers it by endpoint and model
    env_client = client_for(server, name="environment")
    env_client.learn_context_window(9_000)
    assert client_for(server, name="environment").context_window().to_dict() == {
        "tokens": 9_000,
        "source": "learned",
    }


def test_parsing_helpers():
    assert window_from_error("This model's maximum context length is 8,192 tokens.") == 8192
    assert window_from_error("requested 9000 tokens, exceeds max_model_len=4096") == 4096
    assert window_from_error("something else went wrong") is None
    assert window_from_model_card({"id": "m", "meta": {"n_ctx_train": 32768}}) == 32768
    assert known_context_window("openai/gpt-4o-2024-08-06") == 128_000
    assert known_context_window("llama3.1:8b") == 131_072


def test_background_completion_is_not_streamed(server):
    server.script(Turn(text="  Churn by region.\n"))
    assert client_for(server).complete("name it", "text") == "Churn by region."
    assert server.chat_requests[0].get("stream") in (None, False)
    assert "tools" not in server.chat_requests[0]


def test_list_models_for_the_connection_test(server):
    cards = client_for(server).list_models()
    assert cards[0]["id"] == server.model and cards[0]["context_length"] == 32_768
    with FakeOpenAIServer() as dead:
        url = dead.base_url
    profile = ResolvedProfile("x", url, "m", FAKE_API_KEY, None)
    with pytest.raises(ModelError) as info:
        OpenAIModelClient(profile, AgentSettings()).list_models(timeout=2)
    assert info.value.code == "MODEL_UNREACHABLE" and FAKE_API_KEY not in str(info.value)


def test_an_enforced_context_length_is_reported_like_openai():
    with FakeOpenAIServer(context_length=600, enforce_context=True) as s:
        s.script(Turn(text="never sent"))
        long = [{"role": "user", "content": "churn " * 800}]
        with pytest.raises(ContextLengthExceeded) as info:
            drain(client_for(s).stream_chat(long, TOOLS, CancelToken()))
        assert info.value.limit == 600
