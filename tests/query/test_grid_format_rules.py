"""Column formats of the result grid (lantide.query.grid_formats): what a format writes,
and the per-tab state file: kept per tab, other tabs untouched, a broken file reported
and never written over."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from lantide.errors import CorruptFileError
from lantide.query.grid_formats import (
    checked_format,
    format_cell,
    load_tab_state,
    rename_tab_state,
    save_tab_state,
)
from lantide.workspace.layout import grid_state_path


def test_number_precision_and_thousands():
    assert format_cell(Decimal("1248.75"), {"decimals": 0}) == "1,249"
    assert format_cell(1234567, {"thousands": True}) == "1,234,567"
    assert format_cell(Decimal("1234.5"), {"thousands": False}) == "1234.5"
    assert format_cell(0.1 + 0.2, {"decimals": 3, "thousands": False}) == "0.300"
    assert format_cell(-8262570.91, {"decimals": 1}, group=".", point=",") == "-8.262.570,9"
    assert format_cell(float("nan"), {"decimals": 2}) is None  # left to the grid
    assert format_cell(True, {"decimals": 2}) is None and format_cell("12", {"decimals": 2}) is None
    assert format_cell(12.5, {}) is None


def test_date_formats():
    day = dt.date(2024, 3, 31)
    assert format_cell(day, {"date": "dmy_dots"}) == "31.03.2024"
    assert format_cell(day, {"date": "mdy_slashes"}) == "03/31/2024"
    stamp = dt.datetime(2024, 3, 31, 18, 5, 7)
    assert format_cell(stamp, {"date": "dmy_slashes"}) == "31/03/2024 18:05:07"
    assert format_cell(day, {"date": "nonsense"}) is None


def test_bad_stored_formats_are_read_as_far_as_they_are_valid():
    assert checked_format({"decimals": 99, "thousands": "yes", "date": "iso"}) == {"date": "iso"}
    assert checked_format({"decimals": True}) == {} and checked_format("x") == {}


def test_state_is_kept_per_tab_and_a_broken_file_is_never_written_over(tmp_path):
    root = tmp_path
    (root / ".lantide").mkdir()
    assert load_tab_state(root, "p", "t") == {"columns": {}, "freeze_first": False}
    save_tab_state(root, "p", "t", {"columns": {"amount": {"decimals": 2}}, "freeze_first": True})
    save_tab_state(root, "p", "u", {"columns": {"day": {"date": "iso"}}, "freeze_first": False})
    assert load_tab_state(root, "p", "t") == {
        "columns": {"amount": {"decimals": 2}},
        "freeze_first": True,
    }
    assert load_tab_state(root, "p", "u")["columns"] == {"day": {"date": "iso"}}
    save_tab_state(root, "p", "t", {"columns": {}, "freeze_first": False})  # back to default
    data = json.loads(grid_state_path(root).read_text())
    assert list(data["tabs"]) == ["p/u"]

    grid_state_path(root).write_text("{not json", encoding="utf-8")
    with pytest.raises(CorruptFileError):
        load_tab_state(root, "p", "u")
    with pytest.raises(CorruptFileError):
        save_tab_state(root, "p", "u", {"columns": {}, "freeze_first": True})
    assert grid_state_path(root).read_text() == "{not json"


def test_a_renamed_tab_keeps_its_state(tmp_path):
    (tmp_path / ".lantide").mkdir()
    save_tab_state(tmp_path, "p", "old", {"columns": {"a": {"decimals": 1}}, "freeze_first": True})
    save_tab_state(
        tmp_path, "p", "other", {"columns": {"b": {"date": "iso"}}, "freeze_first": False}
    )
    rename_tab_state(tmp_path, "p", "old", "new")
    assert load_tab_state(tmp_path, "p", "new")["columns"] == {"a": {"decimals": 1}}
    assert load_tab_state(tmp_path, "p", "old") == {"columns": {}, "freeze_first": False}
    assert load_tab_state(tmp_path, "p", "other")["columns"] == {"b": {"date": "iso"}}
    rename_tab_state(tmp_path, "p", "missing", "x")  # nothing kept: nothing written
    assert "p/x" not in grid_state_path(tmp_path).read_text()
