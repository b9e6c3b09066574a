"""``lantide sql``, ``lantide tab ...``, ``lantide tables``, ``lantide schema`` and
``lantide file header`` / ``lantide file encoding`` (how a data file is read).

All of them drive :class:`lantide.query.QueryService`, the engine the desktop app uses.
``--json`` prints the service's result as one JSON object. Exit codes: 0 done, 1 a
refusal, an error, a Source Run with failed tabs or a large remote result that needs
confirming, 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from lantide.cli.common import Subparsers, add_command, open_workspace
from lantide.cli.output import print_json, print_table
from lantide.query import result_warnings

if TYPE_CHECKING:
    from lantide.query import QueryService
    from lantide.query.checks.rules import Check
    from lantide.query.file_rules import EncodingSet, HeaderRowSet
    from lantide.query.listing import TableEntry, TableProblem
    from lantide.query.result_types import RunAnswer
    from lantide.query.sourcerun import SourceRunTab


def register(subparsers: Subparsers) -> None:
    p = add_command(subparsers, "sql", "run a SELECT under the QEM and print the preview", run_sql)
    p.add_argument("workspace")
    p.add_argument("sql", help="one read-only statement; '-' reads it from standard input")
    p.add_argument("--project", help="project (default: the focused one)")
    p.add_argument("--label", dest="result_label", help="keep the result as a cached table")
    p.add_argument("--purpose", help="what this step is for (needed while executing)")
    p.add_argument(
        "--allow-complex",
        action="store_true",
        help="run a statement with 3+ CTEs anyway (the complexity hint)",
    )
    p.add_argument("--large-remote-warning-id", help="confirm staging a large remote result")
    p.add_argument("--json", action="store_true", help="print JSON")
    _cell_option(p)

    p = add_command(
        subparsers, "tab", "run, Source Run, list, create, rename or delete SQL tabs", None
    )
    actions = p.add_subparsers(dest="tab_action", metavar="ACTION", required=True)
    for name, helptext, handler in (
        ("run", "run a tab: materializes its cached table", run_tab),
        ("source-run", "Source Run: the tab and its upstream chain", run_source_run),
    ):
        a = add_command(actions, name, helptext, handler)
        a.add_argument("workspace")
        a.add_argument("project")
        a.add_argument("tab")
        a.add_argument("--purpose", help="what this step is for (needed while executing)")
        a.add_argument(
            "--large-remote-warning-id",
            action="append",
            metavar="ID",
            help="confirm staging a large remote result (repeatable)",
        )
        a.add_argument("--json", action="store_true", help="print JSON")
        if name == "run":
            _cell_option(a)
    a = add_command(
        actions, "list", "the tabs of a project and whether they are up to date", run_tab_list
    )
    a.add_argument("workspace")
    a.add_argument("project")
    a.add_argument("--json", action="store_true")
    a = add_command(
        actions, "lineage", "what each tab reads, and the order Source Run uses", run_tab_lineage
    )
    a.add_argument("workspace")
    a.add_argument("project")
    a.add_argument("--json", action="store_true")
    a = add_command(
        actions, "create", "create a tab from SQL (argument or '-' for stdin)", run_tab_create
    )
    a.add_argument("workspace")
    a.add_argument("project")
    a.add_argument("tab")
    a.add_argument("sql")
    a.add_argument("--json", action="store_true")
    a = add_command(actions, "rename", "rename a tab and its cached table", run_tab_rename)
    a.add_argument("workspace")
    a.add_argument("project")
    a.add_argument("tab")
    a.add_argument("new_name")
    a.add_argument("--json", action="store_true")
    a = add_command(
        actions, "delete", "move a tab to the trash and drop its cached table", run_tab_delete
    )
    a.add_argument("workspace")
    a.add_argument("project")
    a.add_argument("tab")
    a.add_argument("--json", action="store_true")

    p = add_command(
        subparsers, "tables", "list the tables: data files, cached tables, connections", run_tables
    )
    p.add_argument("workspace")
    p.add_argument("--json", action="store_true")
    p = add_command(subparsers, "schema", "print a table's DDL", run_schema)
    p.add_argument("workspace")
    p.add_argument("table")
    p.add_argument("--json", action="store_true")

    p = add_command(
        subparsers, "file", "how a data file is read (a CSV's header row and encoding)", None
    )
    actions = p.add_subparsers(dest="file_action", metavar="ACTION", required=True)
    a = add_command(
        actions,
        "header",
        "choose the line holding a CSV/TSV file's column "
        "names (kept in .lantide/data_files.json; the file is not changed)",
        run_file_header,
    )
    a.add_argument("workspace")
    a.add_argument("file", help="the file, e.g. data/sales.csv")
    a.add_argument(
        "line",
        help="line number of the column names (1: the first line), "
        "0 or 'none': no header line, 'auto': detect it again",
    )
    a.add_argument("--json", action="store_true")
    a = add_command(
        actions,
        "encoding",
        "choose a CSV/TSV file's text encoding (kept in .lantide/data_files.json; the file "
        "is not changed)",
        run_file_encoding,
    )
    a.add_argument("workspace")
    a.add_argument("file", help="the file, e.g. data/sales.csv")
    a.add_argument("encoding", help="utf-8, utf-16 or latin-1; 'auto': detect it again")
    a.add_argument("--json", action="store_true")


class _Session:
    """The workspace (locked) and its query service, closed together.

    DuckDB connects on a thread of its own (mostly without the GIL) while this thread
    imports the query layer and what the command's work will import (``ahead``: see
    :func:`lantide.query.service.import_ahead`), as the desktop app opens its workspace."""

    def __init__(self, path: str, **ahead: bool):
        from lantide.query.pending_connection import PendingConnection
        from lantide.workspace.settings import user_query_settings

        self.ws = open_workspace(path)
        try:
            settings = user_query_settings()
            pending = PendingConnection(
                self.ws.cache_db_path, memory_limit=settings.memory_limit, threads=settings.threads
            )
            try:
                from lantide.query.service import QueryService, import_ahead

                import_ahead(**{"listing": False, **ahead})
                # the process ends with the command: Parquet footers are read once
                self.service = QueryService(self.ws, settings, pending=pending, short_lived=True)
            finally:
                pending.discard()  # nothing, once the engine took it
        except BaseException:
            self.ws.close()
            raise
        for warning in self.service.connection_warnings:
            print(f"warning: {warning}", file=sys.stderr)

    def __enter__(self) -> QueryService:
        return self.service

    def __exit__(self, *exc: object) -> None:
        try:
            self.service.close()
        finally:
            self.ws.close()


# What each command's work imports, loaded while DuckDB connects (import_ahead)
_STATEMENT = {"statements": True}
_TABS = {"tabs": True}


def _sql_argument(text: str) -> str:
    return sys.stdin.read() if text == "-" else text


def _cell_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-cell-chars",
        type=int,
        default=None,
        metavar="N",
        help="cut each preview cell at N characters (default 10,000; 0 shows whole values)",
    )


CELL_HINT = "use --max-cell-chars N for longer cells (0 shows whole values)"


def _with_cell_hint(result: RunAnswer) -> RunAnswer:
    """The CLI's way to the whole value, added where a preview cell was cut."""
    if result["status"] == "ok" and result["cells_cut"]:
        result["warnings"] = [
            w.message + f"; {CELL_HINT}"
            if w.code == result_warnings.PREVIEW_CELLS_CUT
            else w.message
            for w in result_warnings.coded(result)
        ]
    return result


