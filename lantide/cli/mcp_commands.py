"""``lantide mcp``: the MCP server for outside agents, and its paired clients.

- ``lantide mcp [WORKSPACE] [--stdio | --http [--port N]]`` serves (stdio by default; the
  token comes from ``LANTIDE_MCP_TOKEN``). Over HTTP only 127.0.0.1 is bound.
- ``lantide mcp pair [WORKSPACE] --client KIND --mode MODE --expires 30d`` pairs a client
  (no WORKSPACE: all workspaces) and prints its token once with the configuration to paste.
- ``lantide mcp list`` and ``lantide mcp revoke CLIENT``.

One parser for all of them (argparse cannot mix an optional WORKSPACE with sub-commands):
a workspace folder literally named ``pair``, ``list`` or ``revoke`` is given as ``./pair``.
"""

from __future__ import annotations

import argparse
import sys

from lantide.cli.common import Subparsers, add_command
from lantide.cli.output import print_json, print_table
from lantide.errors import LantideError, UsageError

ACTIONS = ("pair", "list", "revoke")


def register(subparsers: Subparsers) -> None:
    p = add_command(
        subparsers,
        "mcp",
        "the MCP server for outside agents (Claude Code, Codex, Cursor); "
        "mcp pair/list/revoke manage clients",
        run_mcp,
    )
    p.add_argument(
        "first",
        nargs="?",
        metavar="WORKSPACE|pair|list|revoke",
        help="the workspace to serve, or pair / list / revoke",
    )
    p.add_argument(
        "second",
        nargs="?",
        metavar="ARG",
        help="pair: the workspace of the client's scope (none: all workspaces); "
        "revoke: the client id",
    )
    transport = p.add_mutually_exclusive_group()
    transport.add_argument(
        "--stdio", action="store_true", help="serve one client on stdin/stdout (the default)"
    )
    transport.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1")
    p.add_argument("--port", type=int, default=None, help="HTTP port (default 47615)")
    p.add_argument("--host", default="127.0.0.1", help="only a loopback address is accepted")
    p.add_argument(
        "--client",
        default="other",
        choices=["claude-code", "codex", "cursor", "other"],
        help="pair: which client (decides the configuration shown)",
    )
    p.add_argument("--name", help="pair: the client's name (default: the kind's name)")
    p.add_argument(
        "--mode",
        default="observe",
        choices=["observe", "execute", "admin"],
        help="pair: the access mode (default observe)",
    )
    p.add_argument(
        "--expires",
        default="30d",
        help="pair: 30d, 12h or never (default 30d; from 1h to at most 365d)",
    )
    p.add_argument("--json", action="store_true", help="pair/list/revoke: print JSON")


def run_mcp(args: argparse.Namespace) -> int:
    if args.first in ACTIONS:
        return {"pair": run_pair, "list": run_list, "revoke": run_revoke}[args.first](args)
    if args.second:
        raise UsageError(
            f"unexpected argument {args.second!r}",
            hint="lantide mcp [WORKSPACE] [--stdio | --http [--port N]]",
        )
    return run_serve(args)


def run_pair(args: argparse.Namespace) -> int:
    from lantide.mcp.client_config import client_config
    from lantide.mcp.clients import ClientStore, parse_expiry
    from lantide.mcp.server import DEFAULT_PORT, MCP_PATH

    scope = args.second or "all"
    pairing = ClientStore().pair(
        args.name or "",
        kind=args.client,
        scope=scope,
        mode=args.mode,
        expires_days=parse_expiry(args.expires),
    )
    url = f"http://127.0.0.1:{args.port or DEFAULT_PORT}{MCP_PATH}"
    config = client_config(
        args.client,
        pairing.token,
        url,
        None if pairing.client.all_workspaces else pairing.client.scope,
    )
    if args.json:
        print_json(
            {
                "client": pairing.client.public(),
                "token": pairing.token,
                "in_keyring": pairing.in_keyring,
                "config": {"where": config.where, "text": config.text},
            }
        )
        return 0
    c = pairing.client
    print(
        f"Paired {c.name} ({c.id}): mode {c.mode}, scope {c.scope}, "
        f"expires {c.expires_at or 'never'}."
    )
    print(
        f"Token (shown once{'; kept in the keyring' if pairing.in_keyring else ''}): "
        f"{pairing.token}"
    )
    if not pairing.in_keyring:
        print(
            "No system keyring: Lantide cannot show this token again; keep it now.", file=sys.stderr
        )
    print(f"\nPaste into {config.where}:\n\n{config.text}")
    print(
        "\nIt connects while the Lantide app runs (or lantide mcp WORKSPACE --http); "
        "--client other also shows the stdio form.",
        file=sys.stderr,
    )
    return 0


