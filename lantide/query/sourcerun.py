"""Source Run: recompute a tab and everything upstream of it, in dependency order.

For each tab of the chain (dependencies first, ties by name):

- **not_run** when a tab it reads failed or was not run (stops downstream of a failure);
- **skipped** (up to date) when its cached table exists and the fingerprint of its SQL
  and inputs equals the one stored at its last run (``_lantide.cached_tables``). Inputs
  are data files (path, size, mtime), upstream tabs (their own fingerprints) and other
  cached tables; a tab that reads an external connection is never assumed unchanged;
- **ran** otherwise, materializing its cached table;
- **failed** with the error, when it ran and failed (or was cancelled: then every later
  tab is not_run). A tab reading an external connection whose result is over
  ``query.large_remote_rows`` fails with ``LARGE_REMOTE_RESULT`` and its
  ``large_remote_warning_id`` before anything is copied; passed back (``confirmed``), it
  runs.

A tab that runs is re-read from disk first (the analyst may have edited it meanwhile; the
fingerprint recorded is always that of the SQL that ran). It costs its ``CREATE TABLE AS``
plus, in the same transaction, one bookkeeping row: a failure keeps the old table and row.
Its step carries the row count DuckDB reports and the columns, but no preview rows: nobody
sees them here, and the cached table is there to page through.

Tabs that do not depend on each other run side by side (``workers``, the setting
``query.source_run_workers``; 0 means :func:`default_workers`), each in one transaction on
its own DuckDB cursor: a wide chain of small tabs is not bound to one core, and each tab's
Python work (parsing, bookkeeping) overlaps another tab's DuckDB work. The report lists the
tabs in ``order`` whatever order they finished in; a cancel stops every tab running (each
is ``failed`` as cancelled) and the rest are ``not_run``.

``progress(event)`` gets ``{"event": "start", "order"}``, ``{"event": "tab", "tab",
"status": "running"}`` when a tab starts running, one ``{"event": "tab", "tab", "status",
...}`` per finished tab, and ``{"event": "done", ...}`` with the report; calls come one at
a time, from the Source Run's threads.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from lantide.errors import LantideError
from lantide.query import lineage as lin
from lantide.query import tabs as tab_files
from lantide.query.catalog import TAB, Catalog
from lantide.query.errors import QueryErrorDict, error_fields

if TYPE_CHECKING:
    from concurrent.futures import Future

    from lantide.query.checks.rules import Check
    from lantide.query.result_types import QueryStep
    from lantide.query.tab_service import SqlTabs
    from lantide.workspace.model import Project


class SourceRunTab(TypedDict):
    """One tab's entry of a Source Run report; which keys are set depends on ``status``."""

    tab: str
    status: str  # ran, skipped, failed, not_run ("running" in a progress event)
    reason: NotRequired[str]  # skipped, not_run
    row_count: NotRequired[int | None]  # ran; skipped (None when its table was never counted)
    duration_ms: NotRequired[int]  # ran, failed
    error: NotRequired[QueryErrorDict]  # failed
    reason_code: NotRequired[str]  # ran: why it was materialized
    warnings: NotRequired[list[str]]  # ran
    checks: NotRequired[list[Check]]  # ran
    step: NotRequired[QueryStep]  # ran: its ledger step


class SourceRunSummary(TypedDict):
    """What a Source Run came to, without its steps (the ``done`` event)."""

    project: str
    tab: str  # the target
    order: list[str]  # the chain, dependencies first
    tabs: list[SourceRunTab]  # in ``order``
    ran: int
    skipped: int
    failed: int
    not_run: int
    ok: bool  # nothing failed, nothing left not run
    cancelled: bool


class SourceRunReport(SourceRunSummary):
    """``source_run_sql_tab``'s answer."""

    steps: list[QueryStep]  # of the tabs that ran, in ``order``
    duration_ms: int


