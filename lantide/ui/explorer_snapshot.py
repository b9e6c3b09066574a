"""What the explorer shows, read off the UI thread into plain data.

:func:`read_workspace_snapshot` lists projects (with their documents, SQL tabs and
knowledge file), data files and connections; a project whose ``project.json`` is broken is
listed with its error instead of hiding the rest. :func:`table_rows` asks the query
service which tables exist and normalises the answer for the tree. Both run in a worker.
"""

from __future__ import annotations

from typing import Any

from lantide.errors import LantideError

# The formats the query layer registers as tables (DESIGN.md section 2).
_DATA_SUFFIXES = {".csv", ".tsv", ".txt", ".parquet", ".json", ".jsonl", ".ndjson", ".xlsx"}


def _table_name(filename: str) -> str:
    try:
        from lantide.query.names import table_name_for
    except ImportError:  # the query layer owns the rule; without it, show the stem
        return filename.rsplit(".", 1)[0]
    try:
        return table_name_for(filename)
    except Exception:
        return filename.rsplit(".", 1)[0]


def read_workspace_snapshot(context, workspace) -> dict[str, Any]:
    from lantide.workspace.model import Project

    projects = []
    for dirname in workspace.project_dirnames():
        pdir = workspace.projects_dir / dirname
        if not (pdir / "project.json").exists():
            continue
        try:
            project = Project.load(workspace.root, dirname)
        except LantideError as exc:
            projects.append({"dir": dirname, "name": dirname, "status": "broken",
                             "error": str(exc), "sql_tabs": [], "plan": "", "report": "",
                             "has_knowledge": False})
            continue
        if project.is_archived:
            continue
        projects.append({
            "dir": project.dirname, "name": project.name, "status": project.status,
            "plan": project.plan, "report": project.report,
            "sql_tabs": project.sql_tab_names(),
            "has_knowledge": project.knowledge_path.is_file(),
            "error": None,
        })
    data_files = []
    if workspace.data_dir.is_dir():
        for path in sorted(workspace.data_dir.iterdir(), key=lambda p: p.name.lower()):
            if path.is_file() and not path.name.startswith((".", "~$")):
                known = path.suffix.lower() in _DATA_SUFFIXES
                data_files.append({"name": path.name, "size": path.stat().st_size,
                                   "table": _table_name(path.name) if known else ""})
    return {"projects": projects, "data_files": data_files,
            "connections": [c for c in workspace.connections if isinstance(c, dict)]}


def _first(d: dict, *keys, default=None):
    for key in keys:
        if key in d and d[key] is not None:
            return d[key]
    return default


def table_rows(context, service) -> list[dict[str, Any]]:
    """``show_tables`` as ``[{"name", "kind": data|cached|external, "row_count", ...}]``."""
    answer = service.show_tables()
    if isinstance(answer, dict):
        answer = _first(answer, "tables", "items", default=[])
    rows = []
    for raw in answer or []:
        if hasattr(raw, "to_dict"):
            raw = raw.to_dict()
        if not isinstance(raw, dict):
            rows.append({"name": str(raw), "kind": "data", "row_count": None})
            continue
        kind = str(_first(raw, "kind", "type", "source", default="data")).lower()
        if "cache" in kind or kind in ("tab", "result", "staged"):
            kind = "cached"
        elif kind in ("external", "remote", "connection", "attached", "odbc"):
            kind = "external"
        else:
            kind = "data"
        rows.append({
            "name": str(_first(raw, "name", "table", "qualified_name", default="?")),
            "kind": kind,
            "row_count": _first(raw, "row_count", "rows"),
            "description": _first(raw, "description", "path", "sql_preview"),
        })
    return rows
