"""One step id form everywhere (issue 30 item 3): a step the ledger numbers itself (a chart,
an outside agent's step) gets the query layer's 12 hex digits, as a run_query step does, and
never an id already on a line of the file, a skipped line too."""

from __future__ import annotations

import json
import re

from lantide.agent.ledger import Ledger
from lantide.query import results

HEX12 = re.compile(r"[0-9a-f]{12}")


def test_a_step_without_an_id_gets_the_query_layers_form(tmp_path):
    ledger = Ledger(tmp_path, "c1")
    first = ledger.append({"tool": "create_chart", "purpose": "chart"})
    second = ledger.append({"tool": "run_query", "sql": "SELECT 1", "row_count": 1})
    assert HEX12.fullmatch(first["step_id"]), first["step_id"]
    assert HEX12.fullmatch(second["step_id"])
    assert first["step_id"] != second["step_id"]
    assert [s["step_id"] for s in ledger.steps()] == [first["step_id"], second["step_id"]]


def test_an_id_on_any_line_is_never_given_again(tmp_path, monkeypatch):
    ledger = Ledger(tmp_path, "c1")
    ledger.path.parent.mkdir(parents=True, exist_ok=True)
    # a line the reader skips (no tool) still holds its id
    ledger.path.write_text(json.dumps({"step_id": "aaaaaaaaaaaa"}) + "\n", encoding="utf-8")
    offered = iter(["aaaaaaaaaaaa", "bbbbbbbbbbbb"])
    monkeypatch.setattr(results, "new_step_id", lambda: next(offered))
    assert ledger.new_step_id() == "bbbbbbbbbbbb"


def test_old_ledgers_with_s_numbers_still_read(tmp_path):
    ledger = Ledger(tmp_path, "c1")
    ledger.path.parent.mkdir(parents=True, exist_ok=True)
    ledger.path.write_text(
        json.dumps({"step_id": "s1", "tool": "run_query", "sql": "SELECT 1"}) + "\n",
        encoding="utf-8",
    )
    new = ledger.append({"tool": "create_chart"})
    assert [s["step_id"] for s in ledger.steps()] == ["s1", new["step_id"]]
    assert ledger.step("s1")["sql"] == "SELECT 1"
