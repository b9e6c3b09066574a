"""Agent Integration: Lantide as an MCP server for outside agents (DESIGN.md section 8).

- :mod:`lantide.mcp.clients`: paired clients (scope, mode, expiry); tokens in the keyring,
  only their hashes in ``mcp_clients.json`` of the user config directory.
- :mod:`lantide.mcp.access`: the access modes and which tool needs which.
- :mod:`lantide.workspace.activity`: ``.lantide/activity/CLIENT.jsonl``, secrets removed.
- :mod:`lantide.mcp.engine`: one call of an outside agent through the agent's own tools
  (QEM, guard, confined DuckDB, ledger), with no MCP types in it.
- :mod:`lantide.mcp.redact`: what leaves for an outside agent carries workspace-relative
  paths (others under the home folder as ``~/...``).
- :mod:`lantide.mcp.server`: the MCP protocol (the official ``mcp`` SDK's public server
  API) over Streamable HTTP on 127.0.0.1, every request carrying a paired client's token;
  :mod:`lantide.mcp.stdio`: the same server over stdin/stdout.

No Qt here: the desktop app starts :class:`lantide.mcp.server.HttpServer` with its
own engine.
"""
