"""The result checks' cost ratio: ``python -m benchmarks checks [--quick] [--sf=N] [--reps=N]``.

The 22 TPC-H queries through ``QueryService.run_query`` on a fresh workspace whose data/
holds the TPC-H Parquet files (``tpchgen-cli``, offline). The time inside
:func:`lantide.query.checks.compute` is measured on every run and set against the rest of
``run_query`` (the query's own time: guard, execution, materialization, preview).

- **cold**: the first run of each query on a fresh workspace, so the checks also measure
  the inputs' key uniqueness (kept per table version afterwards); queries share tables,
  so only the first query to join a table pays for it;
- **warm**: the best of ``reps`` later runs (the facts are known; what is left is the
  statement analysis and one aggregate over the result).

Target (issue 12): checks under 10% of the query's own time at SF 1. Also printed: which
queries fire which checks (the fan-out check must stay quiet on TPC-H). ``--source-run``
adds the 20-tab Source Run of the ``query`` suite: the checks' CPU time (on the threads
that ran them) against the whole process's CPU time, which the machine's load disturbs
less than wall time.
"""

from __future__ import annotations

import time

from benchmarks.bench_query import QUERIES, open_service, tpch_data, workspace_for


def _timed_checks(times: list, cpu: list | None = None):
    from lantide.query import checks

    original = checks.compute

    def timed(*args, **kwargs):
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            times.append(time.perf_counter() - t0)
            if cpu is not None:
                cpu.append(time.thread_time() - c0)

    checks.compute = timed
    return lambda: setattr(checks, "compute", original)


def bench(sf: float, reps: int) -> list[dict]:
    root = workspace_for(sf, tpch_data(sf), "checks")
    ws, svc = open_service(root)
    times: list[float] = []
    restore = _timed_checks(times)
    rows = []
    try:
        for path in sorted(QUERIES.glob("q*.sql")):
            sql = path.read_text()
            runs = []
            for _ in range(1 + reps):
                times.clear()
                t0 = time.perf_counter()
                result = svc.run_query(sql, allow_complex=True)
                total = time.perf_counter() - t0
                runs.append((total - sum(times), sum(times), result))
            cold_query, cold_checks, result = runs[0]
            warm = min(runs[1:], key=lambda r: r[0] + r[1])
            rows.append(
                {
                    "query": path.stem,
                    "cold_query": cold_query,
                    "cold_checks": cold_checks,
                    "warm_query": warm[0],
                    "warm_checks": warm[1],
                    "codes": sorted({c["code"] for c in result["checks"]}),
                    "checks": result["checks"],
                }
            )
    finally:
        restore()
        svc.close()
        ws.close()
    return rows


def bench_source_run(sf: float) -> dict:
    """The 20-tab Source Run of ``python -m benchmarks query`` (cold, warm, a leaf change):
    CPU time of the checks (on the threads that ran them) against the process's."""
    from benchmarks.query_dag import lantide_sequence

    times: list[float] = []
    cpu: list[float] = []
    restore = _timed_checks(times, cpu)
    try:
        out = lantide_sequence(sf, tpch_data(sf))
    finally:
        restore()
    out["checks_cpu"], out["checks_wall"], out["check_runs"] = sum(cpu), sum(times), len(times)
    return out


def _flag(argv: list[str], name: str, default):
    for arg in argv:
        if arg.startswith(name + "="):
            return type(default)(arg.split("=", 1)[1])
    return default


def main(argv: list[str]) -> int:
    sf = _flag(argv, "--sf", 0.01 if "--quick" in argv else 1.0)
    reps = _flag(argv, "--reps", 3)
    rows = bench(sf, reps)
    print(f"### Result checks on the 22 TPC-H queries, SF {sf:g} (warm: best of {reps})\n")
    print(
        "| query | query ms (warm) | checks ms (warm) | ratio | query ms (cold) | "
        "checks ms (cold) | checks fired |\n|---|---:|---:|---:|---:|---:|---|"
    )
    for r in rows:
        print(
            f"| {r['query']} | {r['warm_query'] * 1000:.1f} | {r['warm_checks'] * 1000:.1f} | "
            f"{r['warm_checks'] / r['warm_query']:.3f} | {r['cold_query'] * 1000:.1f} | "
            f"{r['cold_checks'] * 1000:.1f} | {', '.join(r['codes']) or '-'} |"
        )
    wq, wc = sum(r["warm_query"] for r in rows), sum(r["warm_checks"] for r in rows)
    cq, cc = sum(r["cold_query"] for r in rows), sum(r["cold_checks"] for r in rows)
    print(
        f"| total | {wq * 1000:.0f} | {wc * 1000:.0f} | **{wc / wq:.3f}** | {cq * 1000:.0f} | "
        f"{cc * 1000:.0f} | |"
    )
    print(
        f"\nwarm ratio {wc / wq:.3f} (target < 0.10); cold ratio {cc / cq:.3f} "
        f"(the first run per table version also measures the inputs' keys)\n"
    )
    for r in rows:
        for c in r["checks"]:
            print(f"- {r['query']}: {c['code']} ({c['severity']}): {c['message']}")
    if "--source-run" in argv:
        sr = bench_source_run(sf)
        spent = sr["cold_cpu"] + sr["warm_cpu"] + sr["leaf_cpu"]
        print(f"\n### Source Run of the 20-tab DAG, SF {sf:g} (cold, warm, leaf change)\n")
        print(
            f"checks ran {sr['check_runs']} times: {sr['checks_cpu'] * 1000:.0f} ms CPU of "
            f"{spent * 1000:.0f} ms process CPU (**{sr['checks_cpu'] / spent:.3f}**); "
            f"wall: cold {sr['cold']:.3f} s, warm {sr['warm'] * 1000:.1f} ms, "
            f"leaf {sr['leaf']:.3f} s"
        )
    return 0
