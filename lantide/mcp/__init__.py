"""Agent Integration: Lantide as an MCP server for outside agents (DESIGN.md section 8).

- :mod:`lantide.mcp.clients`: paired clients (scope, mode, expiry); tokens in the keyring,
  only their hashes in ``mcp_clients.json`` of the user config directory.
- :mod:`lantide.mcp.access`: the access modes and which tool needs which.
- :mod:`lantide.workspace.activity`: ``.lantide/activity/CLIENT.jsonl``, secrets removed.
- :mod:`lantide.mcp.engine`: one call of an outside agent through the agent's own tools
  (QEM, guard, confined DuckDB, ledger), with no MCP types in it.
- :mod:`lantide.mcp.server`: the MCP protocol (the official ``mcp`` SDK) over stdio and
  over Streamable HTTP on 127.0.0.1, every HTTP request carrying a paired client's token.

No Qt here: the desktop app starts :class:`lantide.mcp.server.HttpServer` with its
own engine.
"""
