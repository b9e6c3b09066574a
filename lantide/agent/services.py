"""The engine layers the agent's tools call: query, docs, knowledge.

Each layer is reached through a small interface that says what the agent uses of it:
:class:`AgentQuery` (the query layer's :class:`~lantide.query.service.QueryService`),
:class:`AgentDocuments` (the docs layer's agent API, :mod:`lantide.docs.agent_api`) and
:class:`AgentKnowledge` (the knowledge layer's :class:`~lantide.knowledge.KnowledgeBase`).
The layers are imported inside the methods that first need them, so ``lantide prompt``
and a chat that never queries pay for neither DuckDB nor the Markdown parser at start-up.

One :class:`EngineServices` per workspace session. The query service (DuckDB) opens on
first use; the desktop app passes the QueryService it already has.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from lantide.errors import LantideError
from lantide.workspace.model import Project, Workspace
from lantide.workspace.settings import Settings

if TYPE_CHECKING:
    from lantide.docs.agent_view_types import DocumentUpdate, DocumentView, ResolveResult
    from lantide.knowledge.layer import Expansion, KnowledgeLayer
    from lantide.knowledge.proposals import ProposalResult
    from lantide.knowledge.reorganize import ReorganizeResult
    from lantide.query.browse import RelationInfo, TableSchema
    from lantide.query.cancel import CancelScope
    from lantide.query.catalog import Catalog
    from lantide.query.grid_filters import ColumnFilter
    from lantide.query.listing import TableListing
    from lantide.query.profile import TableProfile
    from lantide.query.projects import ProjectArg
    from lantide.query.result_types import PreviewAnswer, RunAnswer, Validation
    from lantide.query.sourcerun import Progress, SourceRunReport, StatementGate
    from lantide.query.tab_service import TabCreated


COUNT_TTL = 5.0  # seconds a cached-table count is reused


class AgentQuery(Protocol):
    """What the agent calls on the query layer (:class:`lantide.query.service.QueryService`)."""

    @property
    def catalog(self) -> Catalog: ...

    def cancel_scope(self, name: str = "") -> CancelScope: ...

    def interrupt(self) -> int: ...

    def close(self) -> None: ...

    # Results are the query layer's JSON-serializable dicts (shapes: lantide.query.service).
    def show_tables(self) -> TableListing: ...

    def read_schema(self, table: str) -> TableSchema: ...

    def relation_info(self, relation_name: str) -> RelationInfo: ...

    def fetch_rows(
        self,
        relation_name: str,
        offset: int = 0,
        limit: int = 200,
        order_by: list[tuple[str, str]] | None = None,
        filters: Sequence[ColumnFilter] | None = None,
    ) -> list[tuple[Any, ...]]: ...

    def profile_table(
        self, relation_name: str, *, bins: int = 10, top: int = 10, columns: list[str] | None = None
    ) -> TableProfile: ...

    def preview_sql(self, sql: str, rows: int) -> PreviewAnswer: ...

    def validate_query(self, sql: str) -> Validation: ...

    def run_query(
        self,
        sql: str,
        result_label: str | None = None,
        purpose: str | None = None,
        *,
        project: ProjectArg = None,
        large_remote_warning_id: str | None = None,
        allow_complex: bool = False,
        max_cell_chars: int | None = None,
        purpose_required: bool = True,
    ) -> RunAnswer: ...

    def run_sql_tab(
        self,
        project: ProjectArg,
        tab: str,
        purpose: str | None = None,
        *,
        large_remote_warning_id: str | None = None,
        max_cell_chars: int | None = None,
        purpose_required: bool = True,
    ) -> RunAnswer: ...

    def source_run_sql_tab(
        self,
        project: ProjectArg,
        tab: str,
        purpose: str | None = None,
        progress: Progress | None = None,
        *,
        large_remote_warning_id: str | list[str] | None = None,
        statement_gate: StatementGate | None = None,
    ) -> SourceRunReport: ...

    def create_sql_tab(self, project: ProjectArg, name: str, sql: str) -> TabCreated: ...


class AgentKnowledge(Protocol):
    """What the agent calls on the knowledge layer (:class:`lantide.knowledge.KnowledgeBase`)."""

    def layer(self, budget_tokens: int | None = ...) -> KnowledgeLayer: ...

    def expand(self, heading: str, max_tokens: int = ...) -> Expansion: ...

    def needs_reorganize(self) -> bool: ...

    def reorganize(
        self, complete: Callable[[str, str], str], *, apply: bool = True
    ) -> list[ReorganizeResult]: ...

    def propose(
        self,
        complete: Callable[[str, str], str],
        *,
        conversation_id: str,
        turn: int,
        analyst_messages: str | list[str],
        assistant_reply: str = "",
        max_proposals: int = ...,
    ) -> ProposalResult: ...


class AgentDocuments:
    """The docs layer's agent API (:mod:`lantide.docs.agent_api`): the Plan/Report view the
    model reads, a whole-text update and a batch of resolutions, each written with its
    sidecar by the docs layer."""

    def agent_view(self, project: Project, kind: str) -> DocumentView:
        from lantide.docs.agent_api import agent_view

        return agent_view(project, kind)

    def update_document(
        self, project: Project, kind: str, content: str, by: str = "agent"
    ) -> DocumentUpdate:
        from lantide.docs.agent_api import update_document

        return update_document(project, kind, content, by=by)

    def resolve_annotations(
        self, project: Project, kind: str, items: list[dict[str, Any]], by: str = "agent"
    ) -> ResolveResult:
        from lantide.docs.agent_api import resolve_annotations

        return resolve_annotations(project, kind, items, by=by)

    # The agent's own edits go through these: pending the analyst's review, or written at
    # once by the workspace's agent_edits setting (lantide.docs.pending_edits).
    def submit_update(
        self, project: Project, kind: str, content: str, *, by: str, conversation: str | None
    ) -> dict[str, Any]:
        from lantide.docs.edit_submit import submit_update

        return submit_update(project, kind, content, by=by, conversation=conversation)

    def submit_resolution(
        self,
        project: Project,
        kind: str,
        items: list[dict[str, Any]],
        *,
        by: str,
        conversation: str | None,
    ) -> dict[str, Any]:
        from lantide.docs.edit_submit import submit_resolution

        return submit_resolution(project, kind, items, by=by, conversation=conversation)

    def pending_edits(self, project: Project, kind: str | None = None) -> list[dict[str, Any]]:
        """The pending edits of ``project`` (of one document), as the agent is told them."""
        from lantide.docs.pending_edits import edit_summary, pending_for

        return [edit_summary(e) for e in pending_for(project, kind)]


class EngineServices:
    def __init__(
        self, workspace: Workspace, settings: Settings, *, query_service: AgentQuery | None = None
    ):
        self.workspace = workspace
        self.settings = settings
        self.documents = AgentDocuments()
        self._query = query_service
        self._owns_query = query_service is None
        self._knowledge_bases: dict[str | None, AgentKnowledge] = {}
        self._count: tuple[float, int] | None = None
        self._lock = threading.Lock()

    # -- query layer
    def query(self) -> AgentQuery:
        with self._lock:
            if self._query is None:
                from lantide.query.service import QueryService

                self._query = QueryService(self.workspace, self.settings.query)
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
        service cannot be opened (the summary says so rather than guessing). Kept for
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

    # -- knowledge layer
    def knowledge(self, project: Project | None = None) -> AgentKnowledge:
        """The knowledge base (user knowledge plus ``project``'s), cached per project."""
        from lantide.knowledge.base import KnowledgeBase

        key = project.dirname if project is not None else None
        with self._lock:
            if key not in self._knowledge_bases:
                self._knowledge_bases[key] = KnowledgeBase.for_project(project)
            return self._knowledge_bases[key]

    def close(self) -> None:
        if self._owns_query and self._query is not None:
            self._query.close()
            self._query = None
