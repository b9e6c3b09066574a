"""Whole processes timed side by side: the harness of the ``cli`` and ``big_files`` suites.

One run is one process started by a small launcher process and reaped there with
:func:`os.wait4`, which gives that child's own resource use: wall time (measured around
the start and the reaping), CPU time (user + system) and peak resident memory (``maxrss``;
why a launcher: :data:`_LAUNCHER`).
A pair runs Lantide's command and its baseline back to back, in alternating order (A B,
then B A), so a machine whose speed drifts (2 cores shared with other work) moves both
sides of a pair alike; the figure is the median of the pairs' ratios.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Run:
    """What one finished process cost."""

    wall: float  # seconds
    cpu: float  # user + system seconds, all threads
    maxrss_mb: float  # peak resident memory, MiB
    stdout: str


@dataclass
class Pairs:
    """Runs of a command and of its baseline, pair by pair."""

    ours: list[Run] = field(default_factory=list)
    base: list[Run] = field(default_factory=list)

    def ratio(self, what: str = "wall") -> float:
        """The median of the pairs' ratios (ours / baseline) of ``what``."""
        return float(
            statistics.median(
                getattr(a, what) / getattr(b, what)
                for a, b in zip(self.ours, self.base, strict=True)
            )
        )

    def median(self, side: str, what: str = "wall") -> float:
        runs = self.ours if side == "ours" else self.base
        return float(statistics.median(getattr(r, what) for r in runs))

    def spread(self, what: str = "wall") -> tuple[float, float]:
        ratios = [
            getattr(a, what) / getattr(b, what) for a, b in zip(self.ours, self.base, strict=True)
        ]
        return min(ratios), max(ratios)


# The process that starts and reaps each timed command. On Linux a child's ``maxrss``
# starts from its parent's resident size at the fork (the high-water mark survives the
# exec), so a benchmark process that imported Lantide (160 MB) would put its own size under
# every figure; this small launcher (about 10 MB) forks the command instead, times it and
# reaps it with ``os.wait4``, which reports that one child's resource use.
_LAUNCHER = """
import json, os, subprocess, sys, time
report, argv = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
child = subprocess.Popen(argv)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - started
with open(report, "w") as out:
    json.dump({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
               "maxrss": usage.ru_maxrss, "code": os.waitstatus_to_exitcode(status)}, out)
"""


def run(argv: Sequence[str], *, env: dict[str, str], cwd: Path | None = None) -> Run:
    """One process, started, timed and reaped by the launcher; its output is kept, an
    exit status other than 0 raises."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory(prefix="lantide-bench-run-") as tmp:
        report = Path(tmp) / "run.json"
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report), *argv],
            cwd=str(cwd or REPO),
            env=env,
            capture_output=True,
            text=True,
        )
        figures = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    if done.returncode != 0 or figures.get("code") != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {done.returncode}: {done.stderr[-2000:]}")
    scale = 1024 if sys.platform != "darwin" else 1024 * 1024  # Linux: KiB, macOS: bytes
    return Run(figures["wall"], figures["cpu"], figures["maxrss"] / scale, done.stdout)


def paired(
    ours: Callable[[int], Run],
    base: Callable[[int], Run],
    pairs: int,
    *,
    before_ours: Callable[[int], None] | None = None,
) -> Pairs:
    """``pairs`` pairs, back to back, alternating which side goes first; ``before_ours(i)``
    prepares Lantide's run ``i`` outside the timing (e.g. a changed tab)."""
    out = Pairs()
    for i in range(pairs):
        if before_ours is not None:
            before_ours(i)
        if i % 2 == 0:
            a = ours(i)
            b = base(i)
        else:
            b = base(i)
            a = ours(i)
        out.ours.append(a)
        out.base.append(b)
    return out


def environment(base: Path) -> dict[str, str]:
    """The environment of every timed process: this checkout first on the path, user
    directories in ``base``, bytecode cached (as an installed Lantide has it)."""
    env = dict(os.environ)
    env.update(
        {
            "LANTIDE_CONFIG_DIR": str(base / "config"),
            "LANTIDE_DATA_DIR": str(base / "data"),
            "LANTIDE_CACHE_DIR": str(base / "cache"),
            "PYTHONPATH": str(REPO),
            "PYTHONPYCACHEPREFIX": str(base / "pycache"),
        }
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def machine() -> str:
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()} "
        f"{platform.system()}, {os.cpu_count()} cores{load}, Python {platform.python_version()}"
    )


def verdict(ratio: float, target: float) -> str:
    return "met" if ratio <= target else "NOT met"
