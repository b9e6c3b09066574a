"""Workspaces and projects on disk (DESIGN.md section 2).

```
WORKSPACE/.lantide/workspace.json    {"version", "name", "connections": [...]}
WORKSPACE/.lantide/session.json      focused project, open tabs (restored on start)
WORKSPACE/projects/NAME/project.json {"name", "status", "plan", "report", "archived": [...]}
```

Unknown fields in these files are kept when Lantide rewrites them, so files written by a
newer version survive an older one.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

from lantide.errors import CorruptFileError, LantideError, MissingFileError
from lantide.workspace import layout
from lantide.workspace.atomic import atomic_create_bytes, atomic_write_json, atomic_write_text
from lantide.workspace.filelock import file_lock
from lantide.workspace.jsonfile import read_json_object
from lantide.workspace.lifecycle import (
    ANALYST,
    LEGACY_STATUSES,
    PROJECT_STATUSES,
    ApprovalState,
    apply_approval,
    apply_move,
    apply_withdrawal,
    approval_state,
    check_move,
    check_withdrawal,
    plan_fingerprint,
    read_status,
)
from lantide.workspace.lock import WorkspaceLock
from lantide.workspace.names import name_hint, name_problem

WORKSPACE_FORMAT_VERSION = 1


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder; a name the file system refuses (too long, a NUL) is
    not one, rather than an OSError (issue 28: a 200 KB project name from the model)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


class WorkspaceError(LantideError):
    code = "WORKSPACE"


class NotAWorkspaceError(WorkspaceError):
    code = "NOT_A_WORKSPACE"

    def __init__(self, root: Path):
        super().__init__(
            f"{root} is not a Lantide workspace (no .lantide/workspace.json)",
            hint=f"Create one with: lantide init {root}",
        )


class ProjectNotFoundError(WorkspaceError):
    code = "PROJECT_NOT_FOUND"


def validate_project_name(name: str) -> str:
    """A new project's (folder) name: the names' rule (:mod:`lantide.workspace.names`).
    Existing folders are looked up without this check."""
    clean = name.strip()
    problem = name_problem(clean)
    if problem:
        raise WorkspaceError(
            f"invalid project name {name!r}: {problem}",
            hint=name_hint(clean),
            code="BAD_PROJECT_NAME",
        )
    return clean


def _already_a_workspace(root: Path) -> WorkspaceError:
    return WorkspaceError(
        f"{root} is already a Lantide workspace",
        hint=f"Open it with: lantide gui {root}",
        code="ALREADY_A_WORKSPACE",
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ProjectSummary(TypedDict):
    """:meth:`Project.to_dict` (``lantide project list --json``, the agent's project list)."""

    name: str
    dir: str  # the folder name under projects/
    status: str
    plan_approval: ApprovalState
    plan: str  # file names
    report: str
    archived: list[str]  # files of the project archived (left out of the Context Summary)
    project_archived: bool  # the project itself is archived (hidden from the default list)


class WorkspaceSummary(TypedDict):
    """:meth:`Workspace.to_dict`."""

    root: str
    name: str
    projects: list[ProjectSummary]  # archived ones too
    connections: list[dict[str, Any]]  # as in workspace.json, without secrets


def _archived_names(data: Mapping[str, object]) -> list[str]:
    """project.json's ``archived`` (load() checked it is a list; Lantide writes file names)."""
    raw = data.get("archived", [])
    return list(raw) if isinstance(raw, list) else []


@dataclass
class Project:
    """One analysis: a Plan, a Report, SQL tabs and project knowledge in one folder."""

    workspace_root: Path
    dirname: str
    data: dict[str, object] = field(default_factory=dict)  # project.json (load() checks part)

    # -- fields of project.json
    @property
    def name(self) -> str:
        name = self.data.get("name")  # not checked by load(): shown as text, as before
        return str(name) if name else self.dirname

    @property
    def status(self) -> str:
        """The status (an older file's ``done`` reads as ``delivered``)."""
        return read_status(self.data.get("status", "planning")) or "planning"

    @property
    def history(self) -> list[dict[str, object]]:
        """Who moved the status and when, oldest first."""
        raw = self.data.get("history")
        return [h for h in raw if isinstance(h, dict)] if isinstance(raw, list) else []

    def plan_text(self) -> str | None:
        try:
            return self.plan_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def approval(self) -> ApprovalState:
        """The Plan approval: ``approved``, when and by whom, ``changed_since_approval``."""
        return approval_state(self.data, self.plan_text())

    @property
    def plan(self) -> str:
        return str(self.data.get("plan", "plan.md"))  # load() checked it is a file name

    @property
    def report(self) -> str:
        return str(self.data.get("report", "report.md"))  # load() checked it

    @property
    def archived(self) -> list[str]:
        return _archived_names(self.data)

    @property
    def is_archived(self) -> bool:
        return bool(self.data.get("archived_at"))

    # -- paths
    @property
    def dir(self) -> Path:
        return layout.project_dir(self.workspace_root, self.dirname)

    @property
    def json_path(self) -> Path:
        return self.dir / "project.json"

    @property
    def plan_path(self) -> Path:
        return self.dir / self.plan

    @property
    def report_path(self) -> Path:
        return self.dir / self.report

    @property
    def sql_dir(self) -> Path:
        return layout.sql_dir(self.dir)

    def sql_tab_path(self, tab: str) -> Path:
        """``projects/NAME/sql/TAB.sql`` (the name is not checked: see
        :func:`lantide.query.tabs.tab_path`)."""
        return layout.sql_tab_path(self.dir, tab)

    @property
    def knowledge_path(self) -> Path:
        return self.dir / "knowledge.md"

    def document_path(self, kind: str) -> Path:
        """``kind`` is ``plan`` or ``report``."""
        if kind == "plan":
            return self.plan_path
        if kind == "report":
            return self.report_path
        raise WorkspaceError(
            f"unknown document {kind!r}", hint="Use 'plan' or 'report'.", code="BAD_DOCUMENT"
        )

    # -- persistence
    @classmethod
    def load(cls, workspace_root: Path, dirname: str) -> Project:
        path = layout.project_dir(workspace_root, dirname) / "project.json"
        data = read_json_object(path, "project file")
        status = data.get("status", "planning")
        if read_status(status) is None:
            raise CorruptFileError(
                path,
                f"status {status!r} is not one of {', '.join(PROJECT_STATUSES)}",
            )
        for key in ("plan", "report"):
            if key in data and (
                not isinstance(data[key], str) or "/" in data[key] or not data[key]
            ):
                raise CorruptFileError(path, f"{key!r} must be a file name, found {data[key]!r}")
        if not isinstance(data.get("archived", []), list):
            raise CorruptFileError(path, "'archived' must be a list of file names")
        return cls(Path(workspace_root), dirname, data)

    def save(self) -> None:
        """Write ``data`` as a whole (a new project). Changes go through :meth:`update`."""
        atomic_write_json(self.json_path, self.data)

    def reload(self) -> None:
        self.data = Project.load(self.workspace_root, self.dirname).data

    def update(self, change: Callable[[dict[str, object]], None]) -> None:
        """Apply ``change`` to project.json as it is on disk now, under the file's lock.

        This object's ``data`` may be stale (another window, thread or a text editor
        changed the file since it was loaded); writing it back whole would undo their
        change. A file that no longer reads is refused, never overwritten.
        """
        with file_lock(self.json_path):
            fresh = Project.load(self.workspace_root, self.dirname).data
            change(fresh)
            atomic_write_json(self.json_path, fresh)
        self.data = fresh

    def set_status(self, status: str, by: str = ANALYST) -> None:
        """Move the project to ``status`` as ``by`` (``analyst`` or ``agent``), under the
        rules of :mod:`lantide.workspace.lifecycle`; the move is kept in ``history``."""
        plan = self.plan_text()
        status = LEGACY_STATUSES.get(status, status)  # the old word still works: done

        def change(data: dict[str, object]) -> None:
            check_move(data, status, by, plan)
            apply_move(data, status, by)

        self.update(change)

    def approve_plan(self, by: str = ANALYST, *, seen_text: str | None = None) -> ApprovalState:
        """The analyst approves the Plan as it is on disk now: the project is executing.
        ``seen_text``: the Plan the analyst was shown; if the file differs (the agent or
        another program changed it meanwhile), nothing is approved."""
        plan = self.plan_text()
        if plan is None:
            raise MissingFileError(
                self.plan_path, "Plan", hint="Write the Plan before approving it."
            )
        if seen_text is not None and plan_fingerprint(seen_text) != plan_fingerprint(plan):
            raise WorkspaceError(
                f"{self.plan_path} changed since it was shown; nothing was approved",
                hint="Read the Plan as it is now, then approve it.",
                code="PLAN_CHANGED",
            )
        self.update(lambda data: apply_approval(data, plan, by))
        return self.approval()

    def withdraw_approval(self, by: str = ANALYST) -> ApprovalState:
        """The analyst withdraws the Plan approval (:func:`lifecycle.check_withdrawal`):
        recorded in the history; an executing project is back in plan_review."""

        def change(data: dict[str, object]) -> None:
            check_withdrawal(data, by)
            apply_withdrawal(data, by)

        self.update(change)
        return self.approval()

    def archive_file(self, relname: str) -> None:
        """Mark a file of the project archived: the Context Summary skips it."""

        def change(data: dict[str, object]) -> None:
            archived = _archived_names(data)
            if relname not in archived:
                data["archived"] = archived + [relname]

        self.update(change)

    def unarchive_file(self, relname: str) -> None:
        self.update(
            lambda data: data.__setitem__(
                "archived", [n for n in _archived_names(data) if n != relname]
            )
        )

    def sql_tab_names(self) -> list[str]:
        if not self.sql_dir.is_dir():
            return []
        return sorted(p.stem for p in self.sql_dir.glob(f"*{layout.SQL_SUFFIX}") if p.is_file())

    def to_dict(self) -> ProjectSummary:
        return {
            "name": self.name,
            "dir": self.dirname,
            "status": self.status,
            "plan_approval": self.approval(),
            "plan": self.plan,
            "report": self.report,
            "archived": self.archived,
            "project_archived": self.is_archived,
        }


class Workspace:
    """A folder with ``.lantide/``, ``data/`` and ``projects/``."""

    def __init__(self, root: Path, settings: dict[str, Any]):
        self.root = Path(root).resolve()
        self.settings = settings
        self._lock = WorkspaceLock(self.root)
        self._focus_in_memory: str | None = None  # see focus_project(persist=False)

    # -- paths
    @property
    def lantide_dir(self) -> Path:
        return layout.lantide_dir(self.root)

    @property
    def settings_path(self) -> Path:
        return layout.settings_path(self.root)

    @property
    def session_path(self) -> Path:
        return layout.session_path(self.root)

    @property
    def cache_db_path(self) -> Path:
        return layout.cache_db_path(self.root)

    @property
    def conversations_dir(self) -> Path:
        return layout.conversations_dir(self.root)

    @property
    def ledger_dir(self) -> Path:
        return layout.ledger_dir(self.root)

    @property
    def data_dir(self) -> Path:
        return layout.data_dir(self.root)

    @property
    def projects_dir(self) -> Path:
        return layout.projects_dir(self.root)

    @property
    def name(self) -> str:
        return self.settings.get("name") or self.root.name

    @property
    def connections(self) -> list[dict[str, Any]]:
        """External connections, without secrets (those live in the keyring). Entries that
        are not objects (a hand edit gone wrong) are left out here and named by
        :attr:`connection_problems`; the file is left as it is."""
        raw = self.settings.get("connections")
        return [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []

    @property
    def connection_problems(self) -> list[str]:
        """What in workspace.json's ``connections`` cannot be used, in words."""
        raw = self.settings.get("connections")
        if raw is None:
            return []
        if not isinstance(raw, list):
            return [
                f"'connections' is {type(raw).__name__}, not a list; "
                "no connection is used until it is fixed"
            ]
        return [
            f"connection entry {i + 1} ({c!r}) is not an object; it is left out"
            for i, c in enumerate(raw)
            if not isinstance(c, dict)
        ]

    # -- lifecycle
    @staticmethod
    def is_workspace(root: Path) -> bool:
        return layout.settings_path(root).is_file()

    @classmethod
    def create(cls, root: Path | str, name: str | None = None) -> Workspace:
        """Create a workspace in ``root`` (which may exist and hold files)."""
        root = Path(root).resolve()
        if root.exists() and not root.is_dir():
            raise WorkspaceError(
                f"{root} exists and is not a folder",
                hint="Choose another path.",
                code="NOT_A_FOLDER",
            )
        if cls.is_workspace(root):
            raise _already_a_workspace(root)
        folders = (
            layout.lantide_dir(root),
            layout.conversations_dir(root),
            layout.ledger_dir(root),
            layout.data_dir(root),
            layout.projects_dir(root),
        )
        in_the_way = [
            folder.relative_to(root).as_posix()
            for folder in folders
            if folder.exists() and not folder.is_dir()
        ]
        if in_the_way:  # checked before anything is made: init changes nothing then
            raise WorkspaceError(
                f"{root} has files where the workspace needs folders: "
                f"{', '.join(in_the_way)} (not a folder); nothing was changed",
                hint="Rename or move those files, or choose another folder.",
                code="FILE_IN_THE_WAY",
            )
        for folder in folders[1:]:
            folder.mkdir(parents=True, exist_ok=True)
        settings = {
            "version": WORKSPACE_FORMAT_VERSION,
            "name": name or root.name,
            "created_at": _now(),
            "connections": [],
        }
        try:  # created, never replaced: of two racing inits, the second is refused
            atomic_create_bytes(
                layout.settings_path(root),
                (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
            )
        except FileExistsError:
            raise _already_a_workspace(root) from None
        return cls(root, settings)

    @classmethod
    def open(cls, root: Path | str, *, lock: bool = True) -> Workspace:
        """Open an existing workspace; with ``lock`` this process owns it until :meth:`close`."""
        root = Path(root).expanduser().resolve()
        if not root.is_dir():
            raise MissingFileError(
                root, "workspace folder", hint=f"Create one with: lantide init {root}"
            )
        if not cls.is_workspace(root):
            raise NotAWorkspaceError(root)
        settings = read_json_object(layout.settings_path(root), "workspace settings")
        ws = cls(root, settings)
        if lock:
            ws._lock.acquire()
        for folder in (ws.conversations_dir, ws.ledger_dir):
            folder.mkdir(exist_ok=True)
        return ws

    def close(self) -> None:
        self._lock.release()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def save_settings(self) -> None:
        """Write ``settings`` as a whole. Changes go through :meth:`update_settings`."""
        atomic_write_json(self.settings_path, self.settings)

    def update_settings(self, change: Callable[[dict[str, Any]], bool | None]) -> dict[str, Any]:
        """Apply ``change`` to workspace.json as it is on disk now, under the file's lock,
        so a stale copy never undoes another writer's change (or a hand edit). A ``change``
        that returns False changed nothing: the file is not written."""
        with file_lock(self.settings_path):
            fresh = read_json_object(self.settings_path, "workspace settings")
            if change(fresh) is not False:
                atomic_write_json(self.settings_path, fresh)
        self.settings = fresh
        return fresh

    # -- session state (restored by the app and shared with the command line)
    def load_session(self) -> dict[str, object]:
        """session.json as it is (Lantide's scratch, but a hand edit can put anything
        there: readers check what they take), with an in-memory focus applied."""
        session = self._load_session_file()
        if self._focus_in_memory is not None:
            session["focused_project"] = self._focus_in_memory
        return session

    def _load_session_file(self) -> dict[str, object]:
        if not self.session_path.exists():
            return {}
        try:
            return read_json_object(self.session_path, "session state")
        except CorruptFileError:
            if not self._lock.held:
                return {}  # not ours to move: the process holding the workspace decides
            # Session state is Lantide's own scratch, not the user's work: start afresh
            # but keep the broken file for inspection.
            self.session_path.replace(self.session_path.with_suffix(".json.broken"))
            return {}

    def save_session(self, session: Mapping[str, object]) -> None:
        atomic_write_json(self.session_path, session)

    @property
    def focused_project_name(self) -> str | None:
        name = self.load_session().get("focused_project")
        # session.json is Lantide's scratch, but a hand edit can put anything there
        return name if isinstance(name, str) and name.strip() else None

    def focus_project(self, name: str | None, *, persist: bool = True) -> Project | None:
        """Focus a project. ``persist=False`` focuses it for this object only: a command
        running beside the open app (``lantide prompt --project``) must not move the
        app's focus."""
        project = self.project(name) if name else None
        if not persist:
            self._focus_in_memory = project.dirname if project else None
            return project
        session = self.load_session()
        session["focused_project"] = project.dirname if project else None
        self.save_session(session)
        return project

    def focused_project(self) -> Project | None:
        name = self.focused_project_name
        if not name:
            return None
        try:
            return self.project(name)
        except ProjectNotFoundError:
            return None

    # -- projects
    def project_dirnames(self) -> list[str]:
        if not self.projects_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.projects_dir.iterdir() if p.is_dir() and not p.name.startswith(".")
        )

    def list_projects(
        self,
        *,
        include_archived: bool = False,
        problems: list[tuple[str, LantideError]] | None = None,
    ) -> list[Project]:
        """Projects in name order. A project whose project.json cannot be read is left
        out (a problem for itself only, not for the list) and, when ``problems`` is
        given, reported there as ``(folder name, error)``."""
        out = []
        for dirname in self.project_dirnames():
            if not (self.projects_dir / dirname / "project.json").exists():
                continue  # a stray folder, not a project
            try:
                project = Project.load(self.root, dirname)
            except LantideError as exc:
                if problems is not None:
                    problems.append((dirname, exc))
                continue
            if include_archived or not project.is_archived:
                out.append(project)
        return out

    def project(self, name: str) -> Project:
        """A project by folder name or by its display name."""
        if name and not _is_dir(self.projects_dir / name):
            for dirname in self.project_dirnames():
                try:
                    if Project.load(self.root, dirname).name == name:
                        name = dirname
                        break
                except LantideError:
                    continue
        path = self.projects_dir / name / "project.json"
        if not name or not _is_dir(self.projects_dir / name) or "/" in name or name in (".", ".."):
            known = ", ".join(self.project_dirnames()) or "none"
            shown = name if len(name) <= 120 else f"{name[:120]}…"
            raise ProjectNotFoundError(
                f"no project {shown!r} in {self.root}",
                hint=f"Known projects: {known}.",
            )
        if not path.exists():
            raise MissingFileError(
                path, "project file", hint="Restore project.json or remove the folder."
            )
        return Project.load(self.root, name)

    def create_project(
        self,
        name: str,
        *,
        status: str = "planning",
        plan_text: str | None = None,
        report_text: str | None = None,
    ) -> Project:
        name = validate_project_name(name)
        if status not in PROJECT_STATUSES:
            raise WorkspaceError(
                f"invalid project status {status!r}",
                hint=f"Use one of: {', '.join(PROJECT_STATUSES)}.",
                code="BAD_STATUS",
            )
        pdir = self.projects_dir / name
        self._check_name_free(name)
        layout.sql_dir(pdir).mkdir(parents=True)
        project = Project(
            self.root,
            name,
            {
                "name": name,
                "status": status,
                "plan": "plan.md",
                "report": "report.md",
                "archived": [],
                "created_at": _now(),
            },
        )
        atomic_write_text(
            project.plan_path, plan_text if plan_text is not None else f"# Plan: {name}\n"
        )
        atomic_write_text(
            project.report_path, report_text if report_text is not None else f"# Report: {name}\n"
        )
        project.save()
        return project

    def _check_name_free(self, name: str, renaming: str | None = None) -> None:
        """No other project folder may have this name in any letter case: on Windows and
        macOS disks they would be one folder when the workspace moves there."""
        taken = [
            d for d in self.project_dirnames() if d.casefold() == name.casefold() and d != renaming
        ]
        if taken or ((self.projects_dir / name).exists() and name != renaming):
            existing = self.projects_dir / (taken[0] if taken else name)
            raise WorkspaceError(
                f"project {name!r} already exists ({existing})",
                hint="Choose another name (names that differ only in "
                "letter case count as the same).",
                code="PROJECT_EXISTS",
            )

    def rename_project(self, old: str, new: str) -> Project:
        project = self.project(old)
        new = validate_project_name(new)
        target = self.projects_dir / new
        self._check_name_free(new, renaming=project.dirname)
        project.dir.rename(target)
        renamed = Project.load(self.root, new)
        renamed.update(lambda data: data.__setitem__("name", new))
        session = self.load_session()
        if session.get("focused_project") == old:
            session["focused_project"] = new
            self.save_session(session)
        return renamed

    def archive_project(self, name: str, archived: bool = True) -> Project:
        """Hide a project from the default list; its files stay where they are."""
        project = self.project(name)

        def change(data: dict[str, object]) -> None:
            if archived:
                data["archived_at"] = _now()
            else:
                data.pop("archived_at", None)

        project.update(change)
        return project

    def delete_project_to_trash(self, name: str) -> Path:
        """Move a project folder under ``.lantide/trash`` (never deleted outright)."""
        project = self.project(name)
        trash = layout.trash_dir(self.root)
        trash.mkdir(exist_ok=True)
        target = layout.trashed_project_path(
            self.root, project.dirname, datetime.now().strftime("%Y%m%d%H%M%S")
        )
        shutil.move(str(project.dir), target)
        return target

    def to_dict(self) -> WorkspaceSummary:
        return {
            "root": str(self.root),
            "name": self.name,
            "projects": [p.to_dict() for p in self.list_projects(include_archived=True)],
            "connections": self.connections,
        }