def _print_result(result: RunAnswer) -> None:
    if result["status"] == "warning_required":
        sys.stderr.write(
            f"lantide: {result['message']}\n  {result['hint']}\n"
            f"  On the command line: --large-remote-warning-id "
            f"{result['large_remote_warning_id']}\n"
        )
        return
    print_table([c["name"] for c in result["columns"]], result["preview"])
    shown = len(result["preview"])
    rows = result["row_count"]
    line = f"({rows:,} row{'s' if rows != 1 else ''}"
    line += f", showing the first {shown})" if shown < rows else ")"
    if result["materialized"]:
        line += f'  cached as "{result["cached_table_name"]}" ({result["reason_code"]})'
    print(line)
    for warning in result_warnings.coded(result):
        if warning.code != result_warnings.PREVIEW_CUT:  # the row line above says it
            print(f"warning: {warning.message}")
    _print_checks(result.get("checks") or [])


def _print_checks(checks: list[Check], indent: str = "") -> None:
    """One line per result check: ``check error JOIN_FAN_OUT: message``."""
    for c in checks:
        print(f"{indent}check {c['severity']} {c['code']}: {c['message']}")


def _finish(result: RunAnswer, as_json: bool) -> int:
    result = _with_cell_hint(result)
    if as_json:
        print_json(result)
    else:
        _print_result(result)
    return 1 if result["status"] == "warning_required" else 0


