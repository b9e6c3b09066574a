"""The query history: what the analyst ran from SQL tabs (``.lantide/query_history.jsonl``,
one JSON object per run, append-only). The ledger is the agent's record; this is the
analyst's.

An entry: ``{"at", "source", "project", "tab", "sql", "status": "ok" | "error" |
"cancelled", "row_count", "duration_ms", "cached_table_name", "step_id"}``; an error or a
cancel adds ``"error"`` (the code) and ``"message"``. A Source Run's entry says what the
chain came to: ``ok`` only when the tab itself ran or was up to date; a cancel is
``cancelled`` with what had finished before it, and names no cached table.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from lantide.query.sourcerun import CANCELLED_CODE, chain_summary, tab_outcome
from lantide.workspace.atomic import append_jsonl, read_jsonl_tail

if TYPE_CHECKING:
    from lantide.query.result_types import QueryResult
    from lantide.query.sourcerun import SourceRunReport
    from lantide.workspace.model import Workspace


class HistoryEntry(TypedDict):
    """One line of the query history (see the module docstring)."""

    at: str
    source: str  # sql_tab, selection, source_run
    project: str | None
    tab: str | None
    sql: str
    # the keys below are missing from an entry of a run that neither answered nor failed
    status: NotRequired[Literal["ok", "error", "cancelled"]]
    row_count: NotRequired[int | None]
    duration_ms: NotRequired[int | None]
    cached_table_name: NotRequired[str | None]
    step_id: NotRequired[str | None]
    error: NotRequired[str]  # the error's code (an error or a cancel)
    message: NotRequired[str]


HISTORY_FILE = "query_history.jsonl"
HISTORY_SHOWN = 500


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def history_path(workspace: Workspace) -> Path:
    return workspace.lantide_dir / HISTORY_FILE


def run_entry(
    *,
    source: str,
    sql: str,
    project: str | None = None,
    tab: str | None = None,
    result: QueryResult | None = None,
    error: BaseException | None = None,
    duration_ms: int | None = None,
) -> HistoryEntry:
    """One history line from a run's result or its error."""
    entry: HistoryEntry = {
        "at": _now(),
        "source": source,
        "project": project,
        "tab": tab,
        "sql": sql,
    }
    if result is not None:
        entry.update(
            {
                "status": "ok",
                "row_count": result.get("row_count"),
                "duration_ms": result.get("duration_ms", duration_ms),
                "cached_table_name": result.get("cached_table_name"),
                "step_id": result.get("step_id"),
            }
        )
    elif error is not None:
        code = getattr(error, "code", type(error).__name__)
        entry.update(
            {
                "status": "cancelled" if code == CANCELLED_CODE else "error",
                "error": code,
                "message": getattr(error, "message", str(error)),
                "duration_ms": duration_ms,
            }
        )
    return entry


def source_run_entry(
    report: SourceRunReport,
    *,
    sql: str,
    project: str | None,
    tab: str,
    row_count: int | None = None,
) -> HistoryEntry:
    """The history line of a Source Run of ``tab`` from its report. ``row_count``: the
    rows of the tab's table when it ran or was up to date."""
    entry: HistoryEntry = {
        "at": _now(),
        "source": "source_run",
        "project": project,
        "tab": tab,
        "sql": sql,
        "duration_ms": report.get("duration_ms"),
        "row_count": None,
        "cached_table_name": None,
        "step_id": None,
    }
    own = next((e for e in report.get("tabs", []) if e.get("tab") == tab), None)
    outcomes = [tab_outcome(e) for e in report.get("tabs", [])]
    if report.get("cancelled") or "cancelled" in outcomes:
        entry.update(
            {
                "status": "cancelled",
                "error": CANCELLED_CODE,
                "message": f"cancelled by you; {chain_summary(report)}",
            }
        )
    elif own is not None and tab_outcome(own) in ("ran", "skipped"):
        step = own.get("step")
        entry.update(
            {
                "status": "ok",
                "row_count": own.get("row_count", row_count),
                "cached_table_name": tab,
                "step_id": step["step_id"] if step else None,
            }
        )
        if entry["row_count"] is None:
            entry["row_count"] = row_count
    else:
        failed = next((e for e in report.get("tabs", []) if e.get("status") == "failed"), None)
        error = failed.get("error") if failed else None
        entry.update(
            {
                "status": "error",
                "error": error["error"] if error else "SOURCE_RUN_FAILED",
                "message": (
                    f"{failed.get('tab')}: {error['message'] if error else ''}"
                    if failed
                    else chain_summary(report)
                ),
            }
        )
    return entry


def append_entry(workspace: Workspace, entry: HistoryEntry) -> None:
    append_jsonl(history_path(workspace), entry)


def read_history(workspace: Workspace, limit: int = HISTORY_SHOWN) -> list[dict[str, object]]:
    """The last ``limit`` entries, oldest first (a torn or foreign line is skipped); as
    read from the file, which the analyst may have edited: a :class:`HistoryEntry` in
    shape only when Lantide wrote it."""
    path = history_path(workspace)
    if not path.exists():
        return []
    return [e for e in read_jsonl_tail(path, limit) if isinstance(e, dict) and "sql" in e]
