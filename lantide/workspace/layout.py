"""Where each file of a workspace lives (DESIGN.md section 2): the one home of every path
and file-name rule, so no layer spells ``projects/P/sql/T.sql`` or ``.lantide/ledger``
by hand::

    .lantide/workspace.json  session.json  cache.duckdb  lock  locks/  trash/
    .lantide/conversations/ID.jsonl        .lantide/ledger/ID.jsonl
    .lantide/edits/P/ID.json               (the agent's pending edits of P's documents)
    data/                                  projects/NAME/sql/TAB.sql
    projects/NAME/plan.md -> projects/NAME/plan.annotations.json (its sidecar)

Functions take the workspace root (or a project's folder) so the code that runs before a
:class:`~lantide.workspace.model.Workspace` exists (init, the lock) uses them too; the
Workspace and Project properties return the same paths.
"""

from __future__ import annotations

from pathlib import Path

LANTIDE_DIR = ".lantide"
DATA_DIR = "data"
PROJECTS_DIR = "projects"
SQL_DIR = "sql"
REPORT_HTML_NAME = "report.html"
SQL_SUFFIX = ".sql"
SIDECAR_SUFFIX = ".annotations.json"
CHARTS_DIR = "charts"
CHART_SUFFIX = ".vl.json"
LOG_SUFFIX = ".jsonl"  # a conversation's file and its ledger: ID.jsonl


# -- .lantide/
def lantide_dir(root: Path) -> Path:
    return Path(root) / LANTIDE_DIR


def settings_path(root: Path) -> Path:
    return lantide_dir(root) / "workspace.json"


def session_path(root: Path) -> Path:
    return lantide_dir(root) / "session.json"


def cache_db_path(root: Path) -> Path:
    return lantide_dir(root) / "cache.duckdb"


def conversations_dir(root: Path) -> Path:
    return lantide_dir(root) / "conversations"


def ledger_dir(root: Path) -> Path:
    return lantide_dir(root) / "ledger"


def grid_state_path(root: Path) -> Path:
    """The result grid's state per SQL tab (column formats, frozen first column)."""
    return lantide_dir(root) / "grid_state.json"


def lock_path(root: Path) -> Path:
    """The workspace lock of the process that owns the workspace."""
    return lantide_dir(root) / "lock"


def locks_dir(root: Path) -> Path:
    """The locks of single files of the workspace (:mod:`lantide.workspace.filelock`)."""
    return lantide_dir(root) / "locks"


def trash_dir(root: Path) -> Path:
    """Deleted projects and SQL tabs, moved here, never destroyed."""
    return lantide_dir(root) / "trash"


def trashed_project_path(root: Path, project: str, stamp: str) -> Path:
    """``.lantide/trash/P-STAMP``: where a deleted project's folder goes."""
    return trash_dir(root) / f"{project}-{stamp}"


def trashed_sql_tab_path(root: Path, project: str, tab: str, stamp: str) -> Path:
    """``.lantide/trash/P/sql/T-STAMP.sql``: where a deleted SQL tab's file goes."""
    return sql_dir(trash_dir(root) / project) / sql_tab_file_name(f"{tab}-{stamp}")


def activity_dir(root: Path) -> Path:
    """``.lantide/activity/``: one ``CLIENT.jsonl`` per outside agent (MCP)."""
    return lantide_dir(root) / "activity"


def edits_dir(root: Path, project: str) -> Path:
    """``.lantide/edits/P/``: the agent's pending edits of project P's documents."""
    return lantide_dir(root) / "edits" / project


def edit_path(root: Path, project: str, edit_id: str) -> Path:
    """``.lantide/edits/P/ID.json``: one pending edit (:mod:`lantide.docs.pending_edits`)."""
    return edits_dir(root, project) / f"{edit_id}.json"


def step_index_dir(lantide_folder: Path) -> Path:
    """``.lantide/index/steps/``: the search index of past steps (a cache)."""
    return Path(lantide_folder) / "index" / "steps"


def step_index_state_path(lantide_folder: Path) -> Path:
    """``.lantide/index/steps.json``: which ledgers the step index holds."""
    return Path(lantide_folder) / "index" / "steps.json"


def log_path(directory: Path, conversation_id: str) -> Path:
    """``ID.jsonl`` in ``directory`` (conversations or ledger)."""
    return Path(directory) / f"{conversation_id}{LOG_SUFFIX}"


