"""Agent Integration benchmark: ``python -m benchmarks mcp [--reps=N] [--sf=0.1] [--quick]``.

``run_query`` of the 22 TPC-H queries at SF 0.1, measured side by side in one run:

- **registry**: the in-app agent's call (``ToolRegistry.call`` on a ToolContext), no MCP;
- **engine**: the MCP engine's call in process (:meth:`McpEngine.call`: the same tool plus
  the client's checks and its activity line), no protocol;
- **HTTP**: the same call from the official ``mcp`` SDK client over Streamable HTTP to
  ``lantide mcp WS --http`` in its own process (as an outside agent talks to the app; one
  session kept open, every request's token checked).

The sides alternate per repetition; each query's time is its median. On a shared machine a
query's own time varies by more than the protocol costs, so the protocol's overhead is
measured per call, paired: the client's wall time of an HTTP call minus the time the server
spent in :meth:`McpEngine.call` for that same request (the ``duration_ms`` of its activity
line). Target: median under 5 ms. For scale, the **HTTP floor** is a bare POST of the same
size to a bare uvicorn app in another process (no MCP, no Lantide) on the same machine at
the same time: what any local HTTP call costs there.

Two clients side by side, each paired the same way: the **thin client** makes the
``tools/call`` as one plain JSON-RPC POST (the headers and ``_meta`` the SDK client sends at
protocol 2026-07-28, its JSON reply parsed with ``json.loads``), as outside agents that are
not the Python SDK send it (Claude Code, Codex, Cursor): the protocol's own overhead; the
**official SDK client** adds its own layers (4-5 ms of client CPU per call here). Both rows
are reported with the target, and the HTTP floor beside them.

A third row, beside those two and paired the same way: the thin client's same POST sent by
a **lean HTTP client** (:class:`LeanHttp`, a keep-alive connection on asyncio streams)
instead of ``httpx``, with its own HTTP floor measured by that same lean client: what the
protocol costs when the client's HTTP stack is not ``httpx``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
QUERIES = HERE / "queries" / "tpch"
BARE_APP = """
import sys, uvicorn
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b"{}"})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def _flag(argv, name, default):
    for arg in argv:
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def _isolate() -> dict:
    """Own config and data folders and no keyring: nothing of the user's is touched."""
    base = Path(tempfile.mkdtemp(prefix="lantide-bench-mcp-"))
    env = {
        "LANTIDE_CONFIG_DIR": str(base / "config"),
        "LANTIDE_DATA_DIR": str(base / "data"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    os.environ.update(env)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start listening")


def _registry_context(handle):
    from lantide.agent.app_state import SessionFileAppState
    from lantide.agent.cancel import CancelToken
    from lantide.agent.conversation import Conversation
    from lantide.agent.ledger import Ledger
    from lantide.agent.tools.context import ToolContext

    ws = handle.workspace
    conv = Conversation.create(ws.conversations_dir, "bench-in-app")
    return ToolContext(
        workspace=ws,
        settings=handle.settings,
        conversation=conv,
        ledger=Ledger(ws.ledger_dir, conv.id),
        app=SessionFileAppState(ws),
        services=handle.services,
        cancel=CancelToken(),
        state="no_project",
        turn=1,
    )


def _last_server_ms(root: Path, client_id: str) -> float:
    from lantide.workspace.activity import activity_path
    from lantide.workspace.atomic import read_jsonl_tail

    [entry] = read_jsonl_tail(activity_path(root, client_id), 1)
    return float(entry["duration_ms"])


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) of process ``pid`` so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SMALL_CALLS = 200
SMALL_SQL = "SELECT 1 AS one"
PROTOCOL_VERSION = "2026-07-28"


class ThinClient:
    """A compliant MCP client in a dozen lines: one JSON-RPC POST per call, with the
    headers and ``_meta`` the SDK client sends at :data:`PROTOCOL_VERSION`."""

    def __init__(self, http, url: str):
        self.http, self.url, self._id = http, url, 0
        self.meta = {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "thin", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }

    async def call_tool(self, name: str, arguments: dict) -> dict:
        self._id += 1
        body = {
            "jsonrpc": "2.0",
            "id": self._id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": self.meta},
        }
        response = await self.http.post(
            self.url,
            content=json.dumps(body),
            headers={
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "MCP-Protocol-Version": PROTOCOL_VERSION,
                "Mcp-Method": "tools/call",
                "Mcp-Name": name,
            },
        )
        reply = json.loads(response.content)
        if response.status_code != 200 or "result" not in reply:
            raise RuntimeError(f"thin client: {response.status_code} {reply}")
        return reply["result"]


class LeanHttp:
    """An HTTP/1.1 client of a few lines on asyncio streams: one keep-alive connection,
    ``Content-Length`` or chunked bodies, nothing else (no pool, no redirects, no
    decompression).
    ``httpx`` alone takes 1.2-2.1 ms of CPU per call on this machine, as much as the
    server; outside agents are mostly not Python and do not use it (what their own HTTP
    stacks cost is not measured here). Same ``post(url, content=, headers=)`` as httpx,
    for :class:`ThinClient`."""

    def __init__(self, headers: dict[str, str] | None = None):
        self.headers = headers or {}
        self._conns: dict[tuple[str, int], tuple] = {}

    async def post(self, url: str, content: str | bytes, headers: dict | None = None):
        from types import SimpleNamespace
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        key = (parts.hostname, parts.port)
        body = content.encode() if isinstance(content, str) else content
        lines = [f"POST {parts.path or '/'} HTTP/1.1", f"Host: {parts.netloc}"]
        lines += [f"{k}: {v}" for k, v in {**self.headers, **(headers or {})}.items()]
        lines.append(f"Content-Length: {len(body)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        for attempt in (1, 2):  # the server closes a connection idle for 5 s: open another
            if key not in self._conns or self._conns[key][0].at_eof():
                self._conns[key] = await asyncio.open_connection(*key)
            reader, writer = self._conns[key]
            writer.write(request)
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                break
            except (asyncio.IncompleteReadError, ConnectionError):
                del self._conns[key]
                if attempt == 2:
                    raise
        status = int(head.split(b" ", 2)[1])
        fields = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip()
        if fields.get(b"transfer-encoding") == b"chunked":  # the bare app sends no length
            chunks = []
            while size := int((await reader.readuntil(b"\r\n"))[:-2], 16):
                chunks.append((await reader.readexactly(size + 2))[:-2])
            await reader.readuntil(b"\r\n")
            return SimpleNamespace(status_code=status, content=b"".join(chunks))
        length = int(fields.get(b"content-length", b"0"))
        return SimpleNamespace(status_code=status, content=await reader.readexactly(length))

    async def aclose(self) -> None:
        for _reader, writer in self._conns.values():
            writer.close()


async def _cpu_per_call(client, thin, plain, engine, local, server_pid, bare_pid, bare_url):
    """CPU per call (ms) of a small call on each side, summed over many calls: on an
    idle machine a call's wall time is about its CPU time, so this says what the
    protocol would cost there, whatever the load now.

    Each formal ``run_query`` appends a ledger step and the engine's cost grows with the
    ledger, so the sides run in a balanced order: SDK client, thin client, thin client,
    SDK client on the server's workspace, and as many engine calls in process on a
    workspace of its own; each side then averages the same ledger lengths."""
    args = {"sql": SMALL_SQL}
    half = SMALL_CALLS // 2
    cpu = {"client": 0.0, "server": 0.0, "thin_client": 0.0, "thin_server": 0.0}

    async def block(side: str, call, n: int) -> None:
        c0, s0 = time.process_time(), _proc_cpu(server_pid)
        for _ in range(n):
            await call("run_query", args)
        cpu[side] += time.process_time() - c0
        cpu[f"{side.replace('client', '')}server"] += _proc_cpu(server_pid) - s0

    await block("client", client.call_tool, half)
    await block("thin_client", thin.call_tool, half)
    await block("thin_client", thin.call_tool, half)
    await block("client", client.call_tool, half)
    c1 = time.process_time()
    for _ in range(4 * half):
        engine.call(local.client, "run_query", args, local.token)
    c2 = time.process_time()
    b0 = _proc_cpu(bare_pid)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "run_query", "arguments": args},
        }
    )
    for _ in range(SMALL_CALLS):
        await plain.post(bare_url, content=body)
    c3, b1 = time.process_time(), _proc_cpu(bare_pid)
    per = lambda x, n=2 * half: x * 1000 / n  # noqa: E731
    return {
        **{side: per(seconds) for side, seconds in cpu.items()},
        "engine": per(c2 - c1, 4 * half),
        "floor_client": per(c3 - c2, SMALL_CALLS),
        "floor_server": per(b1 - b0, SMALL_CALLS),
    }


