"""The MCP protocol side: the official ``mcp`` SDK's low-level server over stdio and over
Streamable HTTP bound to 127.0.0.1.

Who is calling is decided per call, never per connection: over HTTP the ASGI guard
(:class:`TokenGuard`) checks every request's bearer token before anything runs (401
otherwise) and hands the verified client to the handlers; over stdio the token comes from
the environment (``LANTIDE_MCP_TOKEN``) and is checked again on every call, so revoking or
expiring a client stops it at its next call. A call outside the client's mode is a
protocol error (code :data:`MODE_REQUIRED_CODE`) whose data names the mode it needs; an
unknown tool and a pagination cursor the server never handed out are invalid params
(-32602), as the MCP specification has it; a tool's own failure (a refused query) is a
tool result with ``isError`` and the same error object the in-app agent gets. Every call
goes through the SDK's public server API (``Server``, ``streamable_http_app``,
``stdio_server``); unreadable stdio lines are answered in :mod:`lantide.mcp.stdio`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import importlib.util
import ipaddress
import json
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from lantide.errors import LantideError
from lantide.mcp.access import ModeRefused
from lantide.mcp.clients import PairedClient
from lantide.mcp.engine import CallResult, McpEngine, UnknownTool

if TYPE_CHECKING:
    import mcp_types as types
    import uvicorn
    from mcp.server import Server, ServerRequestContext
    from starlette.types import ASGIApp, Receive, Scope, Send

    Ctx = ServerRequestContext[Any]

TOKEN_ENV = "LANTIDE_MCP_TOKEN"
DEFAULT_PORT = 47615
MCP_PATH = "/mcp"
MODE_REQUIRED_CODE = -32003  # JSON-RPC server error range: the call needs another mode
UNAUTHORIZED_CODE = -32001
PLAN_URI = "lantide://project/{project}/plan"
REPORT_URI = "lantide://project/{project}/report"

ENGINE_THREADS = 8  # engine calls run at once (each on its own DuckDB cursor)
_T = TypeVar("_T")

# the verified client and its token for the call being handled (set by the transport)
_caller: contextvars.ContextVar[tuple[PairedClient, str] | None] = contextvars.ContextVar(
    "lantide_mcp_caller", default=None
)


class NotLoopbackError(LantideError):
    code = "NOT_LOOPBACK"


class TokenRefused(LantideError):
    code = "TOKEN_REFUSED"


def check_loopback(host: str) -> str:
    """``host`` when it is a loopback address; anything else is refused before binding."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise NotLoopbackError(
        f"refusing to serve MCP on {host!r}: only the loopback address 127.0.0.1 is allowed",
        hint="Outside agents connect on this machine; leave out --host or use 127.0.0.1.",
    )


class EngineThreads:
    """The threads engine calls run on, so the event loop never waits for a query.

    A job goes to the threads through one queue and its result comes back to the loop with
    ``call_soon_threadsafe``: about 40 µs of CPU per call less than
    ``loop.run_in_executor`` on a ``ThreadPoolExecutor`` (its future chaining, locks and
    thread-count check), itself a fraction of ``anyio.to_thread.run_sync``."""

    def __init__(self, workers: int = ENGINE_THREADS):
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._workers = workers
        self._threads: list[threading.Thread] = []
        self._start_lock = threading.Lock()
        self._closed = False

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        if self._closed:
            raise RuntimeError("the MCP server's engine threads are closed")
        if not self._threads:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return await future

    def _start(self) -> None:
        with self._start_lock:
            if self._threads:
                return
            threads = [
                threading.Thread(target=self._work, name=f"lantide-mcp_{n}", daemon=True)
                for n in range(self._workers)
            ]
            for thread in threads:
                thread.start()
            self._threads = threads

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, future, fn, args = job
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # handed to the awaiting request, as an executor does
                result, error = None, exc
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(_settle, future, result, error)
            del job, future, result, error  # hold nothing while waiting for the next job

    def close(self) -> None:
        """Drop the calls not started yet (their requests are gone with the server) and
        let each thread end after the call it runs now."""
        self._closed = True
        with contextlib.suppress(queue.Empty):
            while (job := self._jobs.get_nowait()) is not None:
                with contextlib.suppress(RuntimeError):  # its loop may be closed already
                    job[0].call_soon_threadsafe(job[1].cancel)
        with self._start_lock:
            for _ in self._threads:
                self._jobs.put(None)


