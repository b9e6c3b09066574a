"""The MCP server inside the desktop app: Streamable HTTP on 127.0.0.1, in a background
thread, over the app's own engine (its workspace and its open DuckDB), so outside agents
query the running app without a lock error.

It runs while at least one paired client is active (nothing to serve otherwise, and no
port is taken for nothing); pairing a client in Settings starts it. Every call an outside
agent makes is passed to the UI thread (:attr:`McpHost.sig_call_recorded`): the ledger
panel shows its steps live and the Activity panel its line.
"""

from __future__ import annotations

import contextlib
import logging
import os

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)
PORT_ENV = "LANTIDE_MCP_PORT"


def _start(context, services, port: int, listener):
    """In a worker: the engine over the app's services, and the server listening."""
    from lantide.agent.services import EngineServices
    from lantide.mcp.engine import McpEngine
    from lantide.mcp.server import HttpServer

    engine = McpEngine(
        workspace=services.workspace,
        settings=services.settings,
        services=EngineServices(
            services.workspace, services.settings, query_service=services.query
        ),
        transport="http",
    )
    engine.on_call = listener
    return HttpServer(engine, port=port).start()


def _active_clients(context) -> int:
    from lantide.mcp.clients import ClientStore

    return sum(1 for c in ClientStore().clients() if c.status == "active")


class McpHost(QObject):
    # an outside agent's call was recorded: (activity entry, ledger steps it wrote)
    sig_call_recorded = Signal(dict, list)
    # the server started (its URL) or stopped / failed ("" and why)
    sig_state_changed = Signal(str, str)

    def __init__(self, services, port: int | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.services = services
        env = os.environ.get(PORT_ENV, "").strip()
        self.port = port if port is not None else int(env) if env.isdigit() else None
        self.server = None
        self.problem = ""
        self.paired_clients: int | None = None  # active paired clients, once read
        self._starting = False
        self._closed = False
        self.sig_call_recorded.connect(self._forward)

    @property
    def url(self) -> str:
        return self.server.url if self.server is not None else ""

    def start_if_paired(self) -> None:
        """Start once the query service is open, if any client is paired and active."""
        if self.server is not None or self._starting or self._closed:
            return
        self.services.workers.submit(
            _active_clients,
            on_result=self._paired_count,
            on_error=lambda exc: None,
            name="read MCP clients",
        )

    def _paired_count(self, count: int) -> None:
        self.paired_clients = count
        if count and self.server is None and not self._closed:
            self.services.when_query_ready(lambda _query: self.start())

    def start(self) -> None:
        """Start serving; only once the app's query service is open (the server must use
        the app's DuckDB, never open a second one)."""
        from lantide.mcp.server import DEFAULT_PORT

        if self.server is not None or self._starting or self._closed or self.services.query is None:
            return
        self._starting = True
        port = DEFAULT_PORT if self.port is None else self.port
        self.services.workers.submit(
            _start,
            self.services,
            port,
            self._listener,
            on_result=self._started,
            on_error=self._failed,
            name="start the MCP server",
        )

    def _listener(self, entry: dict, steps: list) -> None:
        """On the server's thread: queue the call to the UI thread."""
        if not self._closed:
            with contextlib.suppress(RuntimeError):  # the app is closing
                self.sig_call_recorded.emit(entry, steps)

    def _started(self, server) -> None:
        self._starting = False
        if self._closed:
            server.stop()
            return
        self.server, self.problem = server, ""
        self.sig_state_changed.emit(server.url, "")

    def _failed(self, exc: BaseException) -> None:
        self._starting = False
        self.problem = getattr(exc, "message", None) or str(exc)
        log.warning("the MCP server did not start: %s", self.problem)
        self.sig_state_changed.emit("", self.problem)

    def _forward(self, entry: dict, steps: list) -> None:
        """The ledger panel learns of the steps as of the in-app agent's."""
        for step in steps:
            self.services.sig_step_recorded.emit(dict(step))
        conversation = steps[0].get("conversation_id") if steps else None
        if conversation:
            self.services.sig_conversation_titled.emit(
                conversation, f"{entry.get('client_name') or entry.get('client')} (MCP)"
            )

    def stop(self) -> None:
        self._closed = True
        server, self.server = self.server, None
        if server is not None:
            server.stop()
            server.engine.close()
        self.sig_state_changed.emit("", "stopped")
