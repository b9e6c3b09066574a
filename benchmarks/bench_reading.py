"""Reading data files as written (issue 27): ``lantide tables`` on the sample workspace,
this checkout against the code before the change, side by side.

The checks that make a read say what it changed (the encoding decided on the whole file
when it is not UTF-8, decimal commas per column, the lost-records check after a text
file's registration, error cells and the range in use of workbooks) must not slow the
listing: target, at most 1.1x the baseline.

- **first open**: ``python -m lantide tables WS`` on a fresh copy of the sample workspace
  (every file registered, sniffed, counted, the workbook read);
- **reopen**: the same command again on that copy (registrations from the cache).

Each case runs alternately for this checkout and the baseline (A B A B ...), as whole
processes with bytecode cached, user directories in a temporary folder; the medians and
the median of the pairwise ratios are printed, of wall time and of the processes' CPU
time (user + system), which a machine shared with other work disturbs less.

``python -m benchmarks reading [--quick] [--runs=N] [--baseline=DIR|--ref=COMMIT]``: the
baseline is a checkout of ``--ref`` (default ``5937ad3``, the commit before the change),
added with ``git worktree add --detach`` under benchmarks/.work/ and reused; or any
checkout given with ``--baseline``.
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / ".work"
DEFAULT_REF = "5937ad3"
TARGET = 1.1


def _machine() -> str:
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()} {platform.system()}, "
        f"{os.cpu_count()} cores{load}, Python {platform.python_version()}"
    )


def baseline_checkout(ref: str) -> Path:
    """A checkout of ``ref`` (a detached worktree of this repository), made once."""
    target = WORK / f"reading-baseline-{ref}"
    if (target / "lantide" / "__init__.py").is_file():
        return target
    WORK.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "worktree", "prune"], cwd=str(REPO), check=False)
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(target), ref],
        cwd=str(REPO),
        check=True,
        capture_output=True,
    )
    return target


def _env(checkout: Path, base: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "LANTIDE_CONFIG_DIR": str(base / "config"),
            "LANTIDE_DATA_DIR": str(base / "data"),
            "LANTIDE_CACHE_DIR": str(base / "cache"),
            "PYTHONPATH": str(checkout),
            "PYTHONPYCACHEPREFIX": str(base / "pycache"),  # bytecode cached, out of the repo
        }
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _tables(checkout: Path, workspace: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``lantide tables WORKSPACE`` process. CPU (user + system
    of the process) is less disturbed than wall time on a machine shared with other work."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lantide", "tables", str(workspace)],
        cwd=str(checkout),
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"lantide tables failed in {checkout}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu


Pair = tuple[tuple[float, float], tuple[float, float]]  # (current, baseline) (wall, CPU)


def bench(current: Path, baseline: Path, runs: int) -> dict[str, list[Pair]]:
    """``{case: [((wall, CPU) now, (wall, CPU) before), ...]}``, pairs run back to back."""
    with tempfile.TemporaryDirectory(prefix="lantide-bench-reading-") as tmp:
        base = Path(tmp)
        sample = base / "sample"
        subprocess.run(
            [sys.executable, "-m", "lantide", "init", str(sample), "--sample"],
            cwd=str(current),
            env=_env(current, base / "init"),
            check=True,
            capture_output=True,
        )
        envs = {c: _env(c, base / c.name) for c in (current, baseline)}
        for checkout in (current, baseline):  # warm-up: bytecode compiled, files cached
            copy = base / f"warm-{checkout.name}"
            shutil.copytree(sample, copy)
            _tables(checkout, copy, envs[checkout])
        out: dict[str, list[Pair]] = {"first open": [], "reopen": []}
        for i in range(runs):
            pair: dict[str, dict[Path, tuple[float, float]]] = {"first open": {}, "reopen": {}}
            order = (current, baseline) if i % 2 == 0 else (baseline, current)
            for checkout in order:
                copy = base / f"run{i}-{checkout.name}"
                shutil.copytree(sample, copy)
                pair["first open"][checkout] = _tables(checkout, copy, envs[checkout])
                pair["reopen"][checkout] = _tables(checkout, copy, envs[checkout])
            for case, times in pair.items():
                out[case].append((times[current], times[baseline]))
        return out


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    runs = next((int(a.split("=", 1)[1]) for a in argv if a.startswith("--runs=")), 0)
    runs = runs or (3 if quick else 9)
    given = next((a.split("=", 1)[1] for a in argv if a.startswith("--baseline=")), None)
    ref = next((a.split("=", 1)[1] for a in argv if a.startswith("--ref=")), DEFAULT_REF)
    baseline = Path(given).resolve() if given else baseline_checkout(ref)
    results = bench(REPO, baseline, runs)
    print(
        f"{_machine()}; `lantide tables` on the sample workspace, median of {runs} "
        f"processes per case, this checkout and {given or ref} alternating.\n"
    )
    print(
        f"| case | wall now s | wall before s | wall now / before | CPU now s | CPU before s "
        f"| CPU now / before (target <= {TARGET}) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    status = 0
    for case, pairs in results.items():
        cells = []
        for k in (0, 1):  # wall, CPU: medians, and the median of the pairs' ratios
            now = statistics.median(p[0][k] for p in pairs)
            before = statistics.median(p[1][k] for p in pairs)
            ratio = statistics.median(p[0][k] / p[1][k] for p in pairs)
            cells += [f"{now:.3f}", f"{before:.3f}", f"{ratio:.2f}x"]
        status |= int(ratio > TARGET)
        print(f"| {case} | {' | '.join(cells)} |")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
