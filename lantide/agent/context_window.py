"""How many tokens a model profile can take: discovered, never assumed.

In order: a window the user set or Lantide learned for the profile (settings), what the
endpoint reports in ``/v1/models`` (vLLM ``max_model_len``, LM Studio/OpenRouter
``context_length``, llama.cpp ``meta.n_ctx_train``, ...), a table of known models, and a
conservative default. When the server still answers "maximum context length is N tokens",
the number is learned and stored in the profile (or, for an environment-only profile,
under ``learned_context_windows`` in the settings), so the next call gets it right.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from lantide.workspace.settings import (
    ResolvedProfile,
    Settings,
    load_settings,
    update_settings,
)

DEFAULT_CONTEXT_WINDOW = 8_192
LEARNED_KEY = "learned_context_windows"

# Longest matching prefix wins; names are compared without a provider prefix or a tag.
KNOWN_CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude": 200_000,
    "gemini-1.5": 1_000_000,
    "gemini-2": 1_000_000,
    "llama3.1": 131_072,
    "llama-3.1": 131_072,
    "llama3.2": 131_072,
    "llama-3.2": 131_072,
    "llama3.3": 131_072,
    "llama3": 8_192,
    "llama-3": 8_192,
    "qwen2.5": 32_768,
    "qwen3": 40_960,
    "mistral-large": 131_072,
    "mistral-nemo": 131_072,
    "mistral": 32_768,
    "mixtral": 32_768,
    "gemma2": 8_192,
    "gemma3": 131_072,
    "phi3": 4_096,
    "phi4": 16_384,
    "deepseek": 65_536,
}

_CARD_KEYS = (
    "context_length",
    "max_model_len",
    "context_window",
    "max_context_length",
    "max_input_tokens",
    "n_ctx",
    "n_ctx_train",
    "max_position_embeddings",
)

_ERROR_PATTERNS = [
    re.compile(r"maximum context length is (\d[\d,]*)", re.I),
    re.compile(r"context (?:length|window|size) (?:of|is) (\d[\d,]*)", re.I),
    re.compile(r"max_model_len[^\d]{0,20}(\d[\d,]*)", re.I),
    re.compile(r"n_ctx[^\d]{0,20}(\d[\d,]*)", re.I),
    re.compile(r"(\d[\d,]*) tokens? (?:limit|maximum)", re.I),
]
_CONTEXT_ERROR_HINTS = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
    "exceeds the context",
    "n_ctx",
    "max_model_len",
)


class ContextWindowDict(TypedDict):
    tokens: int
    source: str


@dataclass(frozen=True)
class ContextWindow:
    tokens: int
    source: str  # profile / learned / endpoint / known / default

    def to_dict(self) -> ContextWindowDict:
        return {"tokens": self.tokens, "source": self.source}


def _bare_model_name(model: str) -> str:
    name = model.lower().rsplit("/", 1)[-1]
    return name.split(":", 1)[0]


def known_context_window(model: str) -> int | None:
    name = _bare_model_name(model)
    best = None
    for prefix, tokens in KNOWN_CONTEXT_WINDOWS.items():
        if name.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, tokens)
    return best[1] if best else None


def _positive_int(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def window_from_model_card(card: Mapping[str, object]) -> int | None:
    # a server's JSON: any key may hold anything
    """The context length a ``/v1/models`` entry reports, if any."""
    for key in _CARD_KEYS:
        n = _positive_int(card.get(key))
        if n:
            return n
    for nested in ("meta", "top_provider", "details", "model_info"):
        sub = card.get(nested)
        if isinstance(sub, dict):
            n = window_from_model_card(sub)
            if n:
                return n
    return None


def is_context_length_error(message: str, code: str | None = None) -> bool:
    text = f"{code or ''} {message}".lower()
    return any(h in text for h in _CONTEXT_ERROR_HINTS)


def window_from_error(message: str) -> int | None:
    """The limit stated in a context-length error, if the server names one."""
    for pattern in _ERROR_PATTERNS:
        match = pattern.search(message or "")
        if match:
            n = _positive_int(match.group(1).replace(",", ""))
            if n and n >= 512:
                return n
    return None


def _learned_key(profile: ResolvedProfile) -> str:
    return f"{profile.base_url.rstrip('/')}#{profile.model}"


def learned_context_window(profile: ResolvedProfile) -> int | None:
    try:
        settings = load_settings()
    except Exception:  # a broken settings file is reported elsewhere; do not guess from it
        return None
    learned = settings.extra.get(LEARNED_KEY)
    if isinstance(learned, dict):
        return _positive_int(learned.get(_learned_key(profile)))
    return None


def remember_context_window(profile: ResolvedProfile, tokens: int) -> None:
    """Store a learned window: in the named profile when it serves this model, else by
    endpoint and model. A settings file that cannot be read is left alone."""

    def change(settings: Settings) -> None:  # on the file as it is now (the app may write it too)
        stored = settings.profile(profile.name)
        if (
            stored is not None
            and stored.model == profile.model
            and stored.base_url.rstrip("/") == profile.base_url.rstrip("/")
        ):
            stored.context_window = tokens
        else:
            learned = settings.extra.get(LEARNED_KEY)
            learned = dict(learned) if isinstance(learned, dict) else {}
            learned[_learned_key(profile)] = tokens
            settings.extra[LEARNED_KEY] = learned

    update_settings(change)


def resolve_context_window(
    profile: ResolvedProfile, endpoint_card: Mapping[str, object] | None
) -> ContextWindow:
    """Pick the window from what is known; ``endpoint_card`` is the model's /v1/models entry."""
    if profile.context_window:
        return ContextWindow(int(profile.context_window), "profile")
    learned = learned_context_window(profile)
    if learned:
        return ContextWindow(learned, "learned")
    if endpoint_card:
        reported = window_from_model_card(endpoint_card)
        if reported:
            return ContextWindow(reported, "endpoint")
    known = known_context_window(profile.model)
    if known:
        return ContextWindow(known, "known")
    return ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")