class StartEvent(TypedDict):
    event: Literal["start"]
    project: str
    tab: str
    order: list[str]


class TabEvent(SourceRunTab):
    """A tab started (status ``running``) or finished (its entry)."""

    event: Literal["tab"]


class DoneEvent(SourceRunSummary):
    event: Literal["done"]
    duration_ms: int


SourceRunEvent = StartEvent | TabEvent | DoneEvent
Progress = Callable[[SourceRunEvent], None]
# Called with a tab's name and the SQL about to run (read from its file just now); raises a
# LantideError to refuse it: the tab fails with that error and the tabs downstream do not
# run. The agent's consent to statistical analysis is such a gate (agent.consent).
StatementGate = Callable[[str, str], None]

RAN = "ran"
SKIPPED = "skipped"
FAILED = "failed"
NOT_RUN = "not_run"
# How a tab's entry reads to the analyst (tab_outcome): a tab stopped by a cancel is
# "failed" in the report (with QUERY_CANCELLED) for the agent and the CLI, but it did not
# fail: it is "cancelled", and the report says ``"cancelled": true``.
CANCELLED = "cancelled"
CANCELLED_CODE = "QUERY_CANCELLED"


def tab_outcome(entry: SourceRunTab) -> str:
    """ran, skipped, failed, cancelled or not_run: a tab's entry of a report."""
    status = str(entry.get("status", ""))
    error = entry.get("error")
    if status == FAILED and error is not None and error.get("error") == CANCELLED_CODE:
        return CANCELLED
    return status


def chain_summary(report: SourceRunSummary) -> str:
    """What the chain came to, in words: "clean_orders ran; customer_quarters was
    cancelled; 1 tab not run"."""
    ran = [e["tab"] for e in report.get("tabs", []) if tab_outcome(e) == RAN]
    skipped = [e["tab"] for e in report.get("tabs", []) if tab_outcome(e) == SKIPPED]
    stopped = [e["tab"] for e in report.get("tabs", []) if tab_outcome(e) == CANCELLED]
    failed = [e["tab"] for e in report.get("tabs", []) if tab_outcome(e) == FAILED]
    not_run = [e["tab"] for e in report.get("tabs", []) if tab_outcome(e) == NOT_RUN]
    parts = []
    if ran:
        parts.append(f"{', '.join(ran)} ran")
    if skipped:
        parts.append(f"{', '.join(skipped)} {'was' if len(skipped) == 1 else 'were'} up to date")
    if stopped:
        parts.append(f"{', '.join(stopped)} {'was' if len(stopped) == 1 else 'were'} stopped")
    if failed:
        parts.append(f"{', '.join(failed)} failed")
    if not_run:
        parts.append(f"{len(not_run)} tab{'s' if len(not_run) != 1 else ''} not run")
    if not ran and not skipped:
        parts.insert(0, "nothing had finished")
    return "; ".join(parts)


def default_workers() -> int:
    """Tabs run at once when the setting says automatic: one more than the cores (a tab's
    Python work overlaps another tab's DuckDB work), at most 4."""
    return max(2, min(4, (os.cpu_count() or 1) + 1))


