"""What the analyst has open: tabs, the active tab, unsaved edits, the focused project.

The engine reads app state through :class:`AppStateProvider`, the one owner of the focused
project for a session: the agent reads the focus from it
(:meth:`AppStateProvider.focused_project_name`) and changes it through it
(:meth:`AppStateProvider.focus_project`), never through ``session.json`` behind its back.

- Headless (the command line, tests) the owner is the session file itself:
  :class:`SessionFileAppState` reads ``WORKSPACE/.lantide/session.json`` on every call and a
  focus change writes it once.
- In the desktop app the owner is the app's state (``lantide.ui.chat.chat_bridge.UiAppState``
  over ``AppServices``): it holds the focus in memory and writes ``session.json`` once, for
  the next start and for commands run beside the app; the file is never read back while
  the app runs.

``session.json``::

    {"focused_project": "q3-churn",
     "open_tabs": [{"type": "plan", "path": "projects/q3-churn/plan.md", "dirty": false}, ...],
     "active_tab": 0}

It also reads the desktop app's form of the same state: tabs as ``{"kind", "project",
"name", "dirty"}`` and ``active_tab`` as the active tab's entry.

The desktop app supplies its own provider with live state: ``OpenTab.content`` carries a
dirty editor's unsaved text (so the agent sees what the analyst sees), and
:meth:`AppStateProvider.tab_state` says whether a tab shows a file (the change itself is
announced once, by the tool's :class:`~lantide.agent.events.DocumentChanged` event). Paths
are relative to the workspace root, with ``/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from lantide.workspace import layout
from lantide.workspace.model import Project, ProjectNotFoundError, Workspace

TAB_TYPES = ("plan", "report", "sql", "table", "knowledge", "file")


class OpenTabDict(TypedDict):
    """An open tab as the agent is told it (``get_app_context``, the active tab layer)."""

    type: str
    path: str
    dirty: bool


@dataclass
class OpenTab:
    type: str
    path: str
    dirty: bool = False
    content: str | None = None  # unsaved editor text, when the app provides it

    @classmethod
    def from_dict(cls, raw: object) -> OpenTab | None:
        """From ``{"type", "path", "dirty"}``, or the desktop app's
        ``{"kind", "project", "name", "dirty"}`` (name: the document's file name, the SQL
        tab's name, or the table's name)."""
        if not isinstance(raw, dict):
            return None
        content = raw.get("content") if isinstance(raw.get("content"), str) else None
        raw_path, raw_type = raw.get("path"), raw.get("type")
        if isinstance(raw_path, str):
            return cls(
                raw_type if isinstance(raw_type, str) else "file",
                raw_path.replace("\\", "/"),
                bool(raw.get("dirty")),
                content,
            )
        kind, project, name = raw.get("kind"), raw.get("project"), raw.get("name")
        if not isinstance(kind, str) or not isinstance(name, str) or not name:
            return None
        if kind == "table":
            path = name
        elif not isinstance(project, str) or not project:
            return None
        elif kind == "sql":
            path = layout.sql_tab_relpath(project, name)
        else:
            path = layout.project_relpath(project, name)
        return cls(kind, path, bool(raw.get("dirty")), content)

    def to_dict(self) -> OpenTabDict:
        return {"type": self.type, "path": self.path, "dirty": self.dirty}


def is_html_report(tab: OpenTab | None) -> bool:
    """A Report tab showing the HTML Report (``projects/P/report.html``)."""
    return bool(tab and tab.type == "report" and tab.path.lower().endswith((".html", ".htm")))


class AppStateDict(TypedDict):
    focused_project: str | None
    open_tabs: list[OpenTabDict]
    active_tab: int | None


class TabState(TypedDict):
    """Whether a tab shows a file, holds unsaved edits, and reloaded it from disk."""

    open: bool
    dirty: bool
    reloaded: bool


@dataclass
class AppState:
    focused_project: str | None = None
    open_tabs: list[OpenTab] = field(default_factory=list)
    active_tab: int | None = None

    @property
    def active(self) -> OpenTab | None:
        if self.active_tab is None or not 0 <= self.active_tab < len(self.open_tabs):
            return None
        return self.open_tabs[self.active_tab]

    def to_dict(self) -> AppStateDict:
        return {
            "focused_project": self.focused_project,
            "open_tabs": [t.to_dict() for t in self.open_tabs],
            "active_tab": self.active_tab,
        }


class AppStateProvider(Protocol):
    def app_state(self) -> AppState:
        """The current state; called at every iteration, so keep it cheap."""
        ...

    def focused_project_name(self) -> str | None:
        """The focused project's folder name, as the owner holds it now (any thread;
        read several times per iteration, so cheaper than :meth:`app_state`)."""
        ...

    def focus_project(self, dirname: str | None) -> None:
        """Focus a project (the agent's ``focus_project``): the owner records it, and
        ``session.json`` is written once."""
        ...

    def tab_state(self, path: str) -> TabState:
        """Whether a tab shows the file at ``path`` and what it does when the tool's
        ``DocumentChanged`` event arrives (``{"open", "dirty", "reloaded"}``: a clean tab
        reloads), for the agent's tool result. Announces nothing itself."""
        ...


def focused_project(workspace: Workspace, app: AppStateProvider) -> Project | None:
    """The project ``app`` holds focused, or None (none, or its folder is gone)."""
    name = app.focused_project_name()
    if not name:
        return None
    try:
        return workspace.project(name)
    except ProjectNotFoundError:
        return None


class SessionFileAppState:
    """App state from ``.lantide/session.json`` (headless): the file is the owner of the
    focused project, read on every call (another process may have changed it) and written
    once by a focus change."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    def focused_project_name(self) -> str | None:
        return self.workspace.focused_project_name

    def focus_project(self, dirname: str | None) -> None:
        self.workspace.focus_project(dirname)

    def app_state(self) -> AppState:
        session = self.workspace.load_session()
        rows = session.get("open_tabs")
        tabs = (
            [
                t
                for t in (OpenTab.from_dict(r) for r in rows if isinstance(r, dict))
                if t is not None
            ]
            if isinstance(rows, list)
            else []
        )
        focused = session.get("focused_project")
        return AppState(
            focused_project=focused if isinstance(focused, str) else None,
            open_tabs=tabs,
            active_tab=_active_index(session.get("active_tab"), tabs),
        )

    def tab_state(self, path: str) -> TabState:
        # No editor is open headless; a desktop app reading session.json on start sees the file.
        tab = next((t for t in self.app_state().open_tabs if t.path == path), None)
        return {"open": tab is not None, "dirty": bool(tab and tab.dirty), "reloaded": False}


def _active_index(active: Any, tabs: list[OpenTab]) -> int | None:
    """``active_tab`` as an index, or as the active tab's own entry (matched by path)."""
    if isinstance(active, bool):
        return None
    if isinstance(active, int):
        return active if 0 <= active < len(tabs) else None
    tab = OpenTab.from_dict(active) if isinstance(active, dict) else None
    if tab is None:
        return None
    return next((i for i, t in enumerate(tabs) if t.path == tab.path), None)
