"""A scripted model at the engine's own boundary (:class:`lantide.agent.model_client.ModelClient`).

Each call to ``stream_chat`` takes the next scripted step: a :class:`ModelReply` (streamed
as a few text chunks, then the reply) or an exception to raise. ``expect`` callables see
the messages and tool names of that request. A call beyond the script fails the test at
once; :meth:`ScriptedModel.assert_done` fails it when a step was never used.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lantide.agent.context_window import ContextWindow
from lantide.agent.model_client import ModelReply, TextChunk, ToolCallRequest


def reply(text: str = "", *calls: tuple[str, dict]) -> ModelReply:
    return ModelReply(
        text,
        [
            ToolCallRequest(f"call_{i}_{name}", name, json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ],
        "tool_calls" if calls else "stop",
    )


@dataclass
class Step:
    outcome: ModelReply | BaseException
    expect: Callable[[list[dict], list[str]], None] | None = None


@dataclass
class ScriptedModel:
    steps: list[Step] = field(default_factory=list)
    window: int = 32_000
    model: str = "scripted"
    requests: list[dict[str, Any]] = field(default_factory=list)
    completions: list[tuple[str, str]] = field(default_factory=list)
    complete_answer: str = "Scripted title"
    learned: list[int | None] = field(default_factory=list)

    def add(self, outcome, expect=None) -> ScriptedModel:
        self.steps.append(Step(outcome, expect))
        return self

    def stream_chat(self, messages, tools, cancel):
        names = [t["function"]["name"] for t in tools]
        self.requests.append({"messages": json.loads(json.dumps(messages)), "tools": names})
        if not self.steps:
            raise AssertionError(f"unexpected model call #{len(self.requests)}: nothing scripted")
        step = self.steps.pop(0)
        if step.expect is not None:
            step.expect(messages, names)
        if isinstance(step.outcome, BaseException):
            raise step.outcome
        text = step.outcome.content or ""
        for i in range(0, len(text), 16):
            yield TextChunk(text[i : i + 16])
        yield step.outcome

    def complete(self, system, user, cancel=None):
        self.completions.append((system, user))
        return self.complete_answer

    def context_window(self):
        return ContextWindow(self.window, "scripted")

    def learn_context_window(self, tokens):
        self.learned.append(tokens)
        self.window = tokens or int(self.window * 0.75)
        return ContextWindow(self.window, "learned")

    def assert_done(self):
        assert not self.steps, f"{len(self.steps)} scripted model step(s) never used"
