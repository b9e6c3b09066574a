"""What the explorer shows, read off the UI thread into plain data.

:func:`read_workspace_snapshot` lists projects (with their documents, SQL tabs and
knowledge file), data files and connections; a project whose ``project.json`` is broken is
listed with its error instead of hiding the rest. :func:`table_rows` asks the query
service which tables exist and normalises the answer for the tree. Both run in a worker.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from lantide.errors import LantideError

_FOLDER_SCAN_LIMIT = 5000  # files looked at to decide whether a folder holds data


class ProjectNode(TypedDict):
    """A project in the tree (``status`` broken with ``error`` when it cannot be read)."""

    dir: str
    name: str
    status: str
    plan: str
    report: str
    sql_tabs: list[str]
    charts: NotRequired[list[str]]  # not for a broken project
    has_knowledge: bool
    error: str | None


class DataFileNode(TypedDict):
    """A file of data/ (or a folder of files, one table)."""

    name: str
    size: int | None  # None for a folder
    table: str  # "" when the file is not data Lantide reads
    folder: NotRequired[bool]


class WorkspaceSnapshot(TypedDict):
    """:func:`read_workspace_snapshot`: what the tree shows besides the tables."""

    projects: list[ProjectNode]
    data_files: list[DataFileNode]
    connections: list[dict[str, Any]]  # workspace.json's, the secrets split off


class TableRow(TypedDict):
    """A table in the tree (:func:`table_rows`)."""

    name: str  # as written in SQL
    qualified_name: str | None  # quoted by the query layer (what drags into the editor)
    kind: str  # data, sheet, cached, external, attached
    row_count: object  # as show_tables gave them
    source: object
    connection: object
    description: str | None


class TableRows(TypedDict):
    tables: list[TableRow]
    problems: list[dict[str, object]]  # show_tables' problems: source|connection, error


def _holds_data(folder) -> bool:
    """Whether a folder of data/ holds data files (the query layer reads it as one table,
    or lists why it cannot)."""
    from lantide.query.names import data_format

    for i, path in enumerate(folder.rglob("*")):
        if i >= _FOLDER_SCAN_LIMIT:
            return False
        if path.is_file() and not path.name.startswith(".") and data_format(path.name):
            return True
    return False


def _chart_names(project) -> list[str]:
    """The project's chart files (``charts/NAME.vl.json``), without loading the charts
    package (its renderer is heavy)."""
    from lantide.workspace import layout

    folder = layout.charts_dir(project.dir)
    if not folder.is_dir():
        return []
    suffix = layout.CHART_SUFFIX
    return sorted(
        (p.name[: -len(suffix)] for p in folder.glob(f"*{suffix}") if p.is_file()),
        key=str.casefold,
    )


def read_workspace_snapshot(context, workspace) -> WorkspaceSnapshot:
    from lantide.workspace.model import Project

    projects: list[ProjectNode] = []
    for dirname in workspace.project_dirnames():
        pdir = workspace.projects_dir / dirname
        if not (pdir / "project.json").exists():
            continue
        try:
            project = Project.load(workspace.root, dirname)
        except LantideError as exc:
            projects.append(
                {
                    "dir": dirname,
                    "name": dirname,
                    "status": "broken",
                    "error": str(exc),
                    "sql_tabs": [],
                    "plan": "",
                    "report": "",
                    "has_knowledge": False,
                }
            )
            continue
        if project.is_archived:
            continue
        projects.append(
            {
                "dir": project.dirname,
                "name": project.name,
                "status": project.status,
                "plan": project.plan,
                "report": project.report,
                "sql_tabs": project.sql_tab_names(),
                "charts": _chart_names(project),
                "has_knowledge": project.knowledge_path.is_file(),
                "error": None,
            }
        )
    from lantide.query.names import data_format, table_name_for

    data_files: list[DataFileNode] = []
    if workspace.data_dir.is_dir():
        for path in sorted(workspace.data_dir.iterdir(), key=lambda p: p.name.lower()):
            if path.name.startswith((".", "~$")):
                continue
            if path.is_file():
                data_files.append(
                    {
                        "name": path.name,
                        "size": path.stat().st_size,
                        "table": table_name_for(path.name) if data_format(path.name) else "",
                    }
                )
            elif path.is_dir() and _holds_data(path):  # a folder of files is one table
                data_files.append(
                    {"name": path.name, "size": None, "table": path.name, "folder": True}
                )
    from lantide.query.connection_secrets import split_secrets

    # an old workspace.json may still hold a secret in the string: never shown
    connections = [
        dict(c, connection_string=split_secrets(str(c.get("connection_string", "")))[0])
        for c in workspace.connections
        if isinstance(c, dict)
    ]
    return {"projects": projects, "data_files": data_files, "connections": connections}


def _display_name(t: dict[str, Any]) -> str:
    """How an analyst writes the table in SQL: plain, or schema-qualified for sheets."""
    if t.get("kind") in ("excel_sheet", "external"):
        return t.get("qualified_name") or t.get("name", "?")
    return t.get("name", "?")


def table_rows(context, service) -> TableRows:
    """``show_tables`` normalised for the tree.

    ``{"tables": [{"name", "qualified_name", "kind": data|sheet|cached|external|attached,
    "row_count",
    "source", "connection", "description"}], "problems": [{"source"|"connection", "error"}]}``
    """
    answer = service.show_tables()
    rows: list[TableRow] = []
    for t in answer.get("tables", []):
        kind = {
            "data_file": "data",
            "excel_sheet": "sheet",
            "cached_table": "cached",
            "external": "external",
            "attached_database": "attached",
        }.get(t.get("kind"), "data")
        description = None
        if kind == "cached":
            # a step is named by what made it, not by its id (the ledger lists the steps)
            if t.get("tab"):
                description = f"cached result of SQL tab {t['tab']} ({t.get('project')})"
            elif t.get("cache_kind") == "staged":
                description = "a staged copy of remote data"
            else:
                description = "cached result of a query (its step is in the ledger)"
        elif t.get("notes"):  # what the reader skipped or read differently (query layer)
            description = f"{t.get('source')} is read differently from what it says: " + "; ".join(
                t["notes"]
            )
        rows.append(
            {
                "name": _display_name(t),
                "qualified_name": t.get("qualified_name"),  # quoted by the query layer
                "kind": kind,
                "row_count": t.get("row_count"),
                "source": t.get("source"),
                "connection": t.get("connection"),
                "description": description,
            }
        )
    return {"tables": rows, "problems": list(answer.get("problems", []))}
