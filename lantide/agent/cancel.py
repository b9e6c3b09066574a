"""Stopping a turn from another thread.

The agent loop checks :attr:`CancelToken.cancelled` at each event. That alone would wait
for a blocking call to return, so whatever blocks registers a closer with
:meth:`CancelToken.on_cancel`: the model client closes its HTTP stream, the query tools
cancel the query layer's ``CancelScope`` they run under (only the turn's own statements,
never the analyst's SQL tabs). :meth:`cancel` sets the flag and runs the closers at once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from lantide.errors import LantideError

if TYPE_CHECKING:
    from lantide.agent.model_client import ModelReply


class TurnCancelled(LantideError):
    code = "CANCELLED"
    # what the model had sent when a stream was stopped (set by the model client)
    partial: ModelReply | None = None

    def __init__(self, message: str = "stopped by the analyst"):
        super().__init__(message, hint="Send a new message to go on.")


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._closers: dict[int, Callable[[], object]] = {}
        self._next = 0

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        """Set the flag and run every registered closer (errors in closers are ignored)."""
        self._event.set()
        with self._lock:
            closers = list(self._closers.values())
        for close in closers:
            # a closer racing with normal completion may fail; harmless
            with contextlib.suppress(Exception):
                close()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise TurnCancelled()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when cancelled meanwhile."""
        return self._event.wait(max(0.0, seconds))

    @contextmanager
    def on_cancel(self, close: Callable[[], object]) -> Iterator[None]:
        """Run ``close`` if the token is cancelled while the block runs."""
        with self._lock:
            key = self._next
            self._next += 1
            self._closers[key] = close
        try:
            if self._event.is_set():
                close()
            yield
        finally:
            with self._lock:
                self._closers.pop(key, None)
