"""Agent Integration benchmark: ``python -m benchmarks mcp [--reps=N] [--sf=0.1]``.

``run_query`` of the 22 TPC-H queries at SF 0.1, measured side by side in one run:

- **registry**: the in-app agent's call (``ToolRegistry.call`` on a ToolContext), no MCP;
- **engine**: the MCP engine's call in process (:meth:`McpEngine.call`: the same tool plus
  the client's checks and its activity line), no protocol;
- **HTTP**: the same call from the official ``mcp`` SDK client over Streamable HTTP on
  127.0.0.1 to the server in this process (one session, kept open as an agent keeps it;
  each request's token checked).

The three sides alternate per repetition; each query's time is its median. On a shared
machine the query's own time varies by more than the protocol costs, so the protocol's
overhead is measured per call, paired: the client's wall time of an HTTP call minus the
time the server spent in :meth:`McpEngine.call` for that same request (target: median
under 5 ms). HTTP minus registry (medians) is everything an outside agent pays over the
in-app agent, query noise included. The data are the
``tpchgen-cli`` Parquet files of :mod:`benchmarks.bench_query`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "queries" / "tpch"


def _flag(argv, name, default):
    for arg in argv:
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def _isolate() -> None:
    """Own config and data folders and no keyring: nothing of the user's is touched."""
    base = Path(tempfile.mkdtemp(prefix="lantide-bench-mcp-"))
    os.environ["LANTIDE_CONFIG_DIR"] = str(base / "config")
    os.environ["LANTIDE_DATA_DIR"] = str(base / "data")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"


def _registry_context(handle):
    from lantide.agent.app_state import SessionFileAppState
    from lantide.agent.cancel import CancelToken
    from lantide.agent.conversation import Conversation
    from lantide.agent.ledger import Ledger
    from lantide.agent.tools.context import ToolContext

    ws = handle.workspace
    conv = Conversation.create(ws.conversations_dir, "bench-in-app")
    return ToolContext(workspace=ws, settings=handle.settings, conversation=conv,
                       ledger=Ledger(ws.ledger_dir, conv.id), app=SessionFileAppState(ws),
                       services=handle.services, cancel=CancelToken(), state="no_project",
                       turn=1)


def bench(sf: float, reps: int) -> list[dict]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from benchmarks.bench_query import tpch_data, workspace_for
    from lantide.agent.tools import default_registry
    from lantide.mcp.clients import ClientStore
    from lantide.mcp.engine import McpEngine
    from lantide.mcp.server import HttpServer

    root = workspace_for(sf, tpch_data(sf), "mcp")
    store = ClientStore()
    pairing = store.pair("bench", scope=str(root), mode="execute", expires_days=1)
    engine = McpEngine(store=store, transport="http")
    handle = engine.open_workspace(root)
    ctx = _registry_context(handle)
    server = HttpServer(engine, port=0).start()
    queries = [(p.stem, p.read_text()) for p in sorted(QUERIES.glob("q*.sql"))]
    times: dict[str, dict[str, list[float]]] = {
        q: {"registry": [], "engine": [], "http": [], "paired": []} for q, _ in queries}
    served: list[float] = []  # the server's time in engine.call, per HTTP request
    plain_call = engine.call

    def timed_call(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return plain_call(*args, **kwargs)
        finally:
            served.append(time.perf_counter() - t0)
    failures: list[str] = []

    async def run_all() -> None:
        headers = {"Authorization": f"Bearer {pairing.token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=300) as http:
            async with Client(streamable_http_client(server.url, http_client=http)) as client:
                await client.call_tool("get_analysis_context", {})  # warm the session
                for rep in range(reps + 1):  # the first round warms DuckDB and is dropped
                    for name, sql in queries:
                        args = {"sql": sql}
                        t0 = time.perf_counter()
                        out = default_registry().call("run_query", args, ctx)
                        t1 = time.perf_counter()
                        done = await asyncio.to_thread(engine.call, pairing.client,
                                                       "run_query", args, pairing.token)
                        t2 = time.perf_counter()
                        served.clear()
                        engine.call = timed_call  # the server's calls are timed
                        result = await client.call_tool("run_query", args)
                        t3 = time.perf_counter()
                        engine.call = plain_call
                        if not (out.ok and done.ok and not result.is_error):
                            failures.append(f"{name}: {out.result.get('error')}")
                        if rep:
                            times[name]["registry"].append(t1 - t0)
                            times[name]["engine"].append(t2 - t1)
                            times[name]["http"].append(t3 - t2)
                            times[name]["paired"].append(t3 - t2 - sum(served))

    try:
        asyncio.run(run_all())
    finally:
        server.stop()
        engine.close()
    rows = []
    for name, _sql in queries:
        med = {k: statistics.median(v) * 1000 for k, v in times[name].items()}
        rows.append({"query": name, **med, "overhead": med["paired"],
                     "over_app": med["http"] - med["registry"]})
    if failures:
        print("failed calls:", sorted(set(failures)))
    return rows


def main(argv: list[str]) -> int:
    _isolate()
    reps = int(_flag(argv, "--reps", 3 if "--quick" in argv else 7))
    sf = float(_flag(argv, "--sf", 0.01 if "--quick" in argv else 0.1))
    started = time.perf_counter()
    rows = bench(sf, reps)
    print(f"### run_query over MCP (HTTP) against in process, TPC-H SF {sf:g} "
          f"(ms; medians of {reps} alternating runs)\n")
    print("| query | registry (in-app) | engine (MCP, in process) | HTTP (SDK client) | "
          "protocol overhead (paired) | HTTP - registry |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['query']} | {r['registry']:.1f} | {r['engine']:.1f} | {r['http']:.1f} | "
              f"{r['overhead']:.2f} | {r['over_app']:.1f} |")
    overheads = sorted(r["overhead"] for r in rows)
    over_app = sorted(r["over_app"] for r in rows)
    median = statistics.median(overheads)
    print(f"\nProtocol overhead per call (HTTP wall time - server's engine.call): median **{median:.2f} ms** "
          f"(min {overheads[0]:.2f}, max {overheads[-1]:.2f}); target < 5 ms: "
          f"{'met' if median < 5 else 'NOT met'}. HTTP - registry: median "
          f"{statistics.median(over_app):.2f} ms. Run took {time.perf_counter() - started:.0f} s "
          f"on {os.cpu_count()} CPUs.")
    return 0 if median < 5 else 1


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
