"""Short garbage-collector pauses for the desktop app.

CPython's full (oldest-generation) collection walks every container object alive, holding
the GIL while it does: with Qt, DuckDB, sqlglot, Pygments and the ``openai`` client (its
pydantic models) loaded, that is about 150,000 objects and 40-75 ms, and it stops the UI
thread whichever thread triggered it. It happens at unpredictable moments, e.g. while an
answer streams, and was the worst event-loop stall measured (``python -m benchmarks ui``).

Nearly all of those objects live as long as the process (modules, classes, functions), so
:class:`GcPauses` moves them out of the collector's way with ``gc.freeze()``:

- at milestones where a burst of long-lived objects was just made, once each: the main
  window idle after start-up, the Markdown renderer and the agent's libraries loaded in a
  worker (:func:`loading_long_lived`: no automatic collection while they load, then
  freeze);
- after any full collection that took long: what survived it is long-lived by definition,
  and freezing right after a collection freezes no garbage.

And from the app's first Qt import until its first window is idle (or
:data:`START_UP_QUIET_MS` at most) there is no automatic collection at all
(:func:`quiet_start_up`): the start-up's ~75 collections cost 8-12 ms of it and found about
400 objects of garbage among the hundreds of thousands it makes; the start-up milestone
then freezes what was made, before collection resumes.

Frozen objects are never collected; one that becomes cyclic garbage later stays in memory.
That is the price of the trade; :meth:`GcPauses.thaw` (on switching workspace, when the
old window's objects become garbage) puts them back under the collector, and the next slow
collection frees the garbage and freezes what survived. Tests do not install it, so their
objects are collected as usual.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
from contextlib import contextmanager

log = logging.getLogger(__name__)

# A full collection longer than this freezes its survivors (an idle window's takes ~1 ms).
SLOW_COLLECTION_MS = 8.0

_active: GcPauses | None = None
_lock = threading.Lock()
_quiet = 0  # loads in progress (automatic collection off meanwhile)
_quiet_reenable = False
_start_up_quiet = False  # quiet_start_up() in effect
# The start-up's pause ends by this time after the window was made, idle or not (a large
# first open may register its data files for much longer).
START_UP_QUIET_MS = 3000


class GcPauses:
    """Freezes long-lived objects so that full collections stay short."""

    def __init__(self, slow_ms: float = SLOW_COLLECTION_MS):
        self.slow_ms = slow_ms
        self.freezes = 0
        self._started: float | None = None
        self._milestones: set[str] = set()

    # -- installing ------------------------------------------------------------------------
    def install(self) -> GcPauses:
        global _active
        with _lock:
            previous, _active = _active, self
        if previous is not None and previous is not self:
            previous.uninstall()  # outside the lock: uninstall takes it (not re-entrant)
        if self._after_collection not in gc.callbacks:
            gc.callbacks.append(self._after_collection)
        return self

    def uninstall(self) -> None:
        """Stop freezing and hand the frozen objects back to the collector."""
        global _active
        with _lock:
            if _active is self:
                _active = None
        with contextlib.suppress(ValueError):  # not installed
            gc.callbacks.remove(self._after_collection)
        gc.unfreeze()

    def thaw(self) -> None:
        """Put the frozen objects back under the collector (many just became garbage)."""
        gc.unfreeze()

    # -- freezing --------------------------------------------------------------------------
    def milestone(self, why: str) -> None:
        """Freeze at a milestone, the first time it is reached (a later time, e.g. in a
        second window, could freeze the garbage a closed window left)."""
        with _lock:
            if why in self._milestones:
                return
            self._milestones.add(why)
        self.freeze(why)

    def freeze(self, why: str = "") -> None:
        """Exclude every object alive now from future collections (a few microseconds)."""
        gc.freeze()
        self.freezes += 1
        log.debug("gc: froze long-lived objects (%s); %d frozen", why, gc.get_freeze_count())

    def _after_collection(self, phase: str, info: dict) -> None:
        # Runs on whichever thread collected, inside the collector's bookkeeping: only
        # timing and the freeze of what survived, nothing that allocates much.
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
            return
        started, self._started = self._started, None
        if started is not None and (time.perf_counter() - started) * 1000 >= self.slow_ms:
            self.freeze("after a slow full collection")


def active() -> GcPauses | None:
    return _active


@contextmanager
def loading_long_lived(why: str):
    """Around a burst of imports in a worker: no automatic collection meanwhile (one would
    walk the whole growing heap, holding the GIL for tens of milliseconds while the UI
    thread waits), then freeze what was made. Only when the app installed
    :class:`GcPauses`; otherwise it changes nothing."""
    pauses = _active
    if pauses is None:
        yield
        return
    with _lock:  # several workers may load at once: the last one out turns it back on
        _quiet_begin()
    try:
        yield
    finally:
        pauses.milestone(why)
        with _lock:
            _quiet_end()


def quiet_start_up() -> None:
    """No automatic collection until :func:`end_quiet_start_up` (the desktop app: from its
    first Qt import until its first window is idle). Once per process."""
    global _start_up_quiet
    with _lock:
        if _start_up_quiet:
            return
        _start_up_quiet = True
        _quiet_begin()


def end_quiet_start_up() -> None:
    """Automatic collection as before :func:`quiet_start_up` (unless a load is still
    under way: then once it ends). Does nothing if the start-up was not quiet."""
    global _start_up_quiet
    with _lock:
        if not _start_up_quiet:
            return
        _start_up_quiet = False
        _quiet_end()


def start_up_is_quiet() -> bool:
    return _start_up_quiet


def _quiet_begin() -> None:
    """One more reason for no automatic collection (with ``_lock`` held)."""
    global _quiet, _quiet_reenable
    if _quiet == 0:
        _quiet_reenable = gc.isenabled()
        gc.disable()
    _quiet += 1


def _quiet_end() -> None:
    """One reason fewer; the last one turns collection back on if it was (``_lock`` held)."""
    global _quiet
    _quiet -= 1
    if _quiet == 0 and _quiet_reenable:
        gc.enable()
