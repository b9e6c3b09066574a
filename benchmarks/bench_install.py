"""Installed build benchmark: start-up of the installed app against the development
install, and the installed size by component.

- **start-up**: process start until the main window is shown and the event loop idle (the
  moments the app writes to ``LANTIDE_READY_FILE``, as in the ``ui`` suite), for the
  installed build (the ``.deb`` unpacked with ``dpkg -x``; ``/opt/lantide/lantide gui``)
  against ``python -m lantide gui`` from this checkout with its bytecode cached, started
  alternately in the same run on fresh copies of the sample workspace (first open) and
  again (reopen). Target: the installed build at most 1.2x the development install.
- **size**: the installed bundle by component (``packaging/build.py``'s breakdown), against
  the 250 MB budget.

``python -m benchmarks install [--quick] [--runs=N] [--bundle=DIR]``: without ``--bundle`` it builds
the ``.deb`` with packaging/build.py into benchmarks/.work/install/ (a few CPU-minutes;
reused by the next run of the same checkout state) and unpacks it there. Quick: 3 start-ups
per case instead of 7. Runs offscreen unless ``--xcb`` and a ``DISPLAY`` are given.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_ui import _env, _machine, _start_once

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / ".work" / "install"
BUDGET_MB = 250


def _build_module():
    spec = importlib.util.spec_from_file_location("_lantide_build", REPO / "packaging" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _checkout_state() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=str(REPO)
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "lantide", "packaging", "prompts", "resources"],
        capture_output=True,
        text=True,
        cwd=str(REPO),
    ).stdout
    return head + ("-dirty" if dirty.strip() else "")


def installed_bundle() -> Path:
    """The bundle of the .deb built from this checkout, unpacked (built when missing)."""
    state = _checkout_state()
    stamp = WORK / "state.txt"
    bundle = WORK / "root" / "opt" / "lantide"
    if (
        (bundle / "lantide").is_file()
        and stamp.is_file()
        and stamp.read_text() == state
        and not state.endswith("-dirty")
    ):
        return bundle
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    subprocess.run(
        _build_module().quick_deb_command(WORK / "dist", WORK / "build"),
        check=True,
        cwd=str(REPO),
        stdout=subprocess.DEVNULL,
    )
    (deb,) = (WORK / "dist").glob("lantide_*.deb")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(WORK / "root")], check=True)
    stamp.write_text(state)
    return bundle


def bench_start(bundle: Path, base: Path, runs: int, platform_name: str) -> list[tuple]:
    from lantide.workspace.sample import create_sample

    template = base / "sample-template"
    create_sample(template)
    dev_env = _env(base, platform_name)
    installed_env = {
        k: v for k, v in dev_env.items() if k not in ("PYTHONPATH", "PYTHONPYCACHEPREFIX")
    }
    ready = base / "ready.json"
    dev = [sys.executable, "-m", "lantide", "gui"]
    installed = [str(bundle / "lantide"), "gui"]
    warm = base / "warm-ws"
    shutil.copytree(template, warm)
    _start_once(dev + [str(warm)], dev_env, ready)  # page cache, and the bytecode written
    _start_once(installed + [str(warm)], installed_env, ready)
    first = {"dev": [], "installed": []}
    reopen = {"dev": [], "installed": []}
    for i in range(runs):
        for name, argv, env in (("dev", dev, dev_env), ("installed", installed, installed_env)):
            ws = base / f"{name}-ws{i}"
            shutil.copytree(template, ws)
            (ws / ".lantide" / "cache.duckdb").unlink(missing_ok=True)
            first[name].append(_start_once(argv + [str(ws)], env, ready)[0])
            reopen[name].append(_start_once(argv + [str(ws)], env, ready)[0])
    med = statistics.median
    return [
        ("main window shown and idle, first open", med(first["installed"]), med(first["dev"])),
        ("main window shown and idle, reopen", med(reopen["installed"]), med(reopen["dev"])),
    ]


def size_rows(bundle: Path) -> list[tuple[str, float]]:
    """MB per component: the bundle's top-level entries, largest first."""
    build = _build_module()
    parts = dict(build.sizes_by_component(bundle))
    rows = sorted(((name, size / 1e6) for name, size in parts.items()), key=lambda r: -r[1])
    return rows


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    platform_name = "xcb" if "--xcb" in argv and os.environ.get("DISPLAY") else "offscreen"
    bundle = next(
        (Path(a.split("=", 1)[1]).resolve() for a in argv if a.startswith("--bundle=")), None
    )
    if not sys.platform.startswith("linux"):
        print("install: the installed-build benchmark runs on Linux (the .deb)")
        return 2
    bundle = bundle or installed_bundle()
    runs = next(
        (int(a.split("=", 1)[1]) for a in argv if a.startswith("--runs=")), 3 if quick else 7
    )
    with tempfile.TemporaryDirectory(prefix="lantide-bench-install-") as tmp:
        rows = bench_start(bundle, Path(tmp), runs, platform_name)
    print(
        f"{_machine()}; Qt platform {platform_name}; median of {runs} start-ups per case, "
        "installed and development alternating.\n"
    )
    print(
        "| start-up (process start to main window shown and idle) | installed s | "
        "development s | ratio (target <= 1.2) |"
    )
    print("|---|---:|---:|---:|")
    for label, installed, dev in rows:
        print(f"| {label} | {installed:.2f} | {dev:.2f} | {installed / dev:.2f}x |")
    sizes = size_rows(bundle)
    total = sum(mb for _, mb in sizes)
    print(f"\nInstalled size: {total:.1f} MB (budget {BUDGET_MB} MB)\n")
    print("| component | MB |\n|---|---:|")
    for name, mb in sizes[:12]:
        print(f"| {name} | {mb:.1f} |")
    print(f"| the rest ({len(sizes) - 12} entries) | {sum(mb for _, mb in sizes[12:]):.1f} |")
    return 0