def run_list(args: argparse.Namespace) -> int:
    from lantide.mcp.clients import FIX_HINT, ClientStore

    store = ClientStore()
    clients = [c.public() for c in store.clients()]
    problems = store.problems()
    if args.json:
        print_json({"clients": clients, "problems": [p.to_dict() for p in problems]})
        return 0
    for problem in problems:  # the other clients are listed (and keep working)
        print(
            f"lantide: warning: {problem.message}; this client cannot connect. Hint: {FIX_HINT}",
            file=sys.stderr,
        )
    if not clients:
        print(
            "No paired clients. Pair one with: lantide mcp pair [WORKSPACE] --client "
            "claude-code --mode execute"
        )
    else:
        print_table(
            ["id", "name", "mode", "scope", "status", "expires", "last used"],
            [
                [
                    c["id"],
                    c["name"],
                    c["mode"],
                    c["scope"],
                    c["status"],
                    c["expires_at"] or "never",
                    c["last_used_at"] or "never",
                ]
                for c in clients
            ],
            max_width=50,
        )
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    from lantide.mcp.clients import ClientStore

    if not args.second:
        raise UsageError("revoke needs the client's id", hint="See lantide mcp list.")
    client = ClientStore().revoke(args.second)
    if args.json:
        print_json({"client": client.public()})
    else:
        print(f"Revoked {client.name} ({client.id}); its token no longer connects.")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    import os

    from lantide.mcp.engine import McpEngine
    from lantide.mcp.server import (
        DEFAULT_PORT,
        TOKEN_ENV,
        HttpServer,
        TokenRefused,
        check_loopback,
    )
    from lantide.mcp.stdio import serve_stdio
    from lantide.workspace.lock import WorkspaceLockedError

    if args.http:
        check_loopback(args.host)  # refused before a workspace is opened or a port bound
    engine = McpEngine(transport="http" if args.http else "stdio")
    if not args.http:  # the client's token first: nothing is opened for a stranger
        client, why = engine.store.verify(os.environ.get(TOKEN_ENV))
        if client is None:
            raise TokenRefused(
                f"{TOKEN_ENV}: {why}",
                hint="Set it to the token shown by lantide mcp pair "
                "(Settings > Agent Integration).",
            )
        if args.first and not client.allows_workspace(args.first):
            from lantide.mcp.redact import relative_paths

            raise TokenRefused(  # read by the agent that started us: no home folder in it
                relative_paths(f"this client's scope is {client.scope}, not {args.first}", []),
                hint="Pair the client again for this workspace or for all.",
            )
    try:
        if args.first:
            try:
                engine.open_workspace(args.first)
            except WorkspaceLockedError as exc:
                raise LantideError(
                    exc.message,
                    code=exc.code,
                    hint="While the desktop app has the workspace open, outside agents "
                    "connect to the app over HTTP (Settings > Agent Integration shows "
                    "the configuration); stdio serves a workspace no app has open.",
                ) from None
        if args.http:
            server = HttpServer(engine, host=args.host, port=args.port or DEFAULT_PORT).start()
            print(f"lantide: MCP on {server.url} (Ctrl+C stops)", file=sys.stderr, flush=True)
            try:
                server.wait()
            except KeyboardInterrupt:
                server.stop()
        else:
            serve_stdio(engine)
    finally:
        engine.close()
    return 0