def source_run(
    tabs: SqlTabs,
    catalog: Catalog,
    project: Project,
    target: str,
    purpose: str | None,
    progress: Progress | None = None,
    workers: int = 1,
    confirmed: Iterable[str] = (),
    statement_gate: StatementGate | None = None,
) -> SourceRunReport:
    """Run ``target`` of ``project`` and its upstream tabs (see the module docstring);
    ``catalog`` tells which cached tables are up to date."""
    started = time.perf_counter()
    graph, lineages = tabs.graph(project)
    order = lin.upstream_order(graph, target)
    chain = _Chain(
        tabs, catalog, project, lineages, list(graph), purpose, progress, list(confirmed)
    )
    chain.gate = statement_gate
    chain.emit({"event": "start", "project": project.dirname, "tab": target, "order": order})
    if workers <= 1:
        for name in order:
            entry = chain.decide(name)
            chain.finish(name, entry if entry is not None else chain.execute(name))
    else:
        _run_side_by_side(chain, order, workers)
    entries = [chain.results[name] for name in order]
    counts = {
        s: sum(1 for e in entries if e["status"] == s) for s in (RAN, SKIPPED, FAILED, NOT_RUN)
    }
    ok = counts[FAILED] == 0 and counts[NOT_RUN] == 0
    duration_ms = int((time.perf_counter() - started) * 1000)
    report: SourceRunReport = {
        "project": project.dirname,
        "tab": target,
        "order": order,
        "tabs": entries,
        "ran": counts[RAN],
        "skipped": counts[SKIPPED],
        "failed": counts[FAILED],
        "not_run": counts[NOT_RUN],
        "ok": ok,
        "cancelled": chain.cancelled,
        "steps": [e["step"] for e in entries if "step" in e],
        "duration_ms": duration_ms,
    }
    chain.emit(
        {  # the report without its steps
            "event": "done",
            "project": project.dirname,
            "tab": target,
            "order": order,
            "tabs": entries,
            "ran": counts[RAN],
            "skipped": counts[SKIPPED],
            "failed": counts[FAILED],
            "not_run": counts[NOT_RUN],
            "ok": ok,
            "cancelled": chain.cancelled,
            "duration_ms": duration_ms,
        }
    )
    return report


