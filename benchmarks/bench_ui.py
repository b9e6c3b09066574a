"""Desktop app benchmark: cold start, and the UI thread under load.

- **cold start**: ``python -m lantide gui SAMPLE`` from process start until the main window
  is shown and the event loop idle (the first turn of the loop after ``show()``), against a
  bare PySide6 window started the same way in the same run (``QMainWindow().show()``, ready
  at the first turn of its loop). Target: at most 3x the bare window. Also reported: until
  the work started after the window shows is done too (DuckDB open, data files
  registered, explorer filled with the cached tables); the app writes both moments to
  ``LANTIDE_READY_FILE``.
  Two cases: the first open of a fresh sample workspace (DuckDB file created, every data
  file registered) and a reopen.
- **event-loop stall**: the longest gap between 5 ms heartbeat ticks while a multi-second
  DuckDB query and a streamed chat answer (loopback OpenAI-compatible server, real client,
  real chat panel) run at once in the main window, against the same heartbeat with the
  window idle. Target: under 50 ms.
- **streamed answer rendering**: UI-thread time per re-render while a 24,000-character
  answer (tables, prose, SQL fences) streams in 40-character deltas into the chat's
  answer widget (segmented: finished blocks stay rendered), against re-rendering the whole
  answer each time as the chat did before, in the same run.

``python -m benchmarks ui [--quick] [--startup] [--runs=N]`` (quick: 3 start-ups per case
instead of 7, 2 s load; startup: the start-up table alone; runs: N start-ups per case).
Besides the ratio of the medians, each start-up's ratio to the bare window started just
before it (paired), whose median moves less when the machine's speed drifts during a run.
Runs offscreen (``QT_QPA_PLATFORM=offscreen``) unless ``--xcb`` and a ``DISPLAY`` are given.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BARE_WINDOW = r"""
import json, os, sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv[:1])
window = QMainWindow()
window.setWindowTitle("bare")
window.resize(1280, 800)
window.show()
def ready():
    tmp = os.environ["LANTIDE_READY_FILE"] + ".tmp"
    with open(tmp, "w") as fh:
        now = time.time()
        json.dump({"pid": os.getpid(), "shown_at": now, "idle_at": now}, fh)
    os.replace(tmp, os.environ["LANTIDE_READY_FILE"])
