"""find_similar_steps over 100,000 ledger steps (issue 18): the index build, keeping it
current, and the p50/p95 of a search, against reading the ledgers and a plain scan of
every step's words in Python (what a search without an index costs) in the same run.

Target: p95 of a search under 20 ms. ``python -m benchmarks steps [--quick]`` (quick:
20,000 steps).
"""

from __future__ import annotations

import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SUBJECTS = [
    "customers",
    "orders",
    "refunds",
    "churn",
    "revenue",
    "sessions",
    "tickets",
    "invoices",
    "products",
    "regions",
    "segments",
    "cohorts",
    "subscriptions",
]
MEASURES = [
    "count",
    "sum of amount",
    "average basket",
    "median delay",
    "share",
    "rate",
    "growth",
    "distinct buyers",
    "top ten",
    "retention",
]
GRAINS = [
    "per region",
    "per month",
    "per segment",
    "per product",
    "per channel",
    "per week",
    "per cohort",
    "per country",
    "in Q3",
    "year over year",
]


def _steps(n: int, per_conversation: int, rng: random.Random):
    for c in range(n // per_conversation):
        conv = f"c{c:05d}"
        lines = []
        for s in range(per_conversation):
            subject, measure, grain = (
                rng.choice(SUBJECTS),
                rng.choice(MEASURES),
                rng.choice(GRAINS),
            )
            lines.append(
                {
                    "step_id": f"s{s + 1}",
                    "conversation_id": conv,
                    "at": "2026-11-30T10:00:00Z",
                    "tool": "run_query",
                    "purpose": f"{measure} of {subject} {grain}",
                    "summary": f"{subject} {measure} {grain}: {rng.randint(1, 99999):,}",
                    "summary_status": "parsed",
                    "evidence": "formal",
                    "row_count": 12,
                    "sql": f"SELECT {grain.split()[-1]}, count(*) FROM {subject} "
                    f"WHERE amount > {rng.randint(1, 500)} GROUP BY 1",
                    "warnings": [],
                    "checks": [],
                }
            )
        yield conv, lines


def _naive_search(docs: list[tuple[str, set[str]]], query: str, limit: int) -> list[str]:
    words = set(re.findall(r"\w+", query.lower()))
    scored = [(len(words & bag), key) for key, bag in docs]
    scored = [s for s in scored if s[0]]
    scored.sort(reverse=True)
    return [key for _, key in scored[:limit]]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    from lantide.agent.ledger import Ledger
    from lantide.agent.step_index import StepIndex, step_documents

    total = 20_000 if "--quick" in argv else 100_000
    rng = random.Random(20261201)
    queries = [
        f"{rng.choice(MEASURES)} {rng.choice(SUBJECTS)} {rng.choice(GRAINS)}" for _ in range(200)
    ]
    with tempfile.TemporaryDirectory(prefix="lantide-bench-steps-") as tmp:
        lantide_dir = Path(tmp) / ".lantide"
        ledger_dir = lantide_dir / "ledger"
        ledger_dir.mkdir(parents=True)
        for conv, lines in _steps(total, 100, rng):
            (ledger_dir / f"{conv}.jsonl").write_text(
                "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
            )

        started = time.perf_counter()
        docs = []
        for path in sorted(ledger_dir.glob("*.jsonl")):
            for d in step_documents(Ledger(ledger_dir, path.stem).steps()):
                bag = set(re.findall(r"\w+", " ".join(d.values()).lower()))
                docs.append((f"{path.stem}/{d['step_id']}", bag))
        read_s = time.perf_counter() - started

        index = StepIndex(lantide_dir, ledger_dir)
        started = time.perf_counter()
        index.catch_up()
        build_s = time.perf_counter() - started
        started = time.perf_counter()
        index.catch_up()
        unchanged_ms = (time.perf_counter() - started) * 1000
        Ledger(ledger_dir, "c00007").append(
            {"tool": "run_query", "purpose": "late step", "sql": "SELECT 1", "summary": "one more"}
        )
        started = time.perf_counter()
        index.catch_up()
        one_more_ms = (time.perf_counter() - started) * 1000

        def timed(fn) -> list[float]:
            out = []
            for q in queries:
                t = time.perf_counter()
                fn(q)
                out.append((time.perf_counter() - t) * 1000)
            return sorted(out)

        ours = timed(lambda q: index.search(q, 5))
        naive = timed(lambda q: _naive_search(docs, q, 5))
        size_mb = (
            sum(p.stat().st_size for p in (lantide_dir / "index").rglob("*") if p.is_file()) / 1e6
        )

    def p(xs, q):
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    print(
        f"{total:,} steps in {total // 100:,} conversations; 200 searches of 3-6 words; "
        f"index {size_mb:.1f} MB on disk.\n"
    )
    print("| | find_similar_steps (tantivy BM25) | baseline: plain word scan in Python | ratio |")
    print("|---|---:|---:|---:|")
    print(
        f"| search p50 ms | {statistics.median(ours):.2f} | {statistics.median(naive):.1f} | "
        f"{statistics.median(ours) / statistics.median(naive):.3f}x |"
    )
    print(
        f"| search p95 ms (target < 20) | {p(ours, 0.95):.2f} | {p(naive, 0.95):.1f} | "
        f"{p(ours, 0.95) / p(naive, 0.95):.3f}x |"
    )
    print(
        f"| build from the ledgers s | {build_s:.2f} | {read_s:.2f} (reading them once) | "
        f"{build_s / read_s:.2f}x |"
    )
    print(f"| catch-up, nothing changed ms | {unchanged_ms:.1f} | | |")
    print(f"| catch-up, one conversation changed ms | {one_more_ms:.1f} | | |")
    print(f"\ntarget: p95 under 20 ms: {'met' if p(ours, 0.95) < 20 else 'NOT met'}")
    _append_to_a_long_ledger(Ledger)
    return 0


def _append_to_a_long_ledger(ledger_cls) -> None:
    """Appending a step to one conversation of 5,000 steps (an outside agent's ledger
    grows so): the new step id (12 hex digits, checked against the file's bytes; since
    2026-12-04) against a full read of the file for an ``sN`` id (the rule before
    2026-12-02), alternating, 50 appends each."""
    step = {"tool": "run_query", "purpose": "p", "sql": "SELECT 1", "row_count": 1}
    with tempfile.TemporaryDirectory(prefix="lantide-bench-ledger-") as tmp:
        ledger = ledger_cls(Path(tmp), "long")
        ledger.path.write_text(
            "".join(json.dumps({**step, "step_id": f"s{i}"}) + "\n" for i in range(1, 5001)),
            encoding="utf-8",
        )
        full, now = [], []
        for _ in range(50):
            t = time.perf_counter()
            steps = ledger.steps()
            ledger.append({**step, "step_id": f"s{len(steps) + 1}"})
            full.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            ledger.append(step)
            now.append((time.perf_counter() - t) * 1000)
    full_ms, now_ms = statistics.median(full), statistics.median(now)
    print("\n| append a step, ledger of 5,000 steps | hex id | full read (before) | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| median ms (incl. fsync) | {now_ms:.2f} | {full_ms:.1f} | {now_ms / full_ms:.3f}x |")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
