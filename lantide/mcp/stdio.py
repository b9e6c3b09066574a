"""MCP over stdin/stdout: the SDK's stdio transport, with the JSON-RPC answers it leaves
out.

The SDK's stdio reader hands a line it cannot read to the server as an exception, and the
server drops it: the client waits for an answer that never comes. JSON-RPC 2.0 (and the
Streamable HTTP transport, which answers both with HTTP 400) wants a reply with ``id``
null: ``-32700`` for a line that is not JSON, ``-32600`` for JSON that is not a request,
notification or response (no ``method``, a batch, a ``method`` that is not a string).
:func:`answer_unreadable` sits between the transport and the server and sends those
replies; every readable message passes through unchanged.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lantide.mcp.clients import PairedClient
from lantide.mcp.server import TOKEN_ENV, TokenRefused, build_server

if TYPE_CHECKING:
    from anyio.abc import ObjectReceiveStream, ObjectSendStream
    from mcp.shared.message import SessionMessage

    from lantide.mcp.engine import McpEngine

PARSE_ERROR_MESSAGE = "Parse error"
INVALID_REQUEST_MESSAGE = "Invalid Request: not a single JSON-RPC request or notification object"


def error_reply(item: Exception) -> SessionMessage | None:
    """The JSON-RPC error for a line the transport could not read (None for a blank
    line between messages, which is no message at all)."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    code, message = types.PARSE_ERROR, PARSE_ERROR_MESSAGE
    if isinstance(item, ValidationError):
        errors = item.errors()
        invalid_json = [e for e in errors if e["type"] == "json_invalid"]
        if invalid_json:
            raw = invalid_json[0].get("input")
            if isinstance(raw, str) and not raw.strip():
                return None
        elif errors:  # JSON, but not a message: no method, a batch, a wrong field type
            code, message = types.INVALID_REQUEST, INVALID_REQUEST_MESSAGE
    reply = types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )
    return SessionMessage(reply)


async def answer_unreadable(
    source: ObjectReceiveStream[SessionMessage | Exception],
    to_server: ObjectSendStream[SessionMessage | Exception],
    to_client: ObjectSendStream[SessionMessage],
) -> None:
    """Pass every message from ``source`` to the server; answer each unreadable line to
    the client instead. Closes ``to_server`` when ``source`` ends (the server then ends)."""
    async with to_server:
        async for item in source:
            if isinstance(item, Exception):
                reply = error_reply(item)
                if reply is not None:
                    await to_client.send(reply)
            else:
                await to_server.send(item)


def serve_stdio(engine: McpEngine, token: str | None = None) -> None:
    """Serve one client on stdin/stdout until it closes. Its token comes from the
    environment and is checked before serving and again on every call."""
    import anyio
    from mcp import stdio_server
    from mcp.shared.message import SessionMessage

    given = token if token is not None else os.environ.get(TOKEN_ENV)
    client, why = engine.store.verify(given)
    if client is None or given is None:
        raise TokenRefused(
            f"{TOKEN_ENV}: {why}",
            hint="Set it to the token shown by lantide mcp pair (Settings > Agent Integration).",
        )

    verified: str = given

    def caller() -> tuple[PairedClient, str]:
        current, reason = engine.store.verify(verified)
        if current is None:
            raise TokenRefused(
                f"the client's token is no longer valid: {reason}", hint="Pair the client again."
            )
        return current, verified

    server = build_server(engine, caller)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](
                0
            )
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_unreadable, read_stream, to_server, write_stream)
                await server.run(server_reads, write_stream, server.create_initialization_options())

    anyio.run(main)