class _Chain:
    """The state of one Source Run: what each tab came to, and the decisions about it."""

    def __init__(
        self,
        tabs: SqlTabs,
        catalog: Catalog,
        project: Project,
        lineages: dict[str, lin.TabLineage],
        names: list[str],
        purpose: str | None,
        progress: Progress | None,
        confirmed: list[str],
    ):
        self.sql_tabs, self.catalog, self.project = tabs, catalog, project
        self.lineages, self.names = lineages, names
        self.purpose, self.confirmed = purpose, confirmed
        self._progress = progress or (lambda event: None)
        self._lock = threading.Lock()
        self.results: dict[str, SourceRunTab] = {}
        self.cancelled = False
        self._fingerprints: dict[str, str | None] = {}
        self.gate: StatementGate | None = None

    def emit(self, event: SourceRunEvent) -> None:
        with self._lock:  # one event at a time, whichever thread finished its tab
            self._progress(event)

    def ready(self, name: str) -> bool:
        return all(
            u in self.results for u in self.lineages[name].upstream_tabs if u in self.lineages
        )

    def decide(self, name: str) -> SourceRunTab | None:
        """The entry of a tab that does not run (blocked, cancelled, up to date), or None.
        Called once its upstream tabs are done, so their fingerprints are committed."""
        lineage = self.lineages[name]
        blocked = [
            u
            for u in lineage.upstream_tabs
            if u in self.results and self.results[u]["status"] in (FAILED, NOT_RUN)
        ]
        if self.cancelled or blocked:
            return {
                "tab": name,
                "status": NOT_RUN,
                "reason": "cancelled"
                if self.cancelled
                else f"upstream {'tab' if len(blocked) == 1 else 'tabs'} "
                f"{', '.join(blocked)} did not run",
            }
        fingerprint = None
        if lineage.error is None:
            try:  # a remote tab's digest is asked of its source, which may refuse or be gone
                fingerprint = self.sql_tabs.tab_fingerprint(lineage, ask_source=True)
            except LantideError as exc:  # that tab fails; the independent tabs still run
                error = error_fields(exc)
                if error.get("error") != CANCELLED_CODE:
                    error["message"] = f"SQL tab {name!r}: {error['message']}"
                return {"tab": name, "status": FAILED, "error": error}
            cached = self.catalog.cached(name)
            if (
                fingerprint is not None
                and cached is not None
                and cached.kind == TAB
                and cached.project == self.project.dirname
                and cached.fingerprint == fingerprint
            ):
                return {
                    "tab": name,
                    "status": SKIPPED,
                    "reason": "up to date",
                    "row_count": cached.row_count,
                }
        self._fingerprints[name] = fingerprint
        return None

    def execute(self, name: str) -> SourceRunTab:
        """Materialize the tab (on the calling thread and its DuckDB cursor)."""
        self.emit({"event": "tab", "tab": name, "status": "running"})
        t0 = time.perf_counter()
        try:
            # Re-read the file: an upstream run may not change it, but the analyst may have.
            # The same text has the lineage read at the start (the tab names and data files
            # it resolved against are those of this run): analysed once per tab, not twice.
            first = self.lineages[name]
            try:
                text: str | None = tab_files.read_tab(self.project, name, self.names)
            except LantideError:
                text = None  # the lineage read again says why, as before
            fresh = (
                first
                if text is not None and first.error is None and text == first.sql
                else self.sql_tabs.tab_lineage(self.project, name, self.names)
            )
            if self.gate is not None and fresh.error is None:
                self.gate(name, fresh.sql)  # the SQL that runs, not the one first read
            # The fingerprint was taken after the upstream tabs ran; same SQL, same inputs.
            known = (
                self._fingerprints.get(name)
                if fresh.error is None and fresh.sql == self.lineages[name].sql
                else None
            )
            # No preview rows: the report shows none, so none are read back.
            result = self.sql_tabs.run_tab(
                self.project,
                name,
                self.purpose,
                tool="source_run_sql_tab",
                lineage=fresh,
                fingerprint=known,
                preview_rows=0,
                large_remote_warning_id=self.confirmed,
            )
        except LantideError as exc:
            return {
                "tab": name,
                "status": FAILED,
                "error": error_fields(exc),
                "duration_ms": int((time.perf_counter() - t0) * 1000),
            }
        # a large remote result raised LargeRemoteResult above: a Source Run never asks
        assert result["status"] == "ok"
        return {
            "tab": name,
            "status": RAN,
            "row_count": result["row_count"],
            "duration_ms": result["duration_ms"],
            "reason_code": result["reason_code"],
            "warnings": result["warnings"],
            "checks": result["checks"],
            "step": result["step"],
        }

    def finish(self, name: str, entry: SourceRunTab) -> None:
        if "error" in entry and entry["error"].get("error") == CANCELLED_CODE:
            self.cancelled = True
        self.results[name] = entry
        self.emit({"event": "tab", **entry})


def _run_side_by_side(chain: _Chain, order: list[str], workers: int) -> None:
    """Up to ``workers`` tabs at once, each as soon as its upstream tabs are done (ready
    tabs start in ``order``). This thread decides and records; pool threads only execute,
    each on its own DuckDB cursor and under this thread's cancel scopes, so a cancel stops
    every tab running. No pool is started when nothing needs to run."""
    from lantide.query.cancel import active_scopes

    scopes = active_scopes()

    def execute(name: str) -> SourceRunTab:
        with contextlib.ExitStack() as stack:
            for scope in scopes:
                stack.enter_context(scope)
            return chain.execute(name)

    pool = None
    running: dict[Future[SourceRunTab], str] = {}  # future -> tab
    try:
        while len(chain.results) < len(order):
            for name in order:
                if name in chain.results or name in running.values() or not chain.ready(name):
                    continue
                if len(running) >= workers:
                    break
                entry = chain.decide(name)
                if entry is not None:
                    chain.finish(name, entry)
                    continue
                if pool is None:
                    from concurrent.futures import ThreadPoolExecutor

                    pool = ThreadPoolExecutor(workers, thread_name_prefix="lantide-source-run")
                running[pool.submit(execute, name)] = name
            if running:
                from concurrent.futures import FIRST_COMPLETED, wait

                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in done:
                    chain.finish(running.pop(future), future.result())
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
