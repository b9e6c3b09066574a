"""The shipped cl100k ranks (gzip-compressed for the installed build's size budget): read
and checked against their known hash; a damaged file is refused by name, never used."""

from __future__ import annotations

import gzip

import pytest

from lantide import tokens
from lantide.errors import LantideError
from lantide.package_data import resource_path


def test_the_shipped_ranks_decode_to_cl100k():
    ranks = tokens._cl100k_ranks()
    assert len(ranks) == 100_256 and ranks[b"!"] == 0 and ranks[b" the"] == 279


def test_ranks_that_do_not_match_the_known_hash_are_refused_naming_the_file(tmp_path, monkeypatch):
    folder = tmp_path / "tokenizer"
    folder.mkdir()
    shipped = resource_path("tokenizer", "cl100k_base.tiktoken.gz")
    text = gzip.decompress(shipped.read_bytes())
    (folder / shipped.name).write_bytes(gzip.compress(text.replace(b" 279\n", b" 280\n", 1)))
    monkeypatch.setattr(tokens, "resource_path", lambda *parts: tmp_path.joinpath(*parts))
    with pytest.raises(LantideError) as info:
        tokens._cl100k_ranks()
    assert info.value.code == "INSTALL_BROKEN" and str(folder / shipped.name) in info.value.message


@pytest.mark.parametrize(
    "damage", [b"not gzip at all", b"\x1f\x8b\x08\x00cut", None], ids=["plain", "cut", "missing"]
)
def test_an_unreadable_tokenizer_file_is_refused_naming_it(tmp_path, monkeypatch, damage):
    folder = tmp_path / "tokenizer"
    folder.mkdir()
    packed = folder / "cl100k_base.tiktoken.gz"
    if damage is not None:
        packed.write_bytes(damage)
    monkeypatch.setattr(tokens, "resource_path", lambda *parts: tmp_path.joinpath(*parts))
    with pytest.raises(LantideError) as info:
        tokens._cl100k_ranks()
    assert info.value.code == "INSTALL_BROKEN" and str(packed) in info.value.message
    assert "Reinstall" in (info.value.hint or "")
