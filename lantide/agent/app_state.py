"""What the analyst has open: tabs, the active tab, unsaved edits.

The engine reads app state through :class:`AppStateProvider`. Headless (the command line,
tests) :class:`SessionFileAppState` reads ``WORKSPACE/.lantide/session.json``::

    {"focused_project": "q3-churn",
     "open_tabs": [{"type": "plan", "path": "projects/q3-churn/plan.md", "dirty": false}, ...],
     "active_tab": 0}

It also reads the desktop app's form of the same state: tabs as ``{"kind", "project",
"name", "dirty"}`` and ``active_tab`` as the active tab's entry.

The desktop app supplies its own provider with live state: ``OpenTab.content`` carries a
dirty editor's unsaved text (so the agent sees what the analyst sees), and
:meth:`AppStateProvider.file_changed` is how ``sync_tab_content`` asks the UI to reload a
clean tab from disk. Paths are relative to the workspace root, with ``/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from lantide.workspace import layout
from lantide.workspace.model import Workspace

TAB_TYPES = ("plan", "report", "sql", "table", "knowledge", "file")


@dataclass
class OpenTab:
    type: str
    path: str
    dirty: bool = False
    content: str | None = None  # unsaved editor text, when the app provides it

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "OpenTab | None":
        """From ``{"type", "path", "dirty"}``, or the desktop app's
        ``{"kind", "project", "name", "dirty"}`` (name: the document's file name, the SQL
        tab's name, or the table's name)."""
        if not isinstance(raw, dict):
            return None
        content = raw.get("content") if isinstance(raw.get("content"), str) else None
        if isinstance(raw.get("path"), str):
            kind = raw.get("type") if isinstance(raw.get("type"), str) else "file"
            return cls(kind, raw["path"].replace("\\", "/"), bool(raw.get("dirty")), content)
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

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "path": self.path, "dirty": self.dirty}


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

    def to_dict(self) -> dict[str, Any]:
        return {"focused_project": self.focused_project,
                "open_tabs": [t.to_dict() for t in self.open_tabs],
                "active_tab": self.active_tab}


class AppStateProvider(Protocol):
    def app_state(self) -> AppState:
        """The current state; called at every iteration, so keep it cheap."""
        ...

    def file_changed(self, path: str) -> dict[str, Any]:
        """A file changed on disk: reload a clean tab showing it. Returns what happened
        (``{"reloaded": bool, "dirty": bool}``) for the agent's tool result."""
        ...


class SessionFileAppState:
    """App state from ``.lantide/session.json`` (headless)."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    def app_state(self) -> AppState:
        session = self.workspace.load_session()
        rows = session.get("open_tabs")
        tabs = [t for t in (OpenTab.from_dict(r) for r in rows if isinstance(r, dict))
                if t is not None] if isinstance(rows, list) else []
        focused = session.get("focused_project")
        return AppState(focused_project=focused if isinstance(focused, str) else None,
                        open_tabs=tabs,
                        active_tab=_active_index(session.get("active_tab"), tabs))

    def file_changed(self, path: str) -> dict[str, Any]:
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