QTimer.singleShot(0, ready)
app.exec()
"""


def _env(base: Path, platform_name: str) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "LANTIDE_CONFIG_DIR": str(base / "config"),
            "LANTIDE_DATA_DIR": str(base / "data"),
            "QT_QPA_PLATFORM": platform_name,
            "PYTHONPATH": str(REPO),
            # bytecode cached as in an installed app (pip compiles it), kept out of the repo
            "PYTHONPYCACHEPREFIX": str(base / "pycache"),
        }
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "LANTIDE_MODEL"):
        env.pop(var, None)
    return env


def _start_once(
    argv: list[str], env: dict, ready: Path, timeout: float = 120.0
) -> tuple[float, float]:
    """Seconds from spawning ``argv`` until its window was shown and until it was idle
    (the times it wrote to ``ready``); the process is then ended."""
    ready.unlink(missing_ok=True)
    env = {**env, "LANTIDE_READY_FILE": str(ready)}
    started = time.time()
    proc = subprocess.Popen(
        argv, env=env, cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{argv} exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"{argv} was not ready within {timeout} s")
            time.sleep(0.005)
        stamps = json.loads(ready.read_text())  # written atomically: complete once it exists
        return stamps.get("shown_at", stamps["idle_at"]) - started, stamps["idle_at"] - started
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def bench_cold_start(
    base: Path, runs: int, platform_name: str
) -> list[tuple[str, float, float, float, tuple[float, float]]]:
    from lantide.workspace.sample import create_sample

    template = base / "sample-template"
    create_sample(template)
    env = _env(base, platform_name)
    ready = base / "ready.json"
    gui = [sys.executable, "-m", "lantide", "gui"]
    bare = [sys.executable, "-c", BARE_WINDOW]
    _start_once(bare, env, ready)  # warm the page cache for Python and Qt
    warm = base / "warm-ws"
    shutil.copytree(template, warm)
    _start_once(gui + [str(warm)], env, ready)  # and write Lantide's bytecode once
    first, reopen, baseline = [], [], []
    for i in range(runs):
        ws = base / f"ws{i}"
        shutil.copytree(template, ws)
        (ws / ".lantide" / "cache.duckdb").unlink(missing_ok=True)
        baseline.append(_start_once(bare, env, ready)[0])
        first.append(_start_once(gui + [str(ws)], env, ready))
        reopen.append(_start_once(gui + [str(ws)], env, ready))
    bare_median = statistics.median(baseline)
    med = statistics.median

    def row(label: str, times: list[float]) -> tuple[str, float, float, float, tuple[float, float]]:
        # paired: each start-up against the bare window started just before it, so a
        # machine that speeds up or slows down during the run moves both alike
        pairs = [t / b for t, b in zip(times, baseline, strict=True)]
        return (label, med(times), bare_median, med(pairs), (min(pairs), max(pairs)))

    usable = "+ database open, data registered, explorer filled with the cached tables"
    return [
        row("window shown and idle, first open", [s for s, _ in first]),
        row("window shown and idle, reopen", [s for s, _ in reopen]),
        row(f"{usable}: first open", [i for _, i in first]),
        row(f"{usable}: reopen", [i for _, i in reopen]),
    ]


def bench_stall(base: Path, seconds: float, repeats: int) -> dict:
    from PySide6.QtWidgets import QApplication

    os.environ["LANTIDE_CONFIG_DIR"] = str(base / "stall-config")
    os.environ["LANTIDE_DATA_DIR"] = str(base / "stall-data")
    sys.path.insert(0, str(REPO))
    from lantide.ui.main_window import MainWindow
    from lantide.ui.services import AppServices
    from lantide.ui.startup.gc_pauses import GcPauses
    from lantide.workspace.model import Workspace
    from lantide.workspace.sample import create_sample
    from lantide.workspace.settings import load_settings
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.ui.responsiveness import idle_baseline, run_busy_window, spin_until

    app = QApplication.instance() or QApplication([])
    root = base / "stall-ws"
    create_sample(root)
    pauses = GcPauses()
    with FakeOpenAIServer(background_reply="Churn by region") as server:
        os.environ.update(server.env())
        services = AppServices(Workspace.open(root), load_settings())
        window = MainWindow(services, restore=False)
        window.resize(1400, 900)
        window.show()
        services.start()
        if not spin_until(window.is_idle, 60):
            raise RuntimeError("the main window did not become idle")
        pauses.install()  # as lantide.ui.app does once the first window is idle
        pauses.milestone("start-up")
        # The analyst who sends a question the moment the window is usable meets the
        # start-up warm-up (agent libraries, tiktoken's GIL-holding tokenizer build):
        # measured once, reported on its own row; then the warmed app, as it is from a
        # moment after start-up on.
        cold = run_busy_window(window, server, stream_seconds=seconds, query_seconds=seconds)
        if not spin_until(lambda: window.chat.agent_loaded, 60):
            raise RuntimeError("the chat's warm-up did not finish")
        idle = [idle_baseline(seconds) for _ in range(repeats)]
        runs: dict[str, list[dict]] = {"both": [], "query": [], "chat": []}
        for _ in range(repeats):  # interleaved, so machine load hits every case alike
            for name, q, c in (("both", True, True), ("query", True, False), ("chat", False, True)):
                runs[name].append(
                    run_busy_window(
                        window,
                        server,
                        stream_seconds=seconds,
                        query_seconds=seconds,
                        query=q,
                        chat=c,
                    )
                )
        window.shutdown()
        window.close()
        services.workspace.close()
        for var in server.env():
            os.environ.pop(var, None)
    pauses.uninstall()
    app.processEvents()
    out: dict = {"idle": idle, "cold": [cold["report"]]}
    for name, results in runs.items():
        out[name] = [r["report"] for r in results]
    out["turn_finished"] = all(r["turn_finished"] for r in runs["both"] + runs["chat"] + [cold])
    out["query_outcome"] = sorted(
        {
            type(r["query"].get("error") or r["query"].get("result")).__name__
            for r in runs["both"] + runs["query"]
        }
    )
    return out


def _long_answer(chars: int) -> str:
    from tests.ui.responsiveness import answer_text

    fence = (
        "\n```sql\nSELECT region, count(*) AS churned\nFROM q3_churn\nWHERE status = "
        "'churned'\nGROUP BY 1 ORDER BY 2 DESC\n```\n\n"
    )
    text = ""
    while len(text) < chars:
        text += answer_text(2400) + fence
    return text[:chars]


def bench_render(chars: int, step: int) -> dict:
    """UI-thread time per re-render while a long answer streams in ``step``-character
    deltas: the chat's segmented answer against re-rendering the whole answer each time
    (Markdown to HTML, setHtml, layout and paint), the way it was done before."""
    from PySide6.QtCore import QElapsedTimer
    from PySide6.QtWidgets import QApplication, QScrollArea

    from lantide.ui.chat.chat_answer import AssistantMessageWidget, AutoHeightBrowser
    from lantide.ui.chat.chat_markdown import render_markdown, warm_up
    from lantide.ui.startup.gc_pauses import GcPauses

    app = QApplication.instance() or QApplication([])
    warm_up()
    text = _long_answer(chars)
    out: dict = {}
    pauses = GcPauses().install()  # as in the app: full collections stay short, for both
    pauses.milestone("benchmark")
    for name in ("segmented", "whole"):
        area = QScrollArea()
        area.setWidgetResizable(True)
        area.resize(420, 800)
        widget = AssistantMessageWidget() if name == "segmented" else AutoHeightBrowser()
        area.setWidget(widget)
        area.show()
        app.processEvents()
        clock = QElapsedTimer()
        times: list[float] = []
        for end in range(step, len(text) + step, step):
            clock.start()
            if name == "segmented":
                widget.append(text[end - step : end])
                widget.render_pending()
            else:
                widget.setHtml(render_markdown(text[:end]))
            app.processEvents()  # the layout and paint the render caused
            times.append(clock.nsecsElapsed() / 1e6)
        out[name] = times
        if name == "segmented":
            out["segments"] = len(widget.segments)
        area.close()
        area.deleteLater()
        app.processEvents()
    pauses.uninstall()
    return out


def _machine() -> str:
    try:
        load = f", load average {os.getloadavg()[0]:.1f}"
    except OSError:
        load = ""
    return (
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()} {platform.system()}, "
        f"{os.cpu_count()} cores{load}, Python {platform.python_version()}"
    )


def _print_starts(starts, runs: int, platform_name: str) -> None:
    print(
        f"Machine: {_machine()}; Qt platform {platform_name}; "
        f"median of {runs} start-ups per case.\n"
    )
    print(
        "| start-up (process start to main window shown and idle) | Lantide s | "
        "bare PySide6 window s | ratio (target <= 3x) | paired ratio | pairs |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for label, ours, bare, paired, (low, high) in starts:
        print(
            f"| {label} | {ours:.2f} | {bare:.2f} | {ours / bare:.2f}x | {paired:.2f}x | "
            f"{low:.2f}-{high:.2f}x |"
        )
    print(
        "(ratio: the medians' ratio; paired ratio: the median of each start-up's ratio to "
        "the bare window started just before it; pairs: the lowest and highest of those)\n"
    )


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    platform_name = "xcb" if "--xcb" in argv and os.environ.get("DISPLAY") else "offscreen"
    os.environ.setdefault("QT_QPA_PLATFORM", platform_name)
    runs = 3 if quick else 7
    for arg in argv:
        if arg.startswith("--runs="):
            runs = max(1, int(arg.split("=", 1)[1]))
    seconds = 2.0 if quick else 3.0
    repeats = 1 if quick else 3
    with tempfile.TemporaryDirectory(prefix="lantide-bench-ui-") as tmp:
        base = Path(tmp)
        starts = bench_cold_start(base, runs, platform_name)
        if "--startup" in argv:
            _print_starts(starts, runs, platform_name)
            return 0
        stall = bench_stall(base, seconds, repeats)
        render_chars = 12_000 if quick else 24_000
        render = bench_render(render_chars, 40)
    _print_starts(starts, runs, platform_name)

    def longest(reports) -> list[float]:
        return sorted(r.longest_stall_ms for r in reports)

    idle_med = statistics.median(longest(stall["idle"]))
    print(
        f"| event loop (5 ms heartbeat), main window; {len(stall['idle'])} runs of "
        f"{seconds:.0f} s each | longest stall ms, median of runs | worst run ms | "
        f"p99 gap ms (median) | vs idle |"
    )
    print("|---|---:|---:|---:|---:|")
    for key, label in (
        (
            "cold",
            "query + answer at once, the first turn sent the moment the "
            "window is usable (during the warm-up; one run)",
        ),
        ("both", "DuckDB query + streamed chat answer at once"),
        ("query", "DuckDB query only (status bar running, then cancel)"),
        ("chat", "streamed chat answer only"),
        ("idle", "same window idle (baseline)"),
    ):
        reports = stall[key]
        med = statistics.median(longest(reports))
        p99 = statistics.median(r.percentile(99) for r in reports)
        print(
            f"| {label} | {med:.1f} | {longest(reports)[-1]:.1f} | {p99:.1f} | "
            f"{med / max(idle_med, 0.1):.1f}x |"
        )
    print(
        f"\n| streamed answer of {render_chars:,} characters, one re-render per 40-character "
        f"delta ({len(render['whole'])} renders) | segmented ({render['segments']} segments) "
        f"ms | whole answer each time ms | ratio |"
    )
    print("|---|---:|---:|---:|")

    def figures(times: list[float]) -> list[float]:
        ordered, tail = sorted(times), times[-max(1, len(times) // 10) :]
        return [
            statistics.median(ordered),
            ordered[int(0.95 * (len(ordered) - 1))],
            ordered[-1],
            statistics.median(tail),
            sum(times),
        ]

    labels = (
        "median per render",
        "p95 per render",
        "longest render",
        "median per render over the last 10% of the answer",
        "total UI-thread time for the answer",
    )
    for label, a, b in zip(
        labels, figures(render["segmented"]), figures(render["whole"]), strict=True
    ):
        print(f"| {label} | {a:.1f} | {b:.1f} | {a / b:.2f}x |")
    both = statistics.median(longest(stall["both"]))
    print(
        f"\ntarget: longest stall under 50 ms with both running (median of runs): "
        f"{'met' if both < 50 else 'NOT met'} ({both:.1f} ms); every answer finished: "
        f"{stall['turn_finished']}; queries ended with {', '.join(stall['query_outcome'])}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
