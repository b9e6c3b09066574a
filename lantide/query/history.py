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
from typing import TYPE_CHECKING, Any

from lantide.query.sourcerun import CANCELLED_CODE, chain_summary, tab_outcome
from lantide.workspace.atomic import append_jsonl, read_jsonl_tail

if TYPE_CHECKING:
    from lantide.workspace.model import Workspace

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
    result: dict[str, Any] | None = None,
    error: BaseException | None = None,
    duration_ms: int | None = None,
) -> dict[str, Any]:
    """One history line from a run's result or its error."""
    entry: dict[str, Any] = {
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
    report: dict[str, Any], *, sql: str, project: str | None, tab: str, row_count: int | None = None
) -> dict[str, Any]:
    """The history line of a Source Run of ``tab`` from its report. ``row_count``: the
    rows of the tab's table when it ran or was up to date."""
    entry: dict[str, Any] = {
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
    own: dict[str, Any] = next((e for e in report.get("tabs", []) if e.get("tab") == tab), {})
    outcomes = [tab_outcome(e) for e in report.get("tabs", [])]
    if report.get("cancelled") or "cancelled" in outcomes:
        entry.update(
            status="cancelled",
            error=CANCELLED_CODE,
            message=f"cancelled by you; {chain_summary(report)}",
        )
    elif tab_outcome(own) in ("ran", "skipped"):
        entry.update(
            status="ok",
            row_count=own.get("row_count", row_count),
            cached_table_name=tab,
            step_id=(own.get("step") or {}).get("step_id"),
        )
        if entry["row_count"] is None:
            entry["row_count"] = row_count
    else:
        failed: dict[str, Any] = next(
            (e for e in report.get("tabs", []) if e.get("status") == "failed"), {}
        )
        error = failed.get("error") or {}
        entry.update(
            status="error",
            error=error.get("error", "SOURCE_RUN_FAILED"),
            message=(
                f"{failed.get('tab')}: {error.get('message', '')}"
                if failed
                else chain_summary(report)
            ),
        )
    return entry


def append_entry(workspace: Workspace, entry: dict[str, Any]) -> None:
    append_jsonl(history_path(workspace), entry)


def read_history(workspace: Workspace, limit: int = HISTORY_SHOWN) -> list[dict[str, Any]]:
    """The last ``limit`` entries, oldest first (a torn or foreign line is skipped)."""
    path = history_path(workspace)
    if not path.exists():
        return []
    return [e for e in read_jsonl_tail(path, limit) if isinstance(e, dict) and "sql" in e]
