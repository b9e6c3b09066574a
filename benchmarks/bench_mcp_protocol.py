"""The MCP protocol's own cost: ``python -m benchmarks mcp_protocol [--calls=N]``.

The ``mcp`` suite subtracts an engine of 15-20 ms of CPU measured in another process, so
its protocol figure carries ±2-3 ms of noise. Here the server is Lantide's real HTTP server
(:class:`lantide.mcp.server.HttpServer`: uvicorn, the token check on every request, the
SDK's Streamable HTTP handler for every method, ``tools/call`` included, the thread hop)
over an :class:`McpEngine` whose tool run (``McpEngine._run``) is replaced, for
``run_query`` only, by a stub that answers a one-row result at once: the server process's
CPU per call is then the protocol's and the per-call work around the tool (mode check, the
activity line, ``last used``) alone. Clients: the official SDK client and the thin client
of ``bench_mcp``.
Nothing here is the product's path for a query; it isolates what the protocol costs.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time

from benchmarks.bench_mcp import (
    REPO,
    ThinClient,
    _flag,
    _free_port,
    _isolate,
    _proc_cpu,
    _wait_listening,
)

STUB_SERVER = """
import sys
from lantide.mcp.clients import ClientStore
from lantide.mcp.engine import CallResult, McpEngine
from lantide.mcp.server import HttpServer

engine = McpEngine(store=ClientStore(), transport="http")
engine.open_workspace(sys.argv[1])
real_run = engine._run

def stub(handle, client, entry, args):
    if entry.name != "run_query":
        return real_run(handle, client, entry, args)
    return CallResult(True, {"columns": [{"name": "one", "type": "INTEGER"}],
                             "row_count": 1, "preview": [[1]]}, [])

engine._run = stub
HttpServer(engine, port=int(sys.argv[2])).start().wait()
"""
WARM_CALLS = 30


async def _measure(call, calls: int, server_pid: int) -> dict[str, float]:
    args = {"sql": "SELECT 1"}
    for _ in range(WARM_CALLS):
        await call("run_query", args)
    walls: list[float] = []
    c0, s0 = time.process_time(), _proc_cpu(server_pid)
    for _ in range(calls):
        t0 = time.perf_counter()
        await call("run_query", args)
        walls.append((time.perf_counter() - t0) * 1000)
    c1, s1 = time.process_time(), _proc_cpu(server_pid)
    return {
        "client": (c1 - c0) * 1000 / calls,
        "server": (s1 - s0) * 1000 / calls,
        "wall": statistics.median(walls),
    }


def bench(calls: int) -> dict[str, dict[str, float]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from benchmarks.bench_query import tpch_data, workspace_for
    from lantide.mcp.clients import ClientStore

    env = _isolate()
    root = workspace_for(0.01, tpch_data(0.01), "mcp-protocol")
    paired = ClientStore().pair("bench-protocol", scope=str(root), mode="execute")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", STUB_SERVER, str(root), str(port)],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )
    out: dict[str, dict[str, float]] = {}

    async def run() -> None:
        url = f"http://127.0.0.1:{port}/mcp"
        headers = {"Authorization": f"Bearer {paired.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            thin = ThinClient(http, url)
            out["sdk"] = await _measure(client.call_tool, calls, server.pid)
            out["thin"] = await _measure(thin.call_tool, calls, server.pid)

    try:
        _wait_listening(port, server)
        asyncio.run(run())
    finally:
        server.terminate()
        server.wait(timeout=30)
    return out


APPEND_LINES = 200
ACTIVITY_LINE = {
    "at": "2026-12-01T23:00:00.000000Z",
    "client": "claude-code",
    "client_name": "Claude Code",
    "mode": "execute",
    "transport": "http",
    "tool": "run_query",
    "arguments": {"sql": "SELECT l_returnflag, sum(l_quantity) FROM lineitem GROUP BY 1"},
    "ok": True,
    "step_ids": ["s12"],
    "duration_ms": 15.2,
}


def bench_append(lines: int) -> dict[str, list[float]]:
    """Wall time (ms) of one activity line appended by ``append_jsonl``, fsynced before
    it returns (the ledger's way, and the activity log's until 2026-12-01) or with
    ``defer_fsync`` (the activity log's now); the two alternate in blocks of 20."""
    import inspect
    import tempfile
    from pathlib import Path

    from lantide.workspace import atomic
    from lantide.workspace.atomic import append_jsonl

    if "defer_fsync" not in inspect.signature(append_jsonl).parameters:  # older code
        return {"fsync": bench_append_old(lines), "deferred": []}
    folder = Path(tempfile.mkdtemp(prefix="lantide-bench-append-"))
    out: dict[str, list[float]] = {"fsync": [], "deferred": []}
    for block in range(lines // 20):
        for side in ("fsync", "deferred") if block % 2 else ("deferred", "fsync"):
            path = folder / f"{side}.jsonl"
            for _ in range(20):
                t0 = time.perf_counter()
                append_jsonl(path, ACTIVITY_LINE, defer_fsync=side == "deferred")
                out[side].append((time.perf_counter() - t0) * 1000)
    atomic.sync_deferred()
    return out


def bench_append_old(lines: int) -> list[float]:
    import tempfile
    from pathlib import Path

    from lantide.workspace.atomic import append_jsonl

    path = Path(tempfile.mkdtemp(prefix="lantide-bench-append-")) / "fsync.jsonl"
    out = []
    for _ in range(lines):
        t0 = time.perf_counter()
        append_jsonl(path, ACTIVITY_LINE)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main(argv: list[str]) -> int:
    calls = int(_flag(argv, "--calls", 300 if "--quick" in argv else 600))
    appended = bench_append(APPEND_LINES)
    result = bench(calls)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"### MCP protocol per call, engine stubbed ({calls} x run_query; ms)\n\n"
        "| client | client CPU | server CPU (the protocol's) | wall median |\n|---|---|---|---|"
    )
    for name, label in (("sdk", "official SDK client"), ("thin", "thin client")):
        r = result[name]
        print(f"| {label} | {r['client']:.2f} | {r['server']:.2f} | {r['wall']:.2f} |")
    print(
        f"\n### One activity line appended ({APPEND_LINES} x append_jsonl, ~400 bytes; ms)\n\n"
        "| fsync | median | p90 | max |\n|---|---|---|---|"
    )
    for side, label in (("fsync", "before returning"), ("deferred", "deferred (group commit)")):
        t = sorted(appended[side])
        if not t:
            continue
        print(f"| {label} | {statistics.median(t):.3f} | {t[len(t) * 9 // 10]:.3f} | {t[-1]:.3f} |")
    print(f"\n{os.cpu_count()} CPUs, load average {load}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
