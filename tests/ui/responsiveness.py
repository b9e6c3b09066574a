"""Measuring how long the UI thread stalls while the app works hard.

:class:`Heartbeat` ticks a 5 ms ``QTimer`` and records the gaps between ticks: a gap much
longer than the interval is a stall of the event loop (the UI could not repaint or react
to input). :func:`run_busy_window` drives a real main window through the load the issue
names at once: a multi-second DuckDB query (run as the SQL tab runs queries: a worker,
tracked in the status bar, cancelled from its cancel button at the end) and a streamed
chat answer from the scripted OpenAI-compatible server through the real chat panel.

Shared by ``tests/ui/test_responsiveness.py`` (a generous bound) and
``benchmarks/bench_ui.py`` (the figure).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

LONG_SQL = "SELECT count(*) AS n FROM range(100000000000) t(i) WHERE i % 7 = 3"


@dataclass
class StallReport:
    ticks: int
    seconds: float
    gaps_ms: list[float] = field(default_factory=list)

    @property
    def longest_stall_ms(self) -> float:
        """The longest gap between ticks beyond the timer interval."""
        return max(self.gaps_ms, default=0.0)

    def percentile(self, p: float) -> float:
        if not self.gaps_ms:
            return 0.0
        ordered = sorted(self.gaps_ms)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


class Heartbeat:
    def __init__(self, interval_ms: int = 5):
        self.interval_ms = interval_ms
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.clock = QElapsedTimer()
        self._last = 0
        self.gaps_ms: list[float] = []

    def start(self) -> None:
        self.gaps_ms = []
        self.clock.start()
        self._last = self.clock.nsecsElapsed()
        self.timer.start()

    def _tick(self) -> None:
        now = self.clock.nsecsElapsed()
        self.gaps_ms.append(max(0.0, (now - self._last) / 1e6 - self.interval_ms))
        self._last = now

    def stop(self) -> StallReport:
        self.timer.stop()
        self._tick()  # a stall at the very end counts too
        return StallReport(len(self.gaps_ms), self.clock.elapsed() / 1000, list(self.gaps_ms))


def spin(seconds: float) -> None:
    """Run the event loop for ``seconds``."""
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def spin_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        spin(0.02)
    return True


def idle_baseline(seconds: float) -> StallReport:
    beat = Heartbeat()
    beat.start()
    spin(seconds)
    return beat.stop()


def answer_text(chars: int = 2400) -> str:
    row = "| {r} | {n} | {c:.1%} |\n"
    table = "| region | churned | rate |\n|---|---:|---:|\n" + "".join(
        row.format(r=f"R{i:02d}", n=i * 7, c=i / 100) for i in range(12)
    )
    prose = (
        "The churn rate is highest in **US-CA**, then `DE-BY`; the denominator is every "
        "customer active in Q2. "
    )
    text = table + "\n"
    while len(text) < chars:
        text += prose
    return text


def run_busy_window(
    window,
    server,
    *,
    stream_seconds: float = 3.0,
    query_seconds: float = 3.0,
    query: bool = True,
    chat: bool = True,
) -> dict:
    """Query and streamed answer at once (or one of them); returns the stall report and
    what happened. The query is cancelled from the status bar after ``query_seconds``."""
    from tests.fakes.openai_server import Turn

    services = window.services
    outcome: dict = {}
    turn_done = {"done": not chat}
    beat = Heartbeat()
    beat.start()
    started = time.monotonic()
    if query:
        service = services.query
        worker = services.workers.submit(
            lambda ctx: service.run_query(LONG_SQL),
            on_result=lambda r: outcome.update(result=r),
            on_error=lambda e: outcome.update(error=e),
            on_cancel=service.interrupt,
            name="long query",
        )
        services.track_query(worker, "heartbeat query")
    if chat:
        text = answer_text()
        chunk = 4
        server.script(Turn(text=text, chunk_size=chunk, delay=stream_seconds / (len(text) / chunk)))
        window.chat.bridge.sig_turn_running.connect(
            lambda running: turn_done.update(done=True) if not running else None
        )
        window.chat.ask("Summarize churn by region.")
    spin_until(
        lambda: (
            time.monotonic() - started
            >= max(query_seconds if query else 0, stream_seconds if chat else 0)
        ),
        max(query_seconds, stream_seconds) + 5,
    )
    if query:
        window.status.cancel_running_query()  # the status bar's cancel button
        spin_until(lambda: "error" in outcome or "result" in outcome, 30)
    spin_until(lambda: turn_done["done"], 60)
    report = beat.stop()
    return {
        "report": report,
        "query": outcome,
        "turn_finished": turn_done["done"],
        "elapsed": time.monotonic() - started,
    }
