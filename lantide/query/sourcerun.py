"""Source Run: recompute a tab and everything upstream of it, in dependency order.

For each tab of the chain (dependencies first, ties by name):

- **not_run** when a tab it reads failed or was not run (stops downstream of a failure);
- **skipped** (up to date) when its cached table exists and the fingerprint of its SQL
  and inputs equals the one stored at its last run (``_lantide.cached_tables``). Inputs
  are data files (path, size, mtime), upstream tabs (their own fingerprints) and other
  cached tables; a tab that reads an external connection is never assumed unchanged;
- **ran** otherwise, materializing its cached table;
- **failed** with the error, when it ran and failed (or was cancelled: then every later
  tab is not_run).

A tab that runs is re-read from disk first (the analyst may have edited it meanwhile; the
fingerprint recorded is always that of the SQL that ran). It costs its ``CREATE TABLE AS``
plus, in the same transaction, one bookkeeping row: a failure keeps the old table and row.
Its step carries the row count DuckDB reports and the columns, but no preview rows: nobody
sees them here, and the cached table is there to page through.

``progress(event)`` gets ``{"event": "start", "order"}``, ``{"event": "tab", "tab",
"status": "running"}``, one ``{"event": "tab", "tab", "status", ...}`` per finished tab,
and ``{"event": "done", ...}`` with the report; it runs on the Source Run's thread.
"""

from __future__ import annotations

import time

from lantide.errors import LantideError
from lantide.query import lineage as lin
from lantide.query.catalog import TAB

RAN = "ran"
SKIPPED = "skipped"
FAILED = "failed"
NOT_RUN = "not_run"


def source_run(service, project, target: str, purpose: str | None, progress=None) -> dict:
    started = time.perf_counter()
    emit = progress or (lambda event: None)
    graph, lineages = service._graph(project)
    tabs = list(graph)
    order = lin.upstream_order(graph, target)
    emit({"event": "start", "project": project.dirname, "tab": target, "order": order})
    entries: list[dict] = []
    status: dict[str, str] = {}
    cancelled = False
    for name in order:
        lineage = lineages[name]
        blocked = [u for u in lineage.upstream_tabs if status.get(u) in (FAILED, NOT_RUN)]
        if cancelled or blocked:
            entry = {"tab": name, "status": NOT_RUN,
                     "reason": "cancelled" if cancelled else
                     f"upstream {'tab' if len(blocked) == 1 else 'tabs'} "
                     f"{', '.join(blocked)} did not run"}
        else:
            emit({"event": "tab", "tab": name, "status": "running"})
            entry = _run_one(service, project, name, lineage, purpose, tabs)
            cancelled = entry.get("error", {}).get("error") == "QUERY_CANCELLED"
        status[name] = entry["status"]
        entries.append(entry)
        emit({"event": "tab", **entry})
    counts = {s: sum(1 for e in entries if e["status"] == s) for s in (RAN, SKIPPED, FAILED, NOT_RUN)}
    report = {"project": project.dirname, "tab": target, "order": order, "tabs": entries,
              **counts, "ok": counts[FAILED] == 0 and counts[NOT_RUN] == 0,
              "steps": [e["step"] for e in entries if "step" in e],
              "duration_ms": int((time.perf_counter() - started) * 1000)}
    emit({"event": "done", **{k: v for k, v in report.items() if k != "steps"}})
    return report


def _run_one(service, project, name: str, lineage: lin.TabLineage, purpose,
             tabs: list[str]) -> dict:
    fingerprint = None
    if lineage.error is None:
        fingerprint = service.tab_fingerprint(lineage)
        cached = service.catalog.cached(name)
        if (fingerprint is not None and cached is not None and cached.kind == TAB
                and cached.project == project.dirname and cached.fingerprint == fingerprint):
            return {"tab": name, "status": SKIPPED, "reason": "up to date",
                    "row_count": cached.row_count}
    t0 = time.perf_counter()
    try:
        # Re-read the file: an upstream run may not change it, but the analyst may have.
        fresh = service._tab_lineage(project, name, tabs)
        # The fingerprint above was taken after the upstream tabs ran; same SQL, same inputs.
        known = fingerprint if fresh.error is None and fresh.sql == lineage.sql else None
        # No preview rows: the report shows none, so none are read back.
        result = service._run_tab(project, name, purpose, tool="source_run_sql_tab",
                                  lineage=fresh, fingerprint=known, preview_rows=0)
    except LantideError as exc:
        return {"tab": name, "status": FAILED, "error": exc.to_dict(),
                "duration_ms": int((time.perf_counter() - t0) * 1000)}
    return {"tab": name, "status": RAN, "row_count": result["row_count"],
            "duration_ms": result["duration_ms"], "reason_code": result["reason_code"],
            "warnings": result["warnings"], "step": result["step"]}