def log_paths(directory: Path) -> list[Path]:
    """The ``*.jsonl`` files of ``directory``, sorted; none when it does not exist."""
    directory = Path(directory)
    return sorted(directory.glob(f"*{LOG_SUFFIX}")) if directory.is_dir() else []


# -- data/ and projects/
def data_dir(root: Path) -> Path:
    return Path(root) / DATA_DIR


def projects_dir(root: Path) -> Path:
    return Path(root) / PROJECTS_DIR


def project_dir(root: Path, dirname: str) -> Path:
    return projects_dir(root) / dirname


def project_relpath(project: str, name: str) -> str:
    """``projects/P/NAME``: a project's file relative to the workspace, with forward slashes."""
    return f"{PROJECTS_DIR}/{project}/{name}"


def report_html_path(project_folder: Path) -> Path:
    """``projects/P/report.html``: the HTML Report published from the Markdown Report."""
    return Path(project_folder) / REPORT_HTML_NAME


def sql_dir(project_folder: Path) -> Path:
    return Path(project_folder) / SQL_DIR


def sql_tab_file_name(tab: str) -> str:
    """``T.sql`` (its name is not checked here: see
    :func:`lantide.query.tabs.validate_tab_name`)."""

    return f"{tab}{SQL_SUFFIX}"


def sql_tab_path(project_folder: Path, tab: str) -> Path:
    """``projects/P/sql/T.sql`` under the project's folder."""
    return sql_dir(project_folder) / sql_tab_file_name(tab)


def sql_tab_relpath(project: str, tab: str) -> str:
    """``projects/P/sql/T.sql``: a tab's file relative to the workspace, with forward
    slashes, as the agent's app state and events name it."""
    return project_relpath(project, sql_tab_project_relpath(tab))


def sql_tab_project_relpath(tab: str) -> str:
    """``sql/T.sql``: a tab's file relative to its project folder (as ``archived`` lists it)."""
    return f"{SQL_DIR}/{sql_tab_file_name(tab)}"


def sql_tab_of(relpath_parts: tuple[str, ...] | list[str]) -> tuple[str, str] | None:
    """``(project, tab)`` for the parts of a workspace-relative path of a SQL tab's file
    (``("projects", P, "sql", "T.sql")``), else None."""
    parts = tuple(relpath_parts)
    if (
        len(parts) == 4
        and parts[0] == PROJECTS_DIR
        and parts[2] == SQL_DIR
        and parts[3].endswith(SQL_SUFFIX)
    ):
        return parts[1], parts[3][: -len(SQL_SUFFIX)]
    return None


def charts_dir(project_folder: Path) -> Path:
    return Path(project_folder) / CHARTS_DIR


def chart_file_name(chart: str) -> str:
    """``C.vl.json`` (its name is checked by :func:`lantide.charts.files.validate_chart_name`)."""
    return f"{chart}{CHART_SUFFIX}"


def chart_path(project_folder: Path, chart: str) -> Path:
    """``projects/P/charts/C.vl.json`` under the project's folder."""
    return charts_dir(project_folder) / chart_file_name(chart)


def chart_project_relpath(chart: str) -> str:
    """``charts/C.vl.json``: a chart's file relative to its project folder (as a Report's
    image link names it)."""
    return f"{CHARTS_DIR}/{chart_file_name(chart)}"


def chart_link(chart: str) -> str:
    """The target of a Markdown image link to the chart: :func:`chart_project_relpath`
    percent-encoded (CommonMark ends a link target at a space: ``charts/orders%20by%20
    region.vl.json``). :func:`link_target_path` reads one back."""
    from urllib.parse import quote

    return quote(chart_project_relpath(chart), safe="/")


def link_target_path(src: str) -> str:
    """A Markdown link's target as a path relative to the project (percent-decoded)."""
    from urllib.parse import unquote

    return unquote(src.strip())


def sidecar_path(document_path: Path) -> Path:
    """``plan.md`` -> ``plan.annotations.json`` in the same folder."""
    document_path = Path(document_path)
    return document_path.with_name(document_path.stem + SIDECAR_SUFFIX)


def is_sidecar(name: str) -> bool:
    return name.endswith(SIDECAR_SUFFIX)
