"""The threads the HTTP server runs engine calls on: results and errors reach the awaiting
request, slow calls run side by side, and closing drops the calls not started yet."""

from __future__ import annotations

import asyncio
import threading

import pytest

from lantide.mcp.server import EngineThreads


def test_a_result_and_an_error_reach_the_request_from_another_thread():
    threads = EngineThreads(workers=2)
    loop_thread = threading.get_ident()

    def where(x: int) -> tuple[int, bool]:
        return x * 2, threading.get_ident() != loop_thread

    def fails() -> None:
        raise ValueError("the engine's own error")

    async def main() -> None:
        assert await threads.run(where, 21) == (42, True)
        with pytest.raises(ValueError, match="the engine's own error"):
            await threads.run(fails)

    try:
        asyncio.run(main())
    finally:
        threads.close()


def test_a_slow_call_does_not_hold_up_the_next_one():
    threads = EngineThreads(workers=2)
    release = threading.Event()

    async def main() -> None:
        slow = asyncio.ensure_future(threads.run(release.wait, 30))
        # the second call finishes while the first still waits on its thread
        assert await asyncio.wait_for(threads.run(lambda: "quick"), 10) == "quick"
        assert not slow.done()
        release.set()
        assert await asyncio.wait_for(slow, 10) is True

    try:
        asyncio.run(main())
    finally:
        release.set()
        threads.close()


def test_closing_cancels_the_calls_not_started_and_refuses_new_ones():
    threads = EngineThreads(workers=1)
    busy, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def occupy() -> None:
        busy.set()
        release.wait(30)

    async def main() -> None:
        first = asyncio.ensure_future(threads.run(occupy))
        await asyncio.get_running_loop().run_in_executor(None, busy.wait, 10)
        waiting = asyncio.ensure_future(threads.run(ran.append, "late"))
        await asyncio.sleep(0)  # queued behind the busy thread
        threads.close()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, 10)
        await asyncio.wait_for(first, 10)
        with pytest.raises(RuntimeError, match="closed"):
            await threads.run(ran.append, "after close")

    asyncio.run(main())
    assert ran == []