def bench(
    sf: float, reps: int, env: dict
) -> tuple[list[dict], tuple[list[float], list[float]], list[str], dict[str, float]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from benchmarks.bench_query import tpch_data, workspace_for
    from lantide.agent.tools import default_registry
    from lantide.mcp.clients import ClientStore
    from lantide.mcp.engine import McpEngine

    data = tpch_data(sf)
    local_root = workspace_for(sf, data, "mcp-inproc")
    served_root = workspace_for(sf, data, "mcp-served")  # the server process locks it
    store = ClientStore()
    local = store.pair("bench-local", scope=str(local_root), mode="execute", expires_days=1)
    remote = store.pair("bench-http", scope=str(served_root), mode="execute", expires_days=1)
    engine = McpEngine(store=store, transport="stdio")
    handle = engine.open_workspace(local_root)
    ctx = _registry_context(handle)
    port, bare_port = _free_port(), _free_port()
    child_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen(
        [sys.executable, "-m", "lantide", "mcp", str(served_root), "--http", "--port", str(port)],
        env=child_env,
        cwd=str(REPO),
    )
    bare = subprocess.Popen([sys.executable, "-c", BARE_APP, str(bare_port)], env=child_env)
    queries = [(p.stem, p.read_text()) for p in sorted(QUERIES.glob("q*.sql"))]
    times = {
        q: {"registry": [], "engine": [], "http": [], "paired": [], "thin": [], "lean": []}
        for q, _ in queries
    }
    floor: list[float] = []
    lean_floor: list[float] = []
    failures: list[str] = []
    cpu: dict[str, float] = {}

    async def run_all() -> None:
        headers = {"Authorization": f"Bearer {remote.token}"}
        url = f"http://127.0.0.1:{port}/mcp"
        async with (
            httpx2.AsyncClient(headers=headers, timeout=300) as http,
            httpx2.AsyncClient(timeout=60) as plain,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            await client.call_tool("get_analysis_context", {})  # warm the session
            thin = ThinClient(http, url)
            await thin.call_tool("get_analysis_context", {})
            lean_http = LeanHttp(headers)
            lean = ThinClient(lean_http, url)
            await lean.call_tool("get_analysis_context", {})
            cpu.update(
                await _cpu_per_call(
                    client,
                    thin,
                    plain,
                    engine,
                    local,
                    server.pid,
                    bare.pid,
                    f"http://127.0.0.1:{bare_port}/",
                )
            )
            for rep in range(reps + 1):  # the first round warms DuckDB and is dropped
                for name, sql in queries:
                    args = {"sql": sql}
                    t0 = time.perf_counter()
                    out = default_registry().call("run_query", args, ctx)
                    t1 = time.perf_counter()
                    done = engine.call(local.client, "run_query", args, local.token)
                    t2 = time.perf_counter()
                    result = await client.call_tool("run_query", args)
                    t3 = time.perf_counter()
                    body = result.content[0].text if result.content else "{}"
                    sdk_server_ms = _last_server_ms(served_root, remote.client.id) if rep else 0
                    t6 = time.perf_counter()
                    thin_result = await thin.call_tool("run_query", args)
                    t7 = time.perf_counter()
                    t4 = time.perf_counter()
                    await plain.post(
                        f"http://127.0.0.1:{bare_port}/",
                        content=json.dumps({"jsonrpc": "2.0", "id": 1, "result": body}),
                    )
                    t5 = time.perf_counter()
                    thin_server_ms = _last_server_ms(served_root, remote.client.id) if rep else 0
                    t8 = time.perf_counter()
                    lean_result = await lean.call_tool("run_query", args)
                    t9 = time.perf_counter()
                    lean_server_ms = _last_server_ms(served_root, remote.client.id) if rep else 0
                    t10 = time.perf_counter()
                    await lean_http.post(
                        f"http://127.0.0.1:{bare_port}/",
                        content=json.dumps({"jsonrpc": "2.0", "id": 1, "result": body}),
                    )
                    t11 = time.perf_counter()
                    if not (out.ok and done.ok and not result.is_error):
                        failures.append(f"{name}: {out.result.get('error')}")
                    if thin_result.get("isError"):
                        failures.append(f"{name} (thin client): {thin_result}")
                    if lean_result.get("isError"):
                        failures.append(f"{name} (lean client): {lean_result}")
                    if rep:
                        times[name]["registry"].append((t1 - t0) * 1000)
                        times[name]["engine"].append((t2 - t1) * 1000)
                        times[name]["http"].append((t3 - t2) * 1000)
                        times[name]["paired"].append((t3 - t2) * 1000 - sdk_server_ms)
                        times[name]["thin"].append((t7 - t6) * 1000 - thin_server_ms)
                        times[name]["lean"].append((t9 - t8) * 1000 - lean_server_ms)
                        floor.append((t5 - t4) * 1000)
                        lean_floor.append((t11 - t10) * 1000)
            await lean_http.aclose()

    try:
        _wait_listening(port, server)
        _wait_listening(bare_port, bare)
        asyncio.run(run_all())
    finally:
        for proc in (server, bare):
            proc.terminate()
            proc.wait(timeout=30)
        engine.close()
    rows = []
    for name, _sql in queries:
        med = {k: statistics.median(v) for k, v in times[name].items()}
        rows.append({"query": name, **med, "over_app": med["http"] - med["registry"]})
    return rows, (floor, lean_floor), sorted(set(failures)), cpu


def main(argv: list[str]) -> int:
    env = _isolate()
    reps = int(_flag(argv, "--reps", 3 if "--quick" in argv else 5))
    sf = float(_flag(argv, "--sf", 0.01 if "--quick" in argv else 0.1))
    started = time.perf_counter()
    rows, (floor, lean_floor), failures, cpu = bench(sf, reps, env)
    print(
        f"### run_query over MCP (Streamable HTTP, server in its own process) against in "
        f"process, TPC-H SF {sf:g} (ms; medians of {reps} alternating runs)\n"
    )
    print(
        "| query | registry (in-app) | engine (MCP, in process) | HTTP (SDK client) | "
        "protocol overhead (paired) | thin client overhead (paired) | "
        "thin client on the lean HTTP client (paired) | HTTP - registry |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['query']} | {r['registry']:.1f} | {r['engine']:.1f} | {r['http']:.1f} | "
            f"{r['paired']:.2f} | {r['thin']:.2f} | {r['lean']:.2f} | {r['over_app']:.1f} |"
        )
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    sdk = sorted(r["paired"] for r in rows)
    thin = sorted(r["thin"] for r in rows)
    lean = sorted(r["lean"] for r in rows)
    floor_median = statistics.median(floor)
    lean_floor_median = statistics.median(lean_floor)
    print(
        "\n**Protocol overhead per call**, paired (the client's wall time of a call minus "
        "the server's `engine.call` time for that same request), medians over the "
        f"{len(rows)} queries of each query's median, same run:\n\n"
        "| client | overhead median | per-query medians | above the HTTP floor | "
        "target < 5 ms |\n|---|---|---|---|---|"
    )
    verdicts = {}
    lean_label = "lean: the thin client's POST on a lean HTTP client (asyncio streams)"
    for label, values, below in (
        ("thin client (one JSON-RPC POST, as outside agents send)", thin, floor_median),
        ("official `mcp` SDK client (Python)", sdk, floor_median),
        (lean_label, lean, lean_floor_median),
    ):
        median = statistics.median(values)
        verdicts[label] = median < 5
        print(
            f"| {label} | **{median:.2f} ms** | {values[0]:.2f}-{values[-1]:.2f} | "
            f"{median - below:+.2f} ms | {'met' if median < 5 else 'NOT met'} |"
        )
    print(
        f"| HTTP floor (a bare POST of the same size to a bare uvicorn app) | "
        f"{floor_median:.2f} ms | | | |"
    )
    print(
        f"| HTTP floor, lean client (the same bare POST on the lean HTTP client) | "
        f"{lean_floor_median:.2f} ms | | | |"
    )
    print(
        f"\nHTTP (SDK client) - registry (query noise included): median "
        f"{statistics.median(r['over_app'] for r in rows):.1f} ms. {os.cpu_count()} CPUs, "
        f"load average {load}; run took {time.perf_counter() - started:.0f} s."
    )
    protocol_cpu = cpu["client"] + cpu["server"] - cpu["engine"]
    thin_cpu = cpu["thin_client"] + cpu["thin_server"] - cpu["engine"]
    floor_cpu = cpu["floor_client"] + cpu["floor_server"]
    print(
        f"\nCPU per call of a small call ({SMALL_CALLS} x run_query {SMALL_SQL!r}; what a "
        f"call costs on an idle machine): MCP client {cpu['client']:.2f} ms + server "
        f"{cpu['server']:.2f} ms, of which the engine (measured in process) "
        f"{cpu['engine']:.2f} ms: protocol **{protocol_cpu:.2f} ms** per call; a bare "
        f"HTTP POST {floor_cpu:.2f} ms (client {cpu['floor_client']:.2f} + server "
        f"{cpu['floor_server']:.2f}); thin client {thin_cpu:.2f} ms (client "
        f"{cpu['thin_client']:.2f} + server {cpu['thin_server']:.2f} - engine)."
    )
    if failures:
        print("failed calls:", failures)
    return 0 if not failures and any(verdicts.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
