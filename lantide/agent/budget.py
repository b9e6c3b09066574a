"""The per-conversation token budget (``Settings.agent.token_budget``; 0 means none).

Every model request of the conversation is charged: the main model's requests (the
server's reported usage when it sends one, else the assembled prompt's count plus the
reply's), the reflection reviews and the background calls (title, knowledge). A turn's
charge is written with its ``turn_finished`` conversation event (``tokens``), so a reopened
conversation starts from what it already used; background calls that finish after the
turn are carried into the next turn's record.

At ``WARN_SHARE`` of the budget a :class:`~lantide.agent.events.TokenBudgetReached`
warning is raised once; at the whole budget the loop asks the model nothing more and the
turn ends with reason ``token_budget`` and a note saying what to do.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from lantide.agent.conversation import Conversation
from lantide.agent.events import TokenBudgetReached
from lantide.tokens import count_tokens
from lantide.workspace.settings import Settings

if TYPE_CHECKING:
    from lantide.agent.model_client import ModelReply
    from lantide.agent.prompt import AssembledPrompt

WARN_SHARE = 0.8


def reply_tokens(reply: ModelReply) -> int:
    """The tokens of a model reply (its text and tool calls)."""
    n = count_tokens(reply.content or "")
    for call in reply.tool_calls:
        n += count_tokens(call.name) + count_tokens(call.arguments or "") + 3
    return n


class TokenBudget:
    def __init__(self, conversation: Conversation, settings: Settings):
        self.conversation = conversation
        self.settings = settings
        self._lock = threading.Lock()
        self._recorded = sum(
            int(tokens)
            for e in conversation.events(("turn_finished",))
            if isinstance(tokens := e.get("tokens"), (int, float))
        )
        self._unrecorded = 0
        # prompt tokens the server reported as served from its prefix cache (None: it
        # reports none), for measuring what a turn costs outside the cached prefix
        self.cached_prompt_tokens: int | None = None
        self._warned = self.budget > 0 and self._recorded >= self.budget * WARN_SHARE

    @property
    def budget(self) -> int:
        """The budget now (read live: the analyst may change it between turns)."""
        try:
            return max(0, int(self.settings.agent.token_budget or 0))
        except (TypeError, ValueError):
            return 0

    @property
    def used(self) -> int:
        with self._lock:
            return self._recorded + self._unrecorded

    def charge(self, tokens: int) -> None:
        with self._lock:
            self._unrecorded += max(0, int(tokens))

    def charge_request(self, prompt: AssembledPrompt, reply: ModelReply) -> None:
        """One main-model request: the server's usage if reported, else our count."""
        usage = getattr(reply, "usage", None) or {}
        total = usage.get("total_tokens") or (
            usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        )
        self.charge(total if total else prompt.tokens + reply_tokens(reply))
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        if isinstance(cached, int):  # the server's prefix cache served these prompt tokens
            with self._lock:
                self.cached_prompt_tokens = (self.cached_prompt_tokens or 0) + cached

    def take_turn_charge(self) -> int:
        """What is not yet recorded; the caller writes it with the turn's end."""
        with self._lock:
            n, self._unrecorded = self._unrecorded, 0
            self._recorded += n
            return n

    def exhausted(self) -> bool:
        return self.budget > 0 and self.used >= self.budget

    def warning(self) -> TokenBudgetReached | None:
        """The warning, the first time the warning share is crossed in this session."""
        budget = self.budget
        if budget <= 0 or self._warned or self.used < budget * WARN_SHARE:
            return None
        self._warned = True
        return TokenBudgetReached(self.used, budget, self.used >= budget)
