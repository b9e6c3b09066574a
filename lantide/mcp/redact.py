"""What an outside agent sees of the analyst's file system: paths relative to the workspace.

The agent's tools answer the in-app agent with absolute paths in places (the workspace's
root in the app context, a file in a DuckDB error, a client's scope, the workspaces a
client of all workspaces may select). An outside agent, even an Observe one, has no need
for them, and they name the user's home folder (often the user's name). Every MCP result
and error goes through :func:`relative_paths` on its way out: a path inside the workspace
becomes relative to it (``projects/q3-churn/plan.md``, the workspace itself ``.``), any
other path under the home folder becomes ``~/...`` (how ``list_workspaces`` shows the
workspaces a client of all workspaces may pass to ``select_workspace``). The activity log
and the ledger are the analyst's own files and keep what was recorded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_SEPARATORS = "/\\\\" if os.sep == "\\" else "/"


def _spellings(path: Path) -> list[str]:
    """The ways a folder is written in text: as given and with its links resolved."""
    out: list[str] = []
    for form in (str(path), os.path.realpath(path)):
        form = form.rstrip("/\\")
        if form and form not in out and form not in ("/", "\\"):
            out.append(form)
    return sorted(out, key=len, reverse=True)  # the longest first: /home/u/ws before /home/u


class PathRewriter:
    """Rewrites the absolute paths of a workspace and of the home folder in text."""

    def __init__(self, workspaces: Iterable[Path], home: Path | None = None):
        self._rules: list[tuple[re.Pattern[str], str]] = []
        for root in workspaces:
            for form in _spellings(root):
                # a path inside: the workspace's part of it, relative
                inside = re.compile(re.escape(form) + f"[{_SEPARATORS}]")
                self._rules.append((inside, ""))
                # the workspace itself (not a longer name that starts the same)
                self._rules.append((re.compile(re.escape(form) + r"(?![\w.-])"), "."))
        home = home if home is not None else _home()
        if home is not None:
            for form in _spellings(home):
                # not a longer name that starts the same (/home/al is not /home/alice)
                self._rules.append((re.compile(re.escape(form) + r"(?![\w.-])"), "~"))

    def text(self, value: str) -> str:
        for pattern, replacement in self._rules:
            value = pattern.sub(replacement, value)
        return value

    def value(self, value: Any) -> Any:
        """``value`` with every string in it rewritten (dicts, lists and tuples walked)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                (self.text(k) if isinstance(k, str) else k): self.value(v) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def _home() -> Path | None:
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no home folder known (a service account)
        return None
    return home if len(home.parts) > 1 else None  # a home of "/" hides nothing


def relative_paths(value: Any, workspaces: Iterable[Path]) -> Any:
    """``value`` (a tool result or error) with workspace-relative and ``~`` paths."""
    return PathRewriter(workspaces).value(value)
