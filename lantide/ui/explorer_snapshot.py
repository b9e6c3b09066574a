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


def _display_name(t: dict[str, Any]) -> str:
    """How an analyst writes the table in SQL: plain, or schema-qualified for sheets."""
    if t.get("kind") in ("excel_sheet", "external"):
        return t.get("qualified_name") or t.get("name", "?")
    return t.get("name", "?")


def table_rows(context, service) -> dict[str, Any]:
    """``show_tables`` normalised for the tree.

    ``{"tables": [{"name", "kind": data|sheet|cached|external|attached, "row_count",
    "source", "connection", "description"}], "problems": [{"source"|"connection", "error"}]}``
    """
    answer = service.show_tables()
    rows = []
    for t in answer.get("tables", []):
        kind = {"data_file": "data", "excel_sheet": "sheet", "cached_table": "cached",
                "external": "external", "attached_database": "attached"}.get(t.get("kind"),
                                                                              "data")
        description = None
        if kind == "cached":
            made_by = f"tab {t.get('project')}/{t.get('tab')}" if t.get("tab") else \
                f"step {t.get('step_id')}" if t.get("step_id") else t.get("cache_kind")
            description = f"cached {t.get('cache_kind') or ''} result, made by {made_by}"
        rows.append({"name": _display_name(t), "kind": kind, "row_count": t.get("row_count"),
                     "source": t.get("source"), "connection": t.get("connection"),
                     "description": description})
    return {"tables": rows, "problems": list(answer.get("problems", []))}
