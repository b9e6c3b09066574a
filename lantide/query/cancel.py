"""Cancelling the queries of one caller, and only those.

Several callers share a workspace's engine at once: the agent's turn, each SQL tab of the
desktop app, the grid paging a table. Each has its own DuckDB cursor (one per thread), and
a cursor can be interrupted alone, so the agent's Stop need not stop the analyst's tab.

A :class:`CancelScope` collects what runs under it::

    scope = CancelScope()
    with scope:                        # on the thread that runs the work
        service.run_sql_tab(project, "clean_orders")
    ...
    scope.cancel()                     # from any thread

``with scope:`` binds the scope to the current thread; every statement the engine runs on
that thread meanwhile (and every remote fetch registered with ``Engine.cancel_hook``)
belongs to it. :meth:`CancelScope.cancel` is sticky: it interrupts what runs now, keeps
interrupting it until it ends (an interrupt that lands between two statements, or before
DuckDB has started one, would otherwise be lost), and every later statement under the
scope is refused with ``QUERY_CANCELLED`` before it starts. A Source Run under a
cancelled scope therefore stops its whole chain. ``Engine.interrupt`` (everything, for
shutting down) is unchanged.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lantide.query.engine import Cursor

# Re-interrupt intervals after a cancel: quick at first, then calmer for a statement that
# takes long to notice (DuckDB checks for interrupts between chunks of work).
_REPEAT_FAST = 0.02
_REPEAT_SLOW = 0.25
_FAST_FOR = 2.0

_bound = threading.local()  # .scopes: the scopes entered on this thread, innermost last


def active_scopes() -> tuple[CancelScope, ...]:
    """The scopes bound to the current thread (outermost first)."""
    return tuple(getattr(_bound, "scopes", ()))


class CancelScope:
    """What one caller runs; :meth:`cancel` stops it from any thread (see module doc)."""

    def __init__(self, name: str = ""):
        self.name = name
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._cursors: dict[int, Cursor] = {}  # key of a running statement -> its cursor
        self._hooks: dict[int, Callable[[], None]] = {}
        self._repeating = False

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "active"
        return f"<CancelScope {self.name or hex(id(self))} {state}>"

    # -- binding to a thread ----------------------------------------------------------
    def __enter__(self) -> CancelScope:
        scopes = getattr(_bound, "scopes", None)
        if scopes is None:
            scopes = _bound.scopes = []
        scopes.append(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        scopes = getattr(_bound, "scopes", [])
        for i in range(len(scopes) - 1, -1, -1):  # the innermost entry of this scope
            if scopes[i] is self:
                del scopes[i]
                break

    # -- cancelling -------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def running(self) -> int:
        """How many statements and remote fetches run under the scope now."""
        with self._lock:
            return len(self._cursors) + len(self._hooks)

    def cancel(self) -> int:
        """Stop everything running under the scope now and refuse what comes later.

        Returns how many statements and remote fetches were running. Safe to call twice,
        from any thread, before or after the work started.
        """
        with self._lock:
            self._cancelled.set()
            # Under the lock: a statement that has left the scope is never hit, even if
            # its thread goes on with other work on the same cursor.
            for cur in self._cursors.values():
                _interrupt(cur)
            running = len(self._cursors)
            hooks = list(self._hooks.values())
            start_repeating = running > 0 and not self._repeating
            self._repeating = self._repeating or start_repeating
        for hook in hooks:
            with contextlib.suppress(Exception):  # racing with the fetch's own end: harmless
                hook()
        if start_repeating:
            threading.Thread(target=self._repeat, name="lantide-cancel", daemon=True).start()
        return running + len(hooks)

    def _repeat(self) -> None:
        started = time.monotonic()
        while True:
            time.sleep(_REPEAT_FAST if time.monotonic() - started < _FAST_FOR else _REPEAT_SLOW)
            with self._lock:
                if not self._cursors:
                    self._repeating = False
                    return
                for cur in self._cursors.values():
                    _interrupt(cur)

    # -- what the engine calls ------------------------------------------------------------
    def enter_statement(self, key: int, cursor: Cursor) -> bool:
        """Note a statement about to run on ``cursor``; False when the scope is cancelled."""
        with self._lock:
            if self._cancelled.is_set():
                return False
            self._cursors[key] = cursor
            return True

    def leave_statement(self, key: int) -> None:
        with self._lock:
            self._cursors.pop(key, None)

    def add_hook(self, key: int, hook: Callable[[], None]) -> bool:
        """Note work outside DuckDB that cancel must stop; False when already cancelled."""
        with self._lock:
            if self._cancelled.is_set():
                return False
            self._hooks[key] = hook
            return True

    def remove_hook(self, key: int) -> None:
        with self._lock:
            self._hooks.pop(key, None)


def _interrupt(cursor: Cursor) -> None:
    with contextlib.suppress(Exception):  # closed meanwhile: its statement is over anyway
        cursor.interrupt()
