"""Text from outside Lantide (a model's answer, a log line) made valid before it is kept.

Python strings may hold lone surrogates (``"\\ud800"``): a JSON string escape decodes to
one, and a model can send exactly that in its tool-call arguments or its text. Such a
string cannot be encoded as UTF-8, so writing it to a file or a terminal raises, far from
where it came in. Everything the model sends goes through :func:`clean_text` /
:func:`clean_json` on arrival: each lone surrogate becomes U+FFFD, every other character
is kept.
"""

from __future__ import annotations

from typing import Any

REPLACEMENT = "\ufffd"


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (the same object when valid)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    # A well-formed pair written as two code points is joined; a lone half is replaced.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_json(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings) with every string cleaned, keys too."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k) if isinstance(k, str) else k: clean_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    if isinstance(value, tuple):
        return tuple(clean_json(v) for v in value)
    return value


def has_escaped_surrogate(text: str) -> bool:
    """Whether JSON text may decode to a lone surrogate (a ``\\uD800``-``\\uDFFF`` escape):
    a cheap test so that only such lines pay for :func:`clean_json`."""
    lowered = text.lower()
    return any(f"\\ud{c}" in lowered for c in "89abcdef")
