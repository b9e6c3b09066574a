"""The query layer: DuckDB engine, data sources, the QEM, SQL tabs, lineage, Source Run.

``QueryService`` (lantide.query.service) is the facade every other layer calls; the QEM
rules live in :mod:`lantide.query.qem`, the guard in :mod:`lantide.query.guard`.
Importing this package is cheap: DuckDB loads when a service opens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lantide.query.cancel import CancelScope
from lantide.query.errors import (
    ConnectionProblem,
    LineageCycle,
    QueryCancelled,
    QueryError,
    QueryRefused,
    QueryTimeout,
    TabError,
    TableNotFound,
)

if TYPE_CHECKING:
    from lantide.query.service import QueryService

__all__ = [
    "QueryService",
    "CancelScope",
    "QueryError",
    "QueryRefused",
    "QueryCancelled",
    "QueryTimeout",
    "TableNotFound",
    "TabError",
    "LineageCycle",
    "ConnectionProblem",
]


def __getattr__(name: str) -> type[QueryService]:
    if name == "QueryService":
        from lantide.query.service import QueryService

        return QueryService
    raise AttributeError(name)