_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():  # the request went away; the engine call finished anyway
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


Caller = Callable[[], tuple[PairedClient, str]]


def _who(caller: Caller | None) -> tuple[PairedClient, str]:
    from mcp import MCPError

    try:
        return (caller or current_caller)()
    except TokenRefused as exc:
        raise MCPError(UNAUTHORIZED_CODE, exc.message, exc.to_dict()) from None


def call_result(outcome: CallResult) -> types.CallToolResult:
    """A tool's outcome as the SDK's result: its JSON as text and as structured content
    (one JSON round trip, so both hold the same plain values), ``isError`` for a tool's
    own failure."""
    import mcp_types as types

    text = json.dumps(outcome.result, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=json.loads(text),
        is_error=not outcome.ok,
    )


def _one_page(params: types.PaginatedRequestParams | None) -> None:
    """Every list is answered on one page, so no cursor was ever handed out: any cursor a
    client sends is not one of ours (the specification: invalid params)."""
    import mcp_types as types
    from mcp import MCPError

    cursor = params.cursor if params is not None else None
    if cursor is not None:
        raise MCPError(
            types.INVALID_PARAMS,
            f"Invalid cursor {cursor[:80]!r}: this server answers every list on one page",
            {"cursor": cursor[:200], "hint": "Send the list request without a cursor."},
        )


