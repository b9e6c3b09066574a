"""The configuration an analyst pastes into an outside agent, in that client's own format.

HTTP (the running desktop app, or ``lantide mcp WS --http``) for Claude Code, Codex and
Cursor; ``other`` gets both the HTTP and the stdio form. The text holds the token: it is
shown to the analyst and copied to the clipboard, never written to a file by Lantide.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class ClientConfig:
    where: str  # the file or place it goes
    text: str  # what to paste


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def client_config(
    kind: str, token: str, url: str, workspace: str | None = None, server_name: str = "lantide"
) -> ClientConfig:
    header = f"Bearer {token}"
    if kind == "claude-code":
        text = (
            f"claude mcp add --scope user --transport http {server_name} {url} "
            f"--header {shlex.quote('Authorization: ' + header)}"
        )
        return ClientConfig("a terminal (Claude Code keeps it in ~/.claude.json)", text)
    if kind == "codex":
        text = (
            f"[mcp_servers.{server_name}]\n"
            f"url = {_toml_string(url)}\n"
            f"http_headers = {{ Authorization = {_toml_string(header)} }}\n"
        )
        return ClientConfig("~/.codex/config.toml", text)
    if kind == "cursor":
        # three lines (it is read in a small box), still one JSON object to merge
        text = (
            f'{{"mcpServers": {{{json.dumps(server_name)}: {{\n'
            f'  "url": {json.dumps(url)},\n'
            f'  "headers": {{"Authorization": {json.dumps(header)}}}\n}}}}}}'
        )
        return ClientConfig("~/.cursor/mcp.json (or .cursor/mcp.json in a project)", text)
    stdio_args = ["mcp"] + ([workspace] if workspace else []) + ["--stdio"]
    text = json.dumps(
        {
            "mcpServers": {
                server_name: {"type": "http", "url": url, "headers": {"Authorization": header}},
                f"{server_name}-stdio": {
                    "command": "lantide",
                    "args": stdio_args,
                    "env": {"LANTIDE_MCP_TOKEN": token},
                },
            }
        },
        indent=2,
    )
    return ClientConfig(
        "your client's MCP configuration (HTTP while the Lantide app runs; stdio when it does not)",
        text,
    )
