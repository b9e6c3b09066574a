"""The engine layers the agent's tools call: query, docs, knowledge, opened lazily.

One :class:`EngineServices` per workspace session. The query service (DuckDB) opens on
first use, so ``lantide prompt`` and a chat that never queries do not pay for it; the
desktop app passes the QueryService it already has. A layer that is missing from this
installation is a clear error for the tool that needs it, not a crash of the turn.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from lantide.errors import LantideError
from lantide.workspace.model import Workspace
from lantide.workspace.settings import Settings


COUNT_TTL = 5.0  # seconds a cached-table count is reused


class LayerUnavailable(LantideError):
    code = "LAYER_UNAVAILABLE"


def _import(module: str, what: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise LayerUnavailable(f"{what} is not available in this Lantide build ({exc})",
                               hint="Update Lantide; meanwhile use the tools that work.") from None


class EngineServices:
    def __init__(self, workspace: Workspace, settings: Settings, *, query_service: Any = None):
        self.workspace = workspace
        self.settings = settings
        self._query = query_service
        self._owns_query = query_service is None
        self._knowledge_bases: dict[str | None, Any] = {}
        self._count: tuple[float, int] | None = None
        self._lock = threading.Lock()

    # -- query layer
    def query(self):
        with self._lock:
            if self._query is None:
                module = _import("lantide.query", "the query engine")
                self._query = module.QueryService(self.workspace, self.settings.query)
            return self._query

    @property
    def query_opened(self) -> bool:
        return self._query is not None

    def interrupt_query(self) -> None:
        """Stop every query of the workspace, the analyst's too (for shutting down; a turn's
        own queries are stopped by its CancelToken, see tools.query_tools)."""
        if self._query is not None:
            self._query.interrupt()

    def cached_table_count(self) -> int | None:
        """Cached tables in the workspace (opens the query service); None when the query
        layer cannot be opened (the summary says so rather than guessing). Kept for
        COUNT_TTL seconds, and dropped after every query tool, so an iteration rarely pays a
        DuckDB round trip for it."""
        now = time.monotonic()
        if self._count is not None and now - self._count[0] < COUNT_TTL:
            return self._count[1]
        try:
            service = self.query()
            count = len(service.catalog.all_cached())
        except LantideError:
            return None
        self._count = (now, count)
        return count

    def forget_counts(self) -> None:
        self._count = None

    # -- docs layer
    def docs(self):
        return _import("lantide.docs", "the Plan/Report layer")

    # -- knowledge layer
    def knowledge(self, project=None):
        """The knowledge base (user knowledge plus ``project``'s), cached per project.
        None when the knowledge layer is missing from this build."""
        key = project.dirname if project is not None else None
        with self._lock:
            if key not in self._knowledge_bases:
                try:
                    module = _import("lantide.knowledge", "the knowledge layer")
                except LayerUnavailable:
                    return None
                self._knowledge_bases[key] = module.KnowledgeBase.for_project(project)
            return self._knowledge_bases[key]

    def close(self) -> None:
        if self._owns_query and self._query is not None:
            close = getattr(self._query, "close", None)
            if callable(close):
                close()
            self._query = None