def build_server(
    engine: McpEngine, caller: Caller | None = None, threads: EngineThreads | None = None
) -> Server[Any]:
    """The low-level MCP server over ``engine``. ``caller()`` returns the (client, token)
    of the call being handled, or raises :class:`TokenRefused`. Engine calls run on
    ``threads`` (its own pool when None)."""
    import mcp_types as types
    from mcp import MCPError
    from mcp.server import Server

    from lantide import __version__
    from lantide.mcp.extra_tools import PLAYBOOK_URI, playbook_text

    pool = threads or EngineThreads()

    async def list_tools(
        ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        client, _token = _who(caller)
        _one_page(params)
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t["name"], description=t["description"], input_schema=t["input_schema"]
                )
                for t in engine.list_tools(client)
            ]
        )

    async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        client, token = _who(caller)
        try:
            outcome = await pool.run(
                engine.call, client, params.name, dict(params.arguments or {}), token
            )
        except ModeRefused as exc:
            raise MCPError(MODE_REQUIRED_CODE, exc.message, exc.to_dict()) from None
        except UnknownTool as exc:  # the specification's tools/call error handling
            raise MCPError(
                types.INVALID_PARAMS, f"Unknown tool: {params.name[:100]}", exc.to_dict()
            ) from None
        return call_result(outcome)

    def _projects(client: PairedClient) -> list[tuple[str, str]]:
        try:
            ws = engine.workspace_for(client).workspace
        except LantideError:
            return []
        return [(p.dirname, p.name) for p in ws.list_projects()]

    async def list_resources(
        ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        client, _token = _who(caller)
        _one_page(params)
        resources = [
            types.Resource(
                uri=PLAYBOOK_URI,
                name="playbook",
                title="How to work in Lantide",
                mime_type="text/markdown",
            )
        ]
        for dirname, name in await pool.run(_projects, client):
            resources.append(
                types.Resource(
                    uri=PLAN_URI.format(project=dirname),
                    name=f"{dirname}-plan",
                    title=f"Plan: {name}",
                    mime_type="text/markdown",
                )
            )
            resources.append(
                types.Resource(
                    uri=REPORT_URI.format(project=dirname),
                    name=f"{dirname}-report",
                    title=f"Report: {name}",
                    mime_type="text/markdown",
                )
            )
        return types.ListResourcesResult(resources=resources)

    def _document(client: PairedClient, token: str, uri: str) -> str:
        if uri == PLAYBOOK_URI:
            return playbook_text()
        for kind, pattern in (("plan", PLAN_URI), ("report", REPORT_URI)):
            prefix, suffix = pattern.split("{project}")
            if uri.startswith(prefix) and uri.endswith(suffix):
                project = uri[len(prefix) : -len(suffix)]
                outcome = engine.call(client, f"read_{kind}", {"project": project}, token)
                if not outcome.ok:
                    raise MCPError(
                        types.INVALID_PARAMS, outcome.result.get("message", uri), outcome.result
                    )
                return str(outcome.result.get("text", ""))
        raise MCPError(types.INVALID_PARAMS, f"no resource {uri}", {"uri": uri})

    async def read_resource(
        ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        client, token = _who(caller)
        uri = str(params.uri)
        text = await pool.run(_document, client, token, uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type="text/markdown")]
        )

    server = Server(
        "lantide",
        version=__version__,
        instructions=f"Lantide data workbench. Call get_analysis_context first and "
        f"read {PLAYBOOK_URI}.",
        # the SDK checks Mcp-Param headers against this; without it, it runs the
        # whole tools/list handler on every call
        get_tool_input_schema=header_schema_of,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    return server


@functools.cache
def header_schema_of(name: str) -> dict[str, object] | None:
    """The input schema of tool ``name`` when it declares an ``x-mcp-header`` (an argument
    mirrored in an ``Mcp-Param-*`` header), else None. The SDK checks a call's headers
    against the schema it gets here; a schema without any declaration can fail no check,
    so the SDK is spared walking it on every call."""
    from lantide.mcp.extra_tools import schema_of

    schema = schema_of(name)
    return schema if schema is not None and _declares_header(schema) else None


def _declares_header(node: object) -> bool:
    if isinstance(node, dict):
        return "x-mcp-header" in node or any(_declares_header(v) for v in node.values())
    if isinstance(node, list):
        return any(_declares_header(v) for v in node)
    return False


def current_caller() -> tuple[PairedClient, str]:
    found = _caller.get()
    if found is None:
        raise TokenRefused(
            "this call carries no verified Lantide token",
            hint="Send Authorization: Bearer TOKEN (lantide mcp pair).",
        )
    return found


# -- Streamable HTTP --------------------------------------------------------------------


class TokenGuard:
    """ASGI middleware: a request without a valid, unexpired, unrevoked token gets 401 and
    reaches nothing; a valid one runs with its client set for the handlers."""

    def __init__(self, app: ASGIApp, engine: McpEngine):
        self.app = app
        self.engine = engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        client, why = self.engine.store.verify(token or None)
        if client is None:
            body = json.dumps({"error": "unauthorized", "message": why}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="lantide"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        reset = _caller.set((client, token))
        try:
            await self.app(scope, receive, send)
        finally:
            _caller.reset(reset)


def http_app(
    engine: McpEngine,
    *,
    json_response: bool = True,
    stateless: bool = False,
    threads: EngineThreads | None = None,
) -> TokenGuard:
    """The ASGI app: the SDK's Streamable HTTP app behind :class:`TokenGuard`."""
    server = build_server(engine, threads=threads)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=json_response,
        stateless_http=stateless,
        host="127.0.0.1",
    )
    return TokenGuard(app, engine)


class HttpServer:
    """uvicorn on 127.0.0.1 in a background thread (the desktop app's, or the command's)."""

    def __init__(
        self,
        engine: McpEngine,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
    ):
        self.host = check_loopback(host)  # before anything is bound
        self.port = port
        self.engine = engine
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._threads: EngineThreads | None = None
        self.error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{MCP_PATH}"

    def _run(self, server: uvicorn.Server) -> None:
        try:
            server.run()
        except BaseException as exc:  # reported by start(), not lost in the thread
            self.error = exc
        finally:
            self._started.set()

    def start(self, timeout: float = 15.0) -> HttpServer:
        import uvicorn

        self._threads = EngineThreads()
        config = uvicorn.Config(
            http_app(self.engine, threads=self._threads),
            # httptools' C parser: 0.4-0.5 ms of CPU per request less than h11's (pure
            # Python); h11 only where a build left it out
            http="httptools" if importlib.util.find_spec("httptools") else "h11",
            host=self.host,
            port=self.port,
            log_level="warning",
            lifespan="on",
            access_log=False,
            # loopback only, no proxy in front: X-Forwarded-* headers are not read (a
            # middleware less on every request)
            proxy_headers=False,
        )
        server = self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._run, args=(server,), name="lantide-mcp-http", daemon=True
        )
        self._thread.start()
        while not self._started.wait(0.02):
            if server.started:
                break
            timeout -= 0.02
            if timeout <= 0:
                break
        if not server.started:
            self.stop()
            raise LantideError(
                f"the MCP server could not listen on {self.host}:{self.port}"
                + (f" ({self.error})" if self.error else ""),
                hint="Another program may use the port; pass --port N.",
                code="MCP_HTTP_FAILED",
            )
        sockets = [s for srv in server.servers for s in srv.sockets]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._threads is not None:
            self._threads.close()
