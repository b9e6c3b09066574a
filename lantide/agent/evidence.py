"""Evidence kinds of ledger steps, and the values a Report number is checked against.

A step is **formal** when it ran while its project was ``executing``, with a purpose, by a
tool that runs a statement (``run_query``, ``run_sql_tab``, ``source_run_sql_tab``);
every other step (no project, planning or review, no purpose) is **exploratory**.
``validate_query`` returns no data and makes no step: it is exploratory by nature and never
citable. A ledger line written before kinds were recorded has no ``evidence`` field and
counts as exploratory: nobody can tell any more whether it ran under an approved Plan.

With each step the ledger keeps ``result_values``: the distinct numbers of its preview
rows (at most :data:`MAX_RESULT_VALUES`, ``result_values_cut`` when there were more; for a
Source Run, which reads no preview, the first rows of the tab's cached table), so
``lantide report check`` can tell whether a Report number is in the step's result without
running anything again. The row count counts as a value of the result too (when the
result has more than one row: an aggregate's one row is no finding).

Since issue 26 a step also keeps ``result_cells``: ``{"columns": [names], "rows": [[number
or null, ...], ...]}``, the numbers of its preview rows cell by cell (null: a cell that is
no number), at most :data:`MAX_RESULT_CELLS` cells (``result_cells_cut`` when rows were
left out), so a Report number is matched to a cell (row, column) and never to the row
count by chance. ``result_values`` stays for older readers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, NotRequired, TypedDict

FORMAL, EXPLORATORY = "formal", "exploratory"
EVIDENCE_KINDS = (FORMAL, EXPLORATORY)
FORMAL_TOOLS = frozenset({"run_query", "run_sql_tab", "source_run_sql_tab"})
MAX_RESULT_VALUES = 1_000
MAX_RESULT_CELLS = 2_000  # about 200 rows of 10 columns; a ledger line stays small


def evidence_kind(project_status: str | None, purpose: Any, tool: str) -> str:
    formal = (
        project_status == "executing"
        and isinstance(purpose, str)
        and purpose.strip()
        and tool in FORMAL_TOOLS
    )
    return FORMAL if formal else EXPLORATORY


class ResultCells(TypedDict):
    """The numbers of a step's preview rows cell by cell (None: a cell that is no number)."""

    columns: list[str]
    rows: list[list[float | int | None]]


class StepEvidence(TypedDict):
    """What the ledger adds to a step about its evidence."""

    evidence: str  # FORMAL or EXPLORATORY
    result_values: list[float | int]
    result_values_cut: NotRequired[bool]
    result_cells: ResultCells
    result_cells_cut: NotRequired[bool]


def step_kind(step: Mapping[str, object]) -> str:
    """The kind a ledger step is read as (older lines without the field: exploratory)."""
    kind = step.get("evidence")
    return kind if isinstance(kind, str) and kind in EVIDENCE_KINDS else EXPLORATORY


def as_number(value: Any) -> float | None:
    """A cell as a finite number, or None (text that reads as a number counts: DuckDB's
    DECIMAL and HUGEINT reach the preview as text)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, Decimal)):
        number = float(value)
    elif isinstance(value, str) and 0 < len(value) <= 40:
        try:
            number = float(Decimal(value.strip()))
        except (InvalidOperation, ValueError):
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _rows(preview: Any) -> list[Any]:
    if isinstance(preview, dict):
        return list(preview.get("rows") or [])
    return list(preview or [])


def result_values(result: Mapping[str, Any]) -> tuple[list[float], bool]:
    """The distinct numbers of a query result's preview rows and its row count, in the
    order met, and whether some were left out."""
    seen: dict[float, None] = {}
    cut = False
    row_count = as_number(result.get("row_count"))
    if row_count is not None and row_count > 1:  # a single row's count says nothing
        seen[row_count] = None
    for row in _rows(result.get("preview")):
        cells = row.values() if isinstance(row, dict) else row if isinstance(row, list) else ()
        for cell in cells:
            number = as_number(cell)
            if number is None or number in seen:
                continue
            if len(seen) >= MAX_RESULT_VALUES:
                cut = True
                break
            seen[number] = None
    return list(seen), cut


def _column_names(result: Mapping[str, Any], width: int) -> list[str]:
    names = []
    for column in result.get("columns") or []:
        name = column.get("name") if isinstance(column, dict) else column
        names.append(str(name))
    preview = result.get("preview")
    first = _rows(preview)[:1]
    if first and isinstance(first[0], dict) and len(names) != len(first[0]):
        names = [str(k) for k in first[0]]
    names += [f"column {i + 1}" for i in range(len(names), width)]
    return names[:width] if width else names


def result_cells(result: Mapping[str, Any]) -> tuple[ResultCells, bool]:
    """The numbers of the preview rows cell by cell (``None``: not a number), the column
    names, and whether rows were left out (over :data:`MAX_RESULT_CELLS` cells)."""
    rows: list[list[float | int | None]] = []
    cut = False
    count = 0
    width = 0
    for row in _rows(result.get("preview")):
        cells = list(row.values()) if isinstance(row, dict) else row
        cells = cells if isinstance(cells, list) else []
        if count + len(cells) > MAX_RESULT_CELLS:
            cut = True
            break
        count += len(cells)
        width = max(width, len(cells))
        rows.append([_stored(as_number(c)) for c in cells])
    return {"columns": _column_names(result, width), "rows": rows}, cut


def _stored(value: float | None) -> float | int | None:
    if value is None:
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def evidence_fields(
    tool: str, result: Mapping[str, Any], purpose: Any, project_status: str | None
) -> StepEvidence:
    """What the ledger adds to a step about its evidence (see the module docstring)."""
    values, cut = result_values(result)
    cells, cells_cut = result_cells(result)
    kind = evidence_kind(project_status, purpose, tool)
    stored = [int(v) if v.is_integer() and abs(v) < 2**53 else v for v in values]
    # the keys in the order the ledger has always written them
    out: StepEvidence
    if cut:
        out = {
            "evidence": kind,
            "result_values": stored,
            "result_values_cut": True,
            "result_cells": cells,
        }
    else:
        out = {"evidence": kind, "result_values": stored, "result_cells": cells}
    if cells_cut:
        out["result_cells_cut"] = True
    return out