def run_sql(args: argparse.Namespace) -> int:
    with _Session(args.workspace, **_STATEMENT) as service:
        result = service.run_query(
            _sql_argument(args.sql),
            args.result_label,
            args.purpose,
            project=args.project,
            large_remote_warning_id=args.large_remote_warning_id,
            allow_complex=args.allow_complex,
            max_cell_chars=args.max_cell_chars,
        )
        return _finish(result, args.json)


def run_tab(args: argparse.Namespace) -> int:
    with _Session(args.workspace, **_TABS) as service:
        result = service.run_sql_tab(
            args.project,
            args.tab,
            args.purpose,
            large_remote_warning_id=args.large_remote_warning_id,
            max_cell_chars=args.max_cell_chars,
        )
        return _finish(result, args.json)


def run_source_run(args: argparse.Namespace) -> int:
    with _Session(args.workspace, **_TABS) as service:
        report = service.source_run_sql_tab(
            args.project,
            args.tab,
            args.purpose,
            large_remote_warning_id=args.large_remote_warning_id,
        )
    if args.json:
        print_json(report)
    else:
        describe: dict[str, Callable[[SourceRunTab], str]] = {
            "ran": lambda e: (
                f"{e['row_count']:,} row{'s' if e['row_count'] != 1 else ''}"
                f" in {e['duration_ms']} ms"
            ),
            "skipped": lambda e: "up to date",
            "failed": lambda e: f"{e['error']['message']}",
            "not_run": lambda e: e["reason"],
        }
        for entry in report["tabs"]:
            detail = describe[entry["status"]](entry)
            print(f"{entry['status']:<8} {entry['tab']:<32} {detail}")
            _print_checks(entry.get("checks") or [], indent="         ")
        print(
            f"{report['ran']} ran, {report['skipped']} up to date, {report['failed']} failed, "
            f"{report['not_run']} not run ({report['duration_ms']} ms)"
        )
        for entry in report["tabs"]:
            if entry["status"] == "failed" and entry["error"].get("hint"):
                sys.stderr.write(f"  {entry['tab']}: {entry['error']['hint']}\n")
            if entry["status"] == "failed" and entry["error"].get("large_remote_warning_id"):
                sys.stderr.write(  # a LARGE_REMOTE_RESULT error (QueryErrorDict)
                    f"  On the command line: --large-remote-warning-id "
                    f"{entry['error'].get('large_remote_warning_id')}\n"
                )
    return 0 if report["ok"] else 1


def run_tab_list(args: argparse.Namespace) -> int:
    with _Session(args.workspace) as service:
        tabs = service.list_sql_tabs(args.project)
    if args.json:
        print_json({"tabs": tabs})
    else:
        print_table(
            ["tab", "state", "rows", "last run"],
            [[t["tab"], t["state"], t["row_count"], t["last_run_at"]] for t in tabs],
        )
        for t in tabs:  # a tab that cannot be read is listed, and says why
            if t["error"] and t["error"].get("error") in (
                "FILE_CORRUPT",
                "TAB_NOT_FOUND",
                "BAD_TAB_NAME",
            ):
                print(f"! {t['tab']}: {t['error']['message']}")
    return 0


def run_tab_lineage(args: argparse.Namespace) -> int:
    with _Session(args.workspace) as service:
        graph = service.lineage(args.project)
    if args.json:
        print_json(graph)
        return 0
    for tab in graph["tabs"]:
        reads = (
            tab["reads_tabs"]
            + [s["table"] for s in tab["reads_sources"]]
            + tab["reads_cached"]
            + tab["reads_external"]
        )
        print(f"{tab['tab']} <- {', '.join(reads) or '(nothing)'}")
    if graph["cycle"]:
        print("cycle: " + " -> ".join(graph["cycle"] + graph["cycle"][:1]))
        return 1
    print("order: " + " -> ".join(graph["order"] or []))  # no cycle: an order
    return 0


def run_tab_create(args: argparse.Namespace) -> int:
    with _Session(args.workspace) as service:
        result = service.create_sql_tab(args.project, args.tab, _sql_argument(args.sql))
    print_json(result) if args.json else print(f"created {result['path']}")
    return 0


def run_tab_rename(args: argparse.Namespace) -> int:
    with _Session(args.workspace) as service:
        result = service.rename_sql_tab(args.project, args.tab, args.new_name)
    if args.json:
        print_json(result)
    else:
        print(f"renamed {result['old']} -> {result['new']}")
        for entry in result.get("rewritten") or []:
            print(f"updated {entry['tab']}: {entry['references']} reference(s) ({entry['path']})")
        if result.get("hint"):
            print(result["hint"])
    return 0


