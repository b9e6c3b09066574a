"""Counting tokens offline.

tiktoken normally downloads its encodings on first use. Lantide ships the ``cl100k_base``
ranks in ``resources/tokenizer/`` and builds the encoding from that file, so counting
never touches the network. Models whose tokenizer we do not ship get cl100k counts, which
are close for modern BPE tokenizers; if even that fails, a length-based estimate.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from lantide.errors import LantideError
from lantide.package_data import resource_path

if TYPE_CHECKING:
    import tiktoken

_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_lock = threading.Lock()


def _cl100k_ranks() -> dict[bytes, int]:
    """The shipped ranks (gzip-compressed: the installed build has a size budget), checked
    against their known hash, in tiktoken's format: one ``base64-token rank`` per line."""
    import base64
    import gzip
    import hashlib

    packed = resource_path("tokenizer", "cl100k_base.tiktoken.gz")
    try:
        contents = gzip.decompress(packed.read_bytes())
    except (OSError, EOFError) as exc:  # missing, unreadable, not gzip, cut short
        raise LantideError(
            f"The tokenizer file {packed} cannot be read: {exc}.",
            hint="Reinstall Lantide.",
            code="INSTALL_BROKEN",
        ) from exc
    if hashlib.sha256(contents).hexdigest() != _CL100K_SHA256:
        raise LantideError(
            f"The tokenizer file {packed} is damaged (its hash is not the shipped one).",
            hint="Reinstall Lantide.",
            code="INSTALL_BROKEN",
        )
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in contents.splitlines() if line)
    }


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    import tiktoken

    ranks = _cl100k_ranks()
    return tiktoken.Encoding(
        name="cl100k_base_lantide",
        pat_str=_PAT,
        mergeable_ranks=ranks,
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    )


def estimate_tokens(text: str) -> int:
    """A fallback: about four characters per token."""
    return (len(text) + 3) // 4


def count_tokens(text: str, model: str | None = None) -> int:
    """Tokens of ``text``. ``model`` is accepted for future per-model tokenizers."""
    if not text:
        return 0
    try:
        with _lock:
            enc = _encoding()
        return len(enc.encode(text, disallowed_special=()))
    except Exception:
        return estimate_tokens(text)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` within ``max_tokens`` tokens."""
    if count_tokens(text) <= max_tokens:
        return text
    try:
        enc = _encoding()
        return enc.decode(enc.encode(text, disallowed_special=())[:max_tokens])
    except Exception:
        return text[: max_tokens * 4]
