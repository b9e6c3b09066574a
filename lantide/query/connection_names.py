"""The connections a workspace names, without what reaches them.

Every statement's table names are matched against the workspace's connections
(:meth:`ConnectionNames.match`), and the data files' schemas may not take a connection's
name; both need only the names in ``.lantide/workspace.json``. What connects, transpiles
and streams (:class:`lantide.query.external.ExternalSources`, a ``ConnectionNames`` too,
with the keyring's module) loads when a statement or a listing reaches a connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lantide.query.names import same_name

if TYPE_CHECKING:
    from lantide.query.guard import TableRef
    from lantide.workspace.model import Workspace


class ConnectionNames:
    """The names of one workspace's connections, read from its settings on every call (a
    connection added or removed meanwhile counts at once)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def names(self) -> list[str]:
        return [
            str(e.get("name"))
            for e in self.workspace.connections
            if isinstance(e, dict) and e.get("name")
        ]

    def match(self, ref: TableRef) -> str | None:
        """The connection a table reference names with its first part, if any."""
        first = ref.catalog or ref.schema
        if not first:
            return None
        for name in self.names():
            if same_name(name, first):
                return name
        return None