def run_tab_delete(args: argparse.Namespace) -> int:
    with _Session(args.workspace) as service:
        result = service.delete_sql_tab(args.project, args.tab)
    if args.json:
        print_json(result)
    else:
        print(f"deleted {result['deleted']} (moved to {result['trash_path']})")
        if result.get("hint"):
            print(result["hint"])
    return 0


def run_tables(args: argparse.Namespace) -> int:
    with _Session(args.workspace) as service:
        service.show_tables()
        # A headless listing can afford to wait for counts of large text files.
        service.wait_for_row_counts(timeout=60)
        result = service.show_tables()
    if args.json:
        print_json(result)
        return 0

    def rows(t: TableEntry) -> str:
        count = t.get("row_count")
        return "" if count is None else f"{count:,}"

    print_table(
        ["table", "kind", "rows", "source"],
        [
            [
                t["qualified_name"],
                t["kind"],
                rows(t),
                t.get("source") or t.get("project") or t.get("connection") or "",
            ]
            for t in result["tables"]
        ],
    )
    for problem in result["problems"]:
        sys.stderr.write(
            f"problem: {problem.get('source') or problem.get('connection')}: {problem['error']}\n"
        )
    noted = [n for t in result["tables"] if (n := _reading_notes(t)) is not None]
    for source, notes in noted:
        for note in notes:
            sys.stderr.write(f"note: {source}: {note}\n")
    if noted:
        from lantide.query.reading_notes import HOW_TO_CHOOSE

        sys.stderr.write(f"  {HOW_TO_CHOOSE}\n")
    return 0


def _reading_notes(t: TableEntry) -> tuple[str, list[str]] | None:
    """A data file's source and what its reader read differently, when it says."""
    if t["kind"] == "data_file" or t["kind"] == "excel_sheet":
        notes = t.get("notes")
        return (t["source"], notes) if notes else None
    return None


def run_schema(args: argparse.Namespace) -> int:
    with _Session(args.workspace) as service:
        result = service.read_schema(args.table)
    print_json(result) if args.json else print(result["ddl"])
    return 0


def _header_line(text: str) -> int | None:
    from lantide.errors import UsageError

    word = text.strip().lower()
    if word == "auto":
        return None
    if word == "none":
        return 0
    try:
        return int(word)
    except ValueError:
        raise UsageError(f"line must be a number, 'none' or 'auto', not {text!r}") from None


def run_file_header(args: argparse.Namespace) -> int:
    from lantide.query.file_rules import set_header_row

    header_row = _header_line(args.line)
    ws = open_workspace(args.workspace)
    try:
        rule = set_header_row(ws.root, args.file, header_row)
    finally:
        ws.close()
    how = {None: "detected by the reader", 0: "none (every line is data)"}.get(
        header_row, f"line {header_row}"
    )
    return _print_file_rule(args, rule, f"header row {how}")


def run_file_encoding(args: argparse.Namespace) -> int:
    from lantide.query.file_rules import set_encoding

    word = args.encoding.strip()
    ws = open_workspace(args.workspace)
    try:
        rule = set_encoding(ws.root, args.file, None if word.lower() == "auto" else word)
    finally:
        ws.close()
    return _print_file_rule(args, rule, f"encoding {rule['encoding'] or 'detected by the reader'}")


def _print_file_rule(args: argparse.Namespace, rule: HeaderRowSet | EncodingSet, said: str) -> int:
    """The file's table as read with its new rule: columns, notes, problem."""
    with _Session(args.workspace) as service:
        listing = service.show_tables()
        found: list[TableEntry | TableProblem] = [*listing["tables"], *listing["problems"]]
        table = next((t for t in found if t.get("source") == rule["file"]), None)
        name = table.get("qualified_name") if table is not None else None
        columns: list[str] = []
        if isinstance(name, str):  # a table (a problem has none)
            columns = [c["name"] for c in service.read_schema(name)["columns"]]
    notes = table.get("notes", []) if table is not None else []
    error = table.get("error") if table is not None else None
    result = {**rule, "table": name, "columns": columns, "notes": notes, "error": error}
    if args.json:
        print_json(result)
        return 0
    print(f"{rule['file']}: {said}")
    if name:
        print(f"{name}: {', '.join(columns)}")
    for note in notes if isinstance(notes, list) else []:
        print(f"note: {note}")
    if error:
        sys.stderr.write(f"problem: {error}\n")
    return 0
