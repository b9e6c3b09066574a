"""What the chat is doing while a turn runs, said where the analyst looks: each running
tool card counts its elapsed time ("running… 4.2 s"), and the footer says "running a
query…" while a query tool runs, "running <tool>…" for another tool, "thinking…" while
the model writes.

It follows the agent's events and the transcript's cards from outside, so neither the
cards nor the transcript need a clock of their own.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer

if TYPE_CHECKING:
    from lantide.agent.events import Event
    from lantide.ui.chat.chat_panel import ChatPanel

TICK_MS = 200
THINKING = "thinking…"
RUNNING_QUERY = "running a query…"


def elapsed_text(seconds: float) -> str:
    if seconds < 60:
        return f"running… {seconds:.1f} s"
    return f"running… {int(seconds // 60)} min {int(seconds % 60):02d} s"


def footer_text(running_tools: list[str]) -> str:
    """The footer for the tools running now (oldest first)."""
    from lantide.agent.history import QUERY_TOOLS

    if not running_tools:
        return THINKING
    if any(tool in QUERY_TOOLS for tool in running_tools):
        return RUNNING_QUERY
    return f"running {running_tools[-1]}…"


class ChatActivity(QObject):
    """Drives ``panel.model_label`` and the running cards of ``panel.transcript``."""

    def __init__(self, panel: ChatPanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self._started: dict[str, tuple[str, float]] = {}  # call id -> (tool, start)
        self._turn_running = False
        self._timer = QTimer(self, interval=TICK_MS)
        self._timer.timeout.connect(self._tick)

    def on_event(self, event: Event) -> None:
        from lantide.agent.events import ToolCalled, ToolReturned  # loaded after start-up

        if isinstance(event, ToolCalled):
            self._started[event.call_id] = (event.tool, time.monotonic())
        elif isinstance(event, ToolReturned):
            self._started.pop(event.call_id, None)
        else:
            return
        self._tick()

    def running_changed(self, running: bool) -> None:
        self._turn_running = running
        if running:
            self._timer.start()
        else:
            self._timer.stop()
            self._started.clear()
        self._tick()

    def footer(self) -> str:
        return footer_text([tool for tool, _t in self._started.values()])

    def _tick(self) -> None:
        if not self._turn_running:
            return
        self.panel.model_label.setText(self.footer())
        now = time.monotonic()
        cards = getattr(self.panel.transcript, "cards", {})
        for call_id, (_tool, started) in self._started.items():
            card = cards.get(call_id)
            if card is not None and card.result is None:
                card.status_label.setText(elapsed_text(now - started))
