"""Reading a conversation file whose records carry fields of the wrong shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lantide.agent.conversation import Conversation


@pytest.mark.parametrize("meta", [5, True, "xy", [{}, {}]])
def test_a_single_message_record_with_a_stray_meta_field_still_opens(tmp_path: Path, meta):
    # "meta" belongs to iteration records only; on a single-message record it is ignored,
    # whatever its shape (a hand-edited or damaged file must not stop the conversation)
    conv = Conversation.create(tmp_path, "c1")
    conv.add_message({"role": "user", "content": "hi"}, 1)
    stray = {
        "type": "message",
        "turn": 1,
        "message": {"role": "assistant", "content": "Hello."},
        "meta": meta,
    }
    with open(conv.path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(stray) + "\n")
    before = conv.path.read_bytes()

    reopened = Conversation.open(tmp_path, "c1")

    contents = [r["message"]["content"] for r in reopened.message_records()]
    assert contents == ["hi", "Hello."]
    assert reopened.problems == []
    assert conv.path.read_bytes() == before  # read, never rewritten
