"""``lantide connection list|add|remove|test``: a workspace's external (ODBC) connections.

The password never appears on the command line (it would land in the shell's history and
the process list): ``add`` asks for it on the terminal, or reads it from standard input with
``--password-stdin``, and stores it in the system keyring. Where there is no keyring, set
``LANTIDE_PASSWORD_<NAME>`` in the environment instead. ``add`` and ``remove`` take the
workspace's lock (the desktop app rewrites workspace.json; while it is open, use its
Settings > Connections); ``list`` and ``test`` work beside the app.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from lantide.cli.common import Subparsers, add_command, open_workspace
from lantide.cli.output import print_json, print_table
from lantide.errors import UsageError

if TYPE_CHECKING:
    from lantide.query.connections import ConnectionRow, ConnectionTest


def register(subparsers: Subparsers) -> None:
    p = add_command(
        subparsers,
        "connection",
        "list, add, remove or test external database connections (ODBC)",
        None,
    )
    actions = p.add_subparsers(dest="connection_action", metavar="ACTION", required=True)
    a = add_command(actions, "list", "the connections and where their passwords are", run_list)
    a.add_argument("workspace")
    a.add_argument("--json", action="store_true", help="print JSON")

    a = add_command(actions, "add", "add a connection, or replace one with --replace", run_add)
    a.add_argument("workspace")
    a.add_argument("name", help="how queries name it: NAME.schema.table")
    a.add_argument(
        "connection_string",
        help="ODBC connection string, e.g. "
        "'Driver={ODBC Driver 18 for SQL Server};Server=db;Database=sales'; "
        "secrets in it (PWD=, AccessToken=, a URL's user:pass@) go to the "
        "keyring, never to workspace.json",
    )
    a.add_argument(
        "--dialect",
        default="postgres",
        help="the SQL the database speaks (sqlglot name: tsql for SQL Server, "
        "postgres, mysql, oracle, snowflake, ...); default postgres",
    )
    a.add_argument("--user", help="login name (UID)")
    pw = a.add_mutually_exclusive_group()
    pw.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from standard input (first line)",
    )
    pw.add_argument(
        "--no-password",
        action="store_true",
        help="store no password (integrated login, or LANTIDE_PASSWORD_<NAME>)",
    )
    a.add_argument("--replace", action="store_true", help="replace a connection of that name")
    a.add_argument("--test", action="store_true", help="connect and list its tables after")
    a.add_argument("--json", action="store_true", help="print JSON")

    a = add_command(actions, "remove", "remove a connection and its stored password", run_remove)
    a.add_argument("workspace")
    a.add_argument("name")
    a.add_argument("--json", action="store_true", help="print JSON")

    a = add_command(actions, "test", "connect and count the tables it offers", run_test)
    a.add_argument("workspace")
    a.add_argument("name")
    a.add_argument("--json", action="store_true", help="print JSON")


def run_list(args: argparse.Namespace) -> int:
    from lantide.query.connection_secrets import masked_connection_string
    from lantide.query.connections import list_connections

    # every value of a keyword not known to be harmless is masked (deny by default)
    rows: list[ConnectionRow] = [
        {**r, "connection_string": masked_connection_string(r["connection_string"])}
        for r in list_connections(open_workspace(args.workspace, lock=False))
    ]
    if args.json:
        print_json({"connections": rows})
    elif not rows:
        print(
            "No connections. Add one with: lantide connection add WORKSPACE NAME "
            "'Driver={...};Server=...;Database=...' --dialect tsql --user U"
        )
    else:
        print_table(
            ["name", "dialect", "user", "password", "connection string"],
            [
                [
                    r["name"],
                    r["dialect"],
                    r["user"] or "",
                    _password_text(r),
                    r["connection_string"],
                ]
                for r in rows
            ],
            max_width=70,
        )
    for r in rows:
        if r["secrets_in_file"]:
            print(
                f"warning: connection {r['name']!r}: .lantide/workspace.json holds "
                f"{', '.join(r['secrets_in_file'])} in plain text; the next save by Lantide "
                "moves it to the keyring (or set it in the environment and remove it "
                "from the file)",
                file=sys.stderr,
            )
    return 0


def _password_text(row: ConnectionRow) -> str:
    return {
        "keyring": "in keyring",
        "environment": f"from {row['password_env']}",
        "none": "none stored",
    }[row["password"]]


def _read_password(args: argparse.Namespace) -> str | None:
    if args.no_password:
        return None
    if args.password_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise UsageError(
                "--password-stdin: standard input held no password",
                hint="Pipe the password in, or use --no-password.",
            )
        return line
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"Password for {args.name} (empty: none): ") or None
    raise UsageError(
        "no password given and standard input is not a terminal",
        hint="Use --password-stdin to pipe it in, or --no-password.",
    )


def run_add(args: argparse.Namespace) -> int:
    from lantide.query.connections import add_connection, test_connection

    ws = open_workspace(args.workspace)  # the app rewrites workspace.json: not beside it
    entry = add_connection(
        ws,
        args.name,
        args.connection_string,
        dialect=args.dialect,
        user=args.user,
        password=_read_password(args),
        replace=args.replace,
    )
    if not args.json:  # said before testing: a failed test does not undo the add
        print(
            f"Added connection {entry['name']!r} ({entry['dialect']}) to {ws.settings_path}",
            flush=True,
        )
    report = test_connection(ws, entry["name"]) if args.test else None
    if args.json:
        print_json({"connection": entry, "test": report})
    elif report:
        _print_test(report)
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from lantide.query.connections import remove_connection

    entry = remove_connection(open_workspace(args.workspace), args.name)
    if args.json:
        print_json({"removed": entry})
    else:
        print(
            f"Removed connection {entry['name']!r} and its stored password; tables staged "
            "from it stay cached."
        )
    return 0


def run_test(args: argparse.Namespace) -> int:
    from lantide.query.connections import test_connection

    report = test_connection(open_workspace(args.workspace, lock=False), args.name)
    if args.json:
        print_json(report)
    else:
        _print_test(report)
    return 0


def _print_test(report: ConnectionTest) -> None:
    sample = ", ".join(report["sample"])
    more = ", …" if report["tables"] > len(report["sample"]) else ""
    print(
        f"Connected to {report['name']!r} in {report['seconds']:.2f} s: "
        f"{report['tables']} tables" + (f" ({sample}{more})" if sample else "")
    )
