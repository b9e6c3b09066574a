"""Background model calls on the secondary profile: they never block the turn.

Naming a conversation from its first exchange and proposing knowledge entries run on
daemon threads after the turn's last event. Their results arrive as events through
``on_event`` (the desktop app forwards them to the UI thread) and are kept in
:attr:`BackgroundRunner.events` for the command line, which waits briefly for them before
it exits. A failing background call is recorded as an ``error`` event, never raised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from lantide.agent.events import ErrorOccurred, Event
from lantide.errors import LantideError
from lantide.templates import render_prompt

MAX_TITLE_CHARS = 80
# What each background task is, in the analyst's words (its failure notice names it).
TASK_WORDS = {
    "conversation-title": "Naming this conversation",
    "knowledge-proposals": "Proposing knowledge from this turn",
}


def task_words(name: str) -> str:
    return TASK_WORDS.get(name, name.replace("-", " ").capitalize())


class BackgroundRunner:
    def __init__(self, on_event: Callable[[Event], None] | None = None):
        self.on_event = on_event
        self.events: list[Event] = []
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, name: str, work: Callable[[], Event | list[Event] | None]) -> None:
        def run() -> None:
            try:
                produced = work()
            except LantideError as exc:
                produced = ErrorOccurred(
                    f"BACKGROUND_{exc.code}", f"{task_words(name)} failed: {exc.message}", exc.hint
                )
            except Exception as exc:  # a background failure must not reach the analyst's turn
                produced = ErrorOccurred(
                    "BACKGROUND_FAILED", f"{task_words(name)} failed: {type(exc).__name__}: {exc}"
                )
            for event in produced if isinstance(produced, list) else [produced]:
                if event is None:
                    continue
                with self._lock:
                    self.events.append(event)
                if self.on_event is not None:
                    self.on_event(event)

        thread = threading.Thread(target=run, name=f"lantide-{name}", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds in total; True when every task finished."""
        import time

        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in threads)

    def take_events(self) -> list[Event]:
        with self._lock:
            out, self.events = self.events, []
        return out


def clean_title(text: str) -> str | None:
    """The first line of the model's answer, without quotes or a final full stop."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    line = line.strip("\"'“”‘’*# ").rstrip(".").strip()
    if line.lower().startswith("title:"):
        line = line[6:].strip()
    return line[:MAX_TITLE_CHARS] or None


def conversation_title(
    complete: Callable[[str, str], str], user_message: str, assistant_message: str
) -> str | None:
    from lantide.agent.ledger import QUERY_STEP_MARKER

    system = render_prompt("background/conversation_title.md.j2")
    # the [[QUERY_STEP]] lines are for the ledger; the title comes from the exchange
    answer = "\n".join(
        line for line in assistant_message.splitlines() if QUERY_STEP_MARKER not in line
    ).strip()
    user = render_prompt(
        "background/conversation_title_input.md.j2",
        user_message=user_message[:2_000],
        assistant_message=answer[:2_000],
    )
    return clean_title(complete(system, user))
