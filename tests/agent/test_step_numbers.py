"""A new step id is read incrementally from the ledger (not the whole file per step) and is
always the one a full read of the file gives, whatever else writes to the file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lantide.agent import ledger as ledger_module
from lantide.agent.ledger import Ledger


def full_read_id(ledger_dir: Path) -> str:
    # the rule as a full read states it: past the highest number on any line and past
    # the count of usable steps
    steps, highest = Ledger(ledger_dir, "c1")._read()
    return f"s{max(highest, len(steps)) + 1}"


def step(step_id: str | None = None) -> dict:
    fields = {"tool": "run_query", "sql": "SELECT 1", "row_count": 1}
    return {**fields, "step_id": step_id} if step_id else fields


def raw_append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as f:
        f.write(data)


OPS = st.one_of(
    st.just(("append", None)),
    st.tuples(st.just("other_process_step"), st.integers(1, 60)),
    st.tuples(st.just("hex_step"), st.integers(0, 2**40)),
    st.just(("reflection", None)),
    st.just(("garbage", None)),
    st.just(("bad_types", None)),
    st.just(("torn", None)),
    st.tuples(st.just("unterminated"), st.integers(1, 60)),
    st.just(("update", None)),
    st.tuples(st.just("rewrite_in_place"), st.integers(1, 90)),
    st.just(("delete", None)),
)


def apply(ledger: Ledger, op: str, value: int | None) -> None:
    path = ledger.path
    if op == "append":
        ledger.append(step())
    elif op == "other_process_step":
        raw_append(
            path, json.dumps({**step(f"s{value}"), "conversation_id": "c1"}).encode() + b"\n"
        )
    elif op == "hex_step":
        ledger.append(step(f"{value:012x}"))
    elif op == "reflection":
        ledger.append_reflection({"verdict": "ok"})
    elif op == "garbage":
        raw_append(path, b'{"step_id": "s99", "tool": \n')
    elif op == "bad_types":  # counts for the highest number, not as a usable step
        raw_append(path, json.dumps({**step("s7"), "row_count": "many"}).encode() + b"\n")
    elif op == "torn":  # a crash mid-write: the next append ends the line first
        raw_append(path, b'{"step_id": "s80", "tool": "run_q')
    elif op == "unterminated":  # a whole record whose line end was not written yet
        raw_append(path, json.dumps(step(f"s{value}")).encode())
    elif op == "update":
        steps = ledger.steps()
        if steps:
            ledger.update(steps[0]["step_id"], {"summary": "changed later"}, by="analyst")
    elif op == "rewrite_in_place" and path.exists():  # same file, other content
        lines = [json.dumps(step(f"s{value + i}")).encode() + b"\n" for i in range(3)]
        with path.open("r+b") as f:
            f.truncate(0)
            f.write(b"".join(lines))
    elif op == "delete":
        path.unlink(missing_ok=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(OPS, max_size=25))
def test_the_new_step_id_is_what_a_full_read_gives_after_any_writes(ops):
    with tempfile.TemporaryDirectory() as tmp:
        ledger_dir = Path(tmp) / "ledger"
        ledger = Ledger(ledger_dir, "c1")
        for op, value in ops:
            apply(ledger, op, value)
            assert ledger.new_step_id() == full_read_id(ledger_dir), (op, value)
        ids = [s["step_id"] for s in ledger.steps()]
        assert ids.count(ledger.new_step_id()) == 0


def test_a_new_step_id_reads_only_what_was_appended_since_the_last(tmp_path, monkeypatch):
    ledger = Ledger(tmp_path / "ledger", "c1")
    for _ in range(200):
        ledger.append(step())
    assert ledger.new_step_id() == "s201"
    parsed: list[bytes] = []
    real = ledger_module.parse_log_line
    monkeypatch.setattr(
        ledger_module, "parse_log_line", lambda raw: parsed.append(raw) or real(raw)
    )
    ledger.append(step())
    raw_append(ledger.path, json.dumps(step("s300")).encode() + b"\n")
    assert ledger.new_step_id() == "s301"
    assert len(parsed) == 2  # the two new lines, not the 202 of the file
