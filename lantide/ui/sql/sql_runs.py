"""What a SQL tab runs in its workers, and how a run's outcome is told to the analyst.

The functions that take a ``query`` run on a worker thread (no Qt): each runs one QEM
operation and fetches the first page of the cached result in the same worker, so the grid
shows rows at once with the same value types as the pages fetched later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lantide.query import result_warnings
from lantide.ui.sql.result_panel import first_block

if TYPE_CHECKING:
    from lantide.query.result_types import QueryResult

RUN_TAB, RUN_SELECTION, SOURCE_RUN = "tab", "selection", "source"
HISTORY_SOURCE = {RUN_TAB: "sql_tab", RUN_SELECTION: "selection", SOURCE_RUN: "source_run"}


def _first_rows(query, result: dict):
    if (
        result.get("status") == "ok"
        and result.get("materialized")
        and result.get("cached_table_name")
    ):
        return first_block(query, result["cached_table_name"])
    return None


def run_tab(query, project: str, tab: str, purpose: str | None, warning_id: str | None = None):
    """``run_sql_tab``: (result, first rows of its cached table). The analyst's run: no
    purpose needed while executing (then an exploratory step), see qem.check_purpose."""
    result = query.run_sql_tab(
        project, tab, purpose, large_remote_warning_id=warning_id, purpose_required=False
    )
    return result, _first_rows(query, result)


def run_selection(query, sql: str, purpose: str | None, project: str):
    """``run_query`` of selected SQL: (result, first rows when the QEM cached it)."""
    result = query.run_query(sql, purpose=purpose, project=project, purpose_required=False)
    return result, _first_rows(query, result)


def source_run(
    context, query, project: str, tab: str, purpose: str | None, confirmed: Sequence[str] = ()
):
    """Source Run with progress events: (report, the tab's relation info, first rows).
    ``confirmed``: large remote results the analyst agreed to stage."""
    report = query.source_run_sql_tab(
        project, tab, purpose, progress=context.emit, large_remote_warning_id=list(confirmed)
    )
    target = next((e for e in report.get("tabs", []) if e.get("tab") == tab), None)
    if target is None or target.get("status") not in ("ran", "skipped"):
        return report, None, []
    return report, query.relation_info(tab), first_block(query, tab)


# Warnings about the preview: the grid pages the whole cached table, so they do not apply
# to a paged grid.
PREVIEW_ONLY = frozenset({result_warnings.PREVIEW_CUT, result_warnings.PREVIEW_CELLS_CUT})


def hints_notice(result: QueryResult, *, paged: bool) -> tuple[str, str | None, str | None] | None:
    """(title, detail, code) of the QEM's hints and warnings on a result, or None.
    ``paged``: the grid pages the whole result, so the preview's warnings do not apply.
    Warnings are told apart by their codes (never their wording)."""
    hints = result.get("hints") or []
    said = {h.get("code") for h in hints}  # a hint's warning repeats the hint
    warnings = [
        _grid_cell_hint(w)
        for w in result_warnings.coded(result)
        if w.code not in said and not (paged and w.code in PREVIEW_ONLY)
    ]
    if not hints and not warnings:
        return None
    first = hints[0] if hints else {"message": warnings[0]}
    rest = [h.get("message", "") for h in hints[1:]] + warnings[0 if hints else 1 :]
    detail = "\n".join(x for x in [first.get("hint")] + rest if x)
    return first.get("message", ""), detail or None, first.get("code")


def _grid_cell_hint(warning: result_warnings.ResultWarning) -> str:
    """How the grid gets a whole value the preview cut: page it from a cached table."""
    if warning.code != result_warnings.PREVIEW_CELLS_CUT:
        return warning.message
    return (
        warning.message + "; give the query a label (or run the whole tab) and the grid "
        "pages the whole values, which copy in full"
    )


def position_in_tab(position: tuple[int, int], offset: tuple[int, int]) -> tuple[int, int]:
    """An error position in run SQL as (line, column) in the editor, given where the run
    SQL starts (``offset``: 0-based block number and column of a selection)."""
    line, column = position
    base_line, base_column = offset
    return base_line + line, (column + base_column if line == 1 else column)
