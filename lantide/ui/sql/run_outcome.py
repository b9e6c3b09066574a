"""How a SQL tab shows a run's outcome that needs more than a grid: a Source Run's report
(the chain's rows, a cancel, a failed tab), and the large remote results a run or a Source
Run stopped before copying (with the actions that stage them anyway)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from lantide.query.history import source_run_entry
from lantide.ui.notice_banner import INFO, WARNING
from lantide.ui.sql.query_jobs import record_history
from lantide.ui.sql.result_panel import describe_result

if TYPE_CHECKING:
    from lantide.query.sourcerun import SourceRunReport
    from lantide.ui.sql.sql_tab import SqlTabWidget


def show_source_run_outcome(
    tab: SqlTabWidget, report: SourceRunReport, result: dict | None, rows, *, duration: int
) -> None:
    from lantide.query.sourcerun import CANCELLED, chain_summary, tab_outcome

    tab.source_run_view.finish(report)
    if result is not None:
        tab.result.show_rows(
            result["columns"],
            result["row_count"],
            rows,
            relation=tab.tab_name,
            summary=describe_result(
                result["row_count"], len(rows), duration_ms=duration, cached_table=tab.tab_name
            ),
        )
    cancelled = report.get("cancelled") or any(
        tab_outcome(e) == CANCELLED for e in report.get("tabs", [])
    )
    if cancelled:
        # not a failure: the analyst stopped it; say what had finished before
        tab.banner.show_notice(
            "Source Run cancelled by you.",
            f"Before the cancel: {chain_summary(report)}. Cached tables "
            "that did not run are as they were.",
            INFO,
        )
    elif not report.get("ok"):
        failed = [e for e in report["tabs"] if e["status"] == "failed"]
        large = [
            e["error"] for e in failed if e.get("error", {}).get("error") == "LARGE_REMOTE_RESULT"
        ]
        if large and len(large) == len(failed):
            show_large_remote_in_chain(tab, report, large)
        elif failed:
            err = failed[0].get("error", {})
            tab.banner.show_notice(
                f"Source Run: {failed[0]['tab']} failed: {err.get('message', '')}",
                err.get("hint"),
                code=err.get("error"),
            )
    else:
        tab.bottom.setCurrentWidget(tab.result)
    tab.status_label.setText(
        "Source Run cancelled"
        if cancelled
        else f"Source Run: {report.get('ran', 0)} ran, {report.get('skipped', 0)} up to date"
    )
    record_history(
        tab.services,
        source_run_entry(
            report,
            sql=tab._run_sql,
            project=tab.project,
            tab=tab.tab_name,
            row_count=result["row_count"] if result else None,
        ),
    )
    tab.last_result = report


def show_large_remote_in_chain(
    tab: SqlTabWidget, report: SourceRunReport, errors: Sequence[Mapping]
) -> None:
    """Tabs of the chain would copy large remote results: say how large, offer to stage."""
    tabs = [
        e["tab"] for e in report["tabs"] if e.get("error", {}).get("error") == "LARGE_REMOTE_RESULT"
    ]
    sizes = "; ".join(
        f"{t}: {err['estimated_rows']:,} rows from {err['connection']}"
        for t, err in zip(tabs, errors, strict=True)  # the same failed entries, in order
    )
    ids = [err["large_remote_warning_id"] for err in errors]
    tab.banner.show_notice(
        f"Source Run stopped before copying large remote results ({sizes}).",
        "Filter or aggregate on the remote side first, or stage them anyway.",
        WARNING,
        code="LARGE_REMOTE_RESULT",
        actions=[("Stage anyway and Source Run", lambda: tab.source_run(ids))],
    )


def show_large_remote(tab: SqlTabWidget, result: dict) -> None:
    warning_id = result.get("large_remote_warning_id")
    tab.banner.show_notice(
        result.get("message") or "The remote result is large.",
        result.get("hint"),
        WARNING,
        code=result.get("warning"),
        actions=[("Run anyway", lambda: tab.run_anyway(warning_id))] if warning_id else [],
    )
