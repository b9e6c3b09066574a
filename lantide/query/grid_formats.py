"""How the result grid shows a column (number precision, thousands separators, date
format) and whether it freezes the first column, kept per SQL tab.

The state of every tab lives in one small file, ``.lantide/grid_state.json``
(:func:`lantide.workspace.layout.grid_state_path`), written atomically:
``{"version": 1, "tabs": {"PROJECT/TAB": {"columns": {NAME: FORMAT}, "freeze_first":
bool}}}``. A format is ``{"decimals": 0..12, "thousands": bool, "date": KEY}``, each key
optional (absent: the grid's default). A file that cannot be read is reported and never
written over; a tab's entry with unknown keys or values is read as far as it is valid.

A format changes only what the grid shows: copy and export keep every digit.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import threading
from pathlib import Path
from typing import TypedDict

from lantide.errors import MissingFileError
from lantide.workspace.atomic import atomic_write_json
from lantide.workspace.jsonfile import read_json_object
from lantide.workspace.layout import grid_state_path

STATE_VERSION = 1
_WRITING = threading.Lock()  # one read-change-write of the file at a time
MAX_DECIMALS = 12
# key -> (label shown in the menu, strftime pattern of a date)
DATE_FORMATS: dict[str, tuple[str, str]] = {
    "iso": ("2024-03-31 (ISO)", "%Y-%m-%d"),
    "dmy_dots": ("31.03.2024", "%d.%m.%Y"),
    "dmy_slashes": ("31/03/2024", "%d/%m/%Y"),
    "mdy_slashes": ("03/31/2024", "%m/%d/%Y"),
    "day_month_year": ("31 Mar 2024", "%d %b %Y"),
}


class ColumnFormat(TypedDict, total=False):
    decimals: int
    thousands: bool
    date: str


class TabGridState(TypedDict):
    columns: dict[str, ColumnFormat]
    freeze_first: bool


def empty_state() -> TabGridState:
    return {"columns": {}, "freeze_first": False}


def checked_format(raw: object) -> ColumnFormat:
    """The valid part of a stored or asked-for format."""
    out: ColumnFormat = {}
    if not isinstance(raw, dict):
        return out
    decimals = raw.get("decimals")
    if (
        isinstance(decimals, int)
        and not isinstance(decimals, bool)
        and 0 <= decimals <= MAX_DECIMALS
    ):
        out["decimals"] = decimals
    if isinstance(raw.get("thousands"), bool):
        out["thousands"] = raw["thousands"]
    if raw.get("date") in DATE_FORMATS:
        out["date"] = raw["date"]
    return out


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)


def format_cell(
    value: object, fmt: ColumnFormat, *, group: str = ",", point: str = "."
) -> str | None:
    """``value`` as ``fmt`` writes it, or None when ``fmt`` says nothing about it (the
    grid's own display then applies). NaN and infinities are left to the grid."""
    if _is_number(value) and ("decimals" in fmt or "thousands" in fmt):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return None
        decimals = fmt.get("decimals")
        grouped = fmt.get("thousands", not isinstance(value, int))
        sep = "," if grouped else ""
        if decimals is not None:
            text = f"{value:{sep}.{decimals}f}"
        elif isinstance(value, int):
            text = f"{value:{sep}}"
        elif isinstance(value, decimal.Decimal):
            text = f"{value:{sep}f}"
        else:  # a double at the grid's 13 significant digits
            text = f"{value:{sep}.13g}"
        swap: dict[str, str | int | None] = {",": "\0", ".": point}
        return text.translate(str.maketrans(swap)).replace("\0", group)
    if isinstance(value, (_dt.date, _dt.datetime)) and fmt.get("date") in DATE_FORMATS:
        pattern = DATE_FORMATS[fmt["date"]][1]
        if isinstance(value, _dt.datetime):
            pattern += " %H:%M:%S" + (".%f" if value.microsecond else "")
            pattern += " %z" if value.tzinfo is not None else ""
        return value.strftime(pattern)
    return None


def tab_key(project: str, tab: str) -> str:
    return f"{project}/{tab}"


def _read(root: Path) -> dict[str, object]:
    try:
        return read_json_object(grid_state_path(root), "grid state")
    except MissingFileError:
        return {}


def load_tab_state(root: Path, project: str, tab: str) -> TabGridState:
    """The grid state of ``project/tab`` (an empty one when none is kept). A file that
    cannot be read raises :class:`~lantide.errors.CorruptFileError`."""
    tabs = _read(root).get("tabs")
    entry = tabs.get(tab_key(project, tab)) if isinstance(tabs, dict) else None
    state = empty_state()
    if not isinstance(entry, dict):
        return state
    columns = entry.get("columns")
    if isinstance(columns, dict):
        for name, raw in columns.items():
            fmt = checked_format(raw)
            if isinstance(name, str) and fmt:
                state["columns"][name] = fmt
    state["freeze_first"] = entry.get("freeze_first") is True
    return state


def save_tab_state(root: Path, project: str, tab: str, state: TabGridState) -> None:
    """Keep ``state`` for ``project/tab`` (other tabs' entries as they are). Refuses
    (``CorruptFileError``) to write over a file it cannot read."""
    with _WRITING:
        _save(root, project, tab, state)


def _save(root: Path, project: str, tab: str, state: TabGridState) -> None:
    data = _read(root)
    tabs = data.get("tabs")
    tabs = dict(tabs) if isinstance(tabs, dict) else {}
    columns = {n: checked_format(f) for n, f in state["columns"].items()}
    entry: dict[str, object] = {"columns": {n: f for n, f in columns.items() if f}}
    if state["freeze_first"]:
        entry["freeze_first"] = True
    if entry["columns"] or state["freeze_first"]:  # else the tab's entry goes
        tabs[tab_key(project, tab)] = entry
    else:
        tabs.pop(tab_key(project, tab), None)
    data["version"] = STATE_VERSION
    data["tabs"] = tabs
    atomic_write_json(grid_state_path(root), data)


def rename_tab_state(root: Path, project: str, old: str, new: str) -> None:
    """Carry the state of tab ``old`` to its new name ``new`` (a renamed tab keeps its
    formats); nothing kept, nothing written."""
    with _WRITING:
        data = _read(root)
        tabs = data.get("tabs")
        if not isinstance(tabs, dict) or tab_key(project, old) not in tabs:
            return
        tabs = dict(tabs)
        tabs[tab_key(project, new)] = tabs.pop(tab_key(project, old))
        data["tabs"] = tabs
        atomic_write_json(grid_state_path(root), data)
