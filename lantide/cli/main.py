"""Entry point of the ``lantide`` console script.

Each command lives in its own module under ``lantide.cli`` with ``register(subparsers)``;
handlers take the parsed arguments and return an exit code. Heavy imports (DuckDB, the
model client, Qt) happen inside handlers so ``lantide --help`` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from lantide import __version__
from lantide.errors import LantideError, UsageError

# The module that registers each command (``register(subparsers)``), so a command's
# process imports and builds its own module only: all ten cost 10-40 ms of imports and
# argparse work before the first statement. tests/cli/test_cli_main.py checks this map
# against what the modules register.
COMMANDS: dict[str, str] = {
    "gui": "app_commands",
    "init": "app_commands",
    "project": "app_commands",
    "sql": "query_commands",
    "tab": "query_commands",
    "tables": "query_commands",
    "schema": "query_commands",
    "file": "query_commands",
    "connection": "connection_commands",
    "chat": "agent_commands",
    "prompt": "agent_commands",
    "ledger": "agent_commands",
    "annotations": "doc_commands",
    "edits": "edit_commands",
    "report": "report_commands",
    "chart": "chart_commands",
    "knowledge": "knowledge_commands",
    "eval": "eval_commands",
    "mcp": "mcp_commands",
}

# The order --help lists them in.
_MODULE_ORDER = (
    "app_commands",  # gui, init, project
    "query_commands",  # sql, tab, tables, schema, file
    "connection_commands",  # connection
    "agent_commands",  # chat, prompt, ledger
    "doc_commands",  # annotations
    "edit_commands",  # edits
    "report_commands",  # report check
    "chart_commands",  # chart
    "knowledge_commands",  # knowledge
    "eval_commands",  # eval
    "mcp_commands",  # mcp, mcp pair/list/revoke
)


def command_modules(*, app_only: bool = False, command: str | None = None) -> list[ModuleType]:
    """The modules that register commands, in the order --help lists them. ``app_only``:
    just the desktop app's own (gui, init, project): opening the app needs no other, and
    importing them all (about 60 ms) would come before the window's first paint.
    ``command``: just the module of that command, when it is one (else all: the usage
    error lists every command)."""
    if app_only:
        names: tuple[str, ...] = ("app_commands",)
    elif command in COMMANDS:
        names = (COMMANDS[command],)
    else:
        names = _MODULE_ORDER
    return [_command_module(name) for name in names]


def _command_module(name: str) -> ModuleType:
    """One command module, imported by its name in the code (no import by a string at run
    time: tests/test_layers.py, and the packaged app's analysis, see every import)."""
    if name == "app_commands":
        from lantide.cli import app_commands

        return app_commands
    if name == "query_commands":
        from lantide.cli import query_commands

        return query_commands
    if name == "connection_commands":
        from lantide.cli import connection_commands

        return connection_commands
    if name == "agent_commands":
        from lantide.cli import agent_commands

        return agent_commands
    if name == "doc_commands":
        from lantide.cli import doc_commands

        return doc_commands
    if name == "edit_commands":
        from lantide.cli import edit_commands

        return edit_commands
    if name == "report_commands":
        from lantide.cli import report_commands

        return report_commands
    if name == "chart_commands":
        from lantide.cli import chart_commands

        return chart_commands
    if name == "knowledge_commands":
        from lantide.cli import knowledge_commands

        return knowledge_commands
    if name == "eval_commands":
        from lantide.cli import eval_commands

        return eval_commands
    if name == "mcp_commands":
        from lantide.cli import mcp_commands

        return mcp_commands
    raise ValueError(f"no command module {name!r}")


def build_parser(*, app_only: bool = False, command: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lantide",
        description="Lantide: a desktop workbench for data analysts who work with an AI agent. "
        "Without a command, opens the desktop app.",
    )
    parser.add_argument("--version", action="version", version=f"lantide {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in command_modules(app_only=app_only, command=command):
        module.register(subparsers)
    return parser


def _command_word(argv: list[str]) -> str | None:
    """The command the arguments name: the first word that is not an option (the
    top-level options take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _opens_the_app(argv: list[str]) -> bool:
    """Plain ``lantide`` (with or without --debug), or ``lantide [--debug] gui ...``."""
    words = [word for word in argv if word != "--debug"]
    return not words or (words[0] == "gui" and "-h" not in words and "--help" not in words)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(app_only=_opens_the_app(argv), command=_command_word(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or bad usage (2), said on stderr
        code = int(exc.code or 0)
        if code == 2 and "--json" in argv:
            from lantide.cli.output import print_json

            print_json(
                {
                    "error": {
                        "code": UsageError.code,
                        "message": "bad usage of lantide",
                        "hint": "See the message above, or lantide --help.",
                    }
                }
            )
        return code
    handler = getattr(args, "handler", None)
    if handler is None:
        from lantide.cli.app_commands import run_default_gui

        handler = run_default_gui
    try:
        return int(handler(args) or 0)
    except UsageError as exc:
        _report(exc, args)
        return 2
    except LantideError as exc:
        _report(exc, args)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("lantide: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: one line for the user, the traceback with --debug
        if getattr(args, "debug", False):
            raise
        if getattr(args, "json", False):
            from lantide.cli.output import print_json

            print_json(
                {
                    "error": {
                        "code": "INTERNAL_ERROR",
                        "message": f"{type(exc).__name__}: {exc}",
                        "hint": "A bug in Lantide: run again with --debug and report it.",
                    }
                }
            )
        sys.stderr.write(
            f"lantide: internal error: {type(exc).__name__}: {exc}\n"
            "  This is a bug in Lantide; run the command again with --debug "
            "for the details and report them.\n"
        )
        return 1


def main_gui() -> int:
    """Entry point of the ``lantide-gui`` script (no console window on Windows)."""
    return main(sys.argv[1:] or [])


def _report(exc: LantideError, args: argparse.Namespace) -> None:
    """The error on stderr, its code on a line after it; with ``--json`` also as one
    object on stdout (DESIGN section 3), so a script can branch on the code."""
    if getattr(args, "debug", False):
        import traceback

        traceback.print_exception(exc)
    if getattr(args, "json", False):
        from lantide.cli.output import print_json

        print_json({"error": {"code": exc.code, "message": exc.message, "hint": exc.hint}})
    sys.stderr.write(f"lantide: error: {exc.message}\n")
    if exc.hint:
        sys.stderr.write(f"  {exc.hint}\n")
    if getattr(exc, "code", None):
        sys.stderr.write(f"  code: {exc.code}\n")


if __name__ == "__main__":
    raise SystemExit(main())
