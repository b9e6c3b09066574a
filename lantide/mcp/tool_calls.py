"""The Streamable HTTP entry's common case, ``tools/call`` at the 2026-07-28 protocol, served
with the SDK's own checks and types but without its per-request machinery.

A request at that protocol is one POST: one JSON-RPC request in, one response out. The
SDK's entry (``handle_modern_request``) runs a ladder of checks and then ``serve_one``,
which builds a connection, a dispatch context, a runner, a session and a request context
per request, validates the params twice (the version's surface, then the handler's type),
dumps the result twice and tears down an exit stack under a shielded cancel scope: about
half of the server's CPU per call, for nothing a tool call of Lantide's uses (no
notifications, no progress, no server-initiated requests, no middleware, no cache hints).

:class:`ToolCallEntry` runs the same ladder with the SDK's own functions, in the SDK's
order (Content-Type, Host and Origin; Accept; JSON; the JSON-RPC envelope; duplicated and
mismatched routing headers; the per-version params surface), calls Lantide's tool handler
with the params type the SDK would give it, and shapes the answer as the SDK does (the
per-version result sieve, ``resultType``, the ``serverInfo`` stamp, the table-mapped HTTP
status of an error). Anything else, and any request a check would refuse, goes to the
SDK's own entry unchanged (the body read here is handed on), so every refusal is the
SDK's own answer. Only a request that passed every check reaches the handler, and its
errors are mapped by the SDK's ``modern_error_data``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Message, Receive, Scope, Send

ToolHandler = Callable[["types.CallToolRequestParams"], Awaitable[dict[str, Any]]]

METHOD = "tools/call"
_JSON_HEADERS = (b"content-type", b"application/json")


class ToolCallEntry:
    """ASGI app for the MCP path: ``tools/call`` requests at a modern protocol version that
    pass every check are served here; every other request goes to the SDK's session
    manager (``fallback``)."""

    def __init__(
        self,
        server: Server[Any],
        manager: StreamableHTTPSessionManager,
        handler: ToolHandler,
    ):
        from mcp.server.transport_security import TransportSecurityMiddleware
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        self.server = server
        self.manager = manager
        self.handler = handler
        self.fallback = manager.handle_request
        self.security = TransportSecurityMiddleware(manager.security_settings)
        self.modern = frozenset(v.encode("latin-1") for v in MODERN_PROTOCOL_VERSIONS)

    def _eligible(self, scope: Scope) -> bool:
        if scope["method"] != "POST" or not self.manager.json_response:
            return False
        if self.server.middleware or self.server.cache_hints.get(METHOD) is not None:
            return False  # what the SDK's runner would apply; not on this path
        version = None
        for name, value in scope["headers"]:
            if name == b"mcp-protocol-version":
                if version is not None:
                    return False  # the SDK's check names the duplicate
                version = value
            elif name == b"content-length" and not (
                value.isdigit() and int(value) <= self.manager.max_request_body_size
            ):
                return False  # the SDK's limit answers 413 (and a malformed length its way)
        return version in self.modern

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._eligible(scope):
            await self.fallback(scope, receive, send)
            return
        body, more = await _read_body(receive, self.manager.max_request_body_size)
        if more is not None:  # too large: the SDK answers 413 after reading the rest
            await self.fallback(scope, _replay(body, more, receive), send)
            return
        answer = await self._answer(scope, receive, body)
        if answer is None:
            await self.fallback(scope, _replay(body, None, receive), send)
            return
        status, payload = answer
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-length", str(len(payload)).encode()), _JSON_HEADERS],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    async def _answer(
        self, scope: Scope, receive: Receive, body: bytes
    ) -> tuple[int, bytes] | None:
        """(status, JSON body) of a call that passed every check, else None."""
        import mcp_types as types
        from mcp.server.streamable_http import check_accept_headers
        from mcp.shared.inbound import (
            InboundLadderRejection,
            classify_inbound_request,
            find_duplicated_routing_header,
        )
        from mcp_types import JSONRPCRequest
        from mcp_types import methods as _methods
        from pydantic import ValidationError
        from starlette.requests import Request

        request = Request(scope, receive)
        if await self.security.validate_request(request, is_post=True) is not None:
            return None
        has_json, _has_sse = check_accept_headers(request)
        if not has_json:
            return None
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if not isinstance(decoded, dict) or "id" not in decoded or decoded.get("method") != METHOD:
            return None
        try:
            req = JSONRPCRequest.model_validate(decoded)
        except ValidationError:
            return None
        if find_duplicated_routing_header(request.headers.items()) is not None:
            return None
        verdict = classify_inbound_request(decoded, headers=dict(request.headers))
        if isinstance(verdict, InboundLadderRejection):
            return None
        params = req.params or {}
        name = params.get("name")
        if not isinstance(name, str) or self.server.get_tool_input_schema is None:
            return None
        if self.server.get_tool_input_schema(name) is not None:
            return None  # the SDK compares its Mcp-Param-* headers with the arguments
        version = verdict.protocol_version
        try:
            _methods.validate_client_request(METHOD, version, params)
            typed = types.CallToolRequestParams.model_validate(params, by_name=False)
        except (KeyError, ValueError):  # ValidationError is a ValueError
            return None
        return await self._run(req.id, version, typed)

    async def _run(
        self, request_id: Any, version: str, params: types.CallToolRequestParams
    ) -> tuple[int, bytes]:
        from mcp.server.runner import modern_error_data
        from mcp.shared.exceptions import MCPError
        from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS
        from mcp_types import INTERNAL_ERROR, SERVER_INFO_META_KEY
        from mcp_types import methods as _methods
        from pydantic import ValidationError

        try:
            result = await self.handler(params)
            try:
                result = _methods.serialize_server_result(METHOD, version, dict(result))
            except ValidationError:
                raise MCPError(INTERNAL_ERROR, "Handler returned an invalid result") from None
        except Exception as exc:
            error = modern_error_data(exc).model_dump(mode="json", by_alias=True, exclude_none=True)
            reply = {"jsonrpc": "2.0", "id": request_id, "error": error}
            return ERROR_CODE_HTTP_STATUS.get(error["code"], 200), _dumps(reply)
        if result.get("resultType") is None:
            result["resultType"] = "complete"
        meta = result.get("_meta")
        if meta is None or (isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None):
            result["_meta"] = {**(meta or {}), SERVER_INFO_META_KEY: self.server.server_info_stamp}
        return 200, _dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def _dumps(reply: dict[str, Any]) -> bytes:
    return json.dumps(reply, separators=(",", ":")).encode()


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, Message | None]:
    """The request's body; past ``limit`` bytes, what was read and the message that
    crossed it (the rest is left unread)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message
        chunk = message.get("body", b"")
        size += len(chunk)
        chunks.append(chunk)
        if size > limit:
            return b"".join(chunks), {"type": "http.request", "body": b"", "more_body": True}
        if not message.get("more_body", False):
            return b"".join(chunks), None


def _replay(body: bytes, pending: Message | None, receive: Receive) -> Receive:
    """``receive`` for the SDK's entry: the body already read, then the rest as it comes."""
    queue: list[Message] = [
        {"type": "http.request", "body": body, "more_body": pending is not None}
    ]
    if pending is not None and pending["type"] != "http.request":
        queue = [{"type": "http.request", "body": body, "more_body": False}, pending]

    async def replayed() -> Message:
        return queue.pop(0) if queue else await receive()

    return replayed
