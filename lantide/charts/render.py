"""Vega-Lite to SVG, offline and in-process: vendored vega + vega-lite in QuickJS.

:func:`render_svg` ``(spec) -> str`` takes a Vega-Lite spec whose data is inline (see
:func:`lantide.charts.load_chart`) and returns the SVG text. The JavaScript (vega,
vega-lite, BSD-3) is vendored under ``resources/vega/``; QuickJS (the ``quickjs-ng`` wheel,
the maintained fork, ~7.7 MB; its module is ``quickjs``) runs it. Nothing is fetched: the
spec has no ``url`` (refused by :mod:`lantide.charts.spec`) and the engine has no network
or file access at all.

One engine per process, on its own thread: QuickJS checks its stack against the thread
that made it, so every call runs on that thread (the caller waits; the GIL is released
while JavaScript runs, so a waiting UI worker does not freeze the UI). The first call loads
the scripts (about a second); later calls take tens of milliseconds (benchmarks/bench_charts).
Rendered SVGs are kept by the spec's text (:data:`CACHE_SIZE` of them).

Why QuickJS and not vl-convert-python: docs/evidence.md, section Charts.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

from lantide.charts.errors import ChartError
from lantide.package_data import read_resource_text

SCRIPTS = ("quickjs-shim.js", "vega.min.js", "vega-lite.min.js", "render.js")
TIME_LIMIT_SECONDS = 20  # one render; a hostile spec (a huge sequence) is stopped here
MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024
CACHE_SIZE = 64


class _Stopped(Exception):
    """The time or memory limit stopped a render."""


_UNDEFINED = re.compile(r"(?:ReferenceError: )?'?([\w$.]+)'? is not defined")


def _clear_error(message: str) -> ChartError:
    """A chart error that says what happened in a reader's words: a name the offline
    renderer lacks (QuickJS is no browser) is named as such, not as a JavaScript error."""
    missing = _UNDEFINED.search(message)
    if missing:
        return ChartError(
            f"the chart could not be drawn: vega needs {missing.group(1)!r}, which the offline "
            "renderer (QuickJS, no browser) does not have",
            hint="Simplify the chart (plain marks and encodings draw offline); if it is plain "
            "Vega-Lite, this is a Lantide bug: report it with the chart file.",
            code="CHART_RENDER",
        )
    return ChartError(f"the chart could not be drawn: {message}", code="CHART_RENDER")


def _stopped(message: str) -> bool:
    return "interrupted" in message or "out of memory" in message


class _Engine:
    """The QuickJS context with vega loaded; used only on the executor's thread."""

    def __init__(self) -> None:
        import quickjs  # type: ignore[import-untyped]  # no stubs

        self.context = quickjs.Context()
        self.context.set_memory_limit(MEMORY_LIMIT_BYTES)
        for name in SCRIPTS:
            self.context.eval(read_resource_text("vega", name))
        self.context.set_time_limit(TIME_LIMIT_SECONDS)

    def render(self, spec_text: str) -> str:
        ctx = self.context
        ctx.set("__lantideSpec", spec_text)
        ctx.eval("__lantideRender(__lantideSpec)")
        while ctx.execute_pending_job():
            pass
        error = ctx.eval("__lantideError")
        if error and _stopped(error):  # the limit hit inside vega's promise chain
            raise _Stopped(error)
        if error:
            raise _clear_error(error)
        # through JSON: quickjs-ng cannot hand over a concatenated ("rope") string itself
        svg = json.loads(ctx.eval("JSON.stringify(__lantideSvg)"))
        if not isinstance(svg, str):
            if ctx.eval("__lantideTimers"):
                raise ChartError(
                    "the chart could not be drawn: it waits on a timer (vega starts one for "
                    "image marks and for timer-driven events), and a chart drawn once, "
                    "offline, has no time to wait",
                    hint="Leave image marks and timer events out of the chart.",
                    code="CHART_RENDER",
                )
            raise ChartError("the chart could not be drawn (no SVG came back)", code="CHART_RENDER")
        return svg


STACK_BYTES = 8 * 1024 * 1024  # QuickJS's own limit is 1 MB; Windows and musl threads get less


def _make_executor() -> ThreadPoolExecutor:
    """One worker thread, started now with a stack large enough for QuickJS."""
    old = threading.stack_size()
    try:
        threading.stack_size(STACK_BYTES)
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lantide-charts")
        pool.submit(lambda: None).result()
    finally:
        threading.stack_size(old)
    return pool


_executor: ThreadPoolExecutor | None = None  # started on the first chart, not on import
_executor_lock = threading.Lock()


def _engine_thread() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = _make_executor()
        return _executor


_engine: _Engine | None = None
_cache: OrderedDict[str, str] = OrderedDict()
_cache_lock = threading.Lock()


def _render_on_engine_thread(spec_text: str) -> str:
    global _engine
    if _engine is None:
        _engine = _Engine()
    import quickjs

    try:
        return _engine.render(spec_text)
    except (quickjs.JSException, _Stopped) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if _stopped(message):
            _engine = None  # a fresh context for the next chart
            raise ChartError(
                f"the chart took too long or too much memory to draw ({message})",
                hint="Chart fewer rows (aggregate in SQL first) or simplify the spec.",
                code="CHART_TOO_BIG",
            ) from None
        if _UNDEFINED.search(message):
            raise _clear_error(message) from None
        raise ChartError(
            f"Vega-Lite refused the chart: {message}",
            hint="Check the mark, the encoding's fields and types against the table's columns.",
            code="CHART_RENDER",
        ) from None


def _key(spec_text: str) -> str:
    return hashlib.sha256(spec_text.encode("utf-8")).hexdigest()


def render_svg(spec: dict[str, object]) -> str:
    """The SVG of a Vega-Lite ``spec`` with inline data; raises :class:`ChartError`."""
    spec_text = json.dumps(spec, ensure_ascii=False, allow_nan=False, default=str)
    key = _key(spec_text)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    svg = _engine_thread().submit(_render_on_engine_thread, spec_text).result()
    with _cache_lock:
        _cache[key] = svg
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return svg


def clear_cache() -> None:
    """Forget rendered SVGs (the benchmark measures renders, not look-ups)."""
    with _cache_lock:
        _cache.clear()


def warm_up() -> None:
    """Load the scripts now (about a second) so the first chart shown is fast."""
    _engine_thread().submit(_warm).result()


def _warm() -> None:
    global _engine
    if _engine is None:
        _engine = _Engine()
