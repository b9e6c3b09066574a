"""The agent's tools (DESIGN.md section 6), filtered by state.

:func:`default_registry` holds every tool; :meth:`ToolRegistry.offered` gives the ones of
a state. Names and arguments are part of the contract.
"""

from __future__ import annotations

from functools import lru_cache

from lantide.agent.tools.registry import (
    ALL_STATES,
    EXECUTING,
    NO_PROJECT,
    PLANNING,
    Tool,
    ToolOutcome,
    ToolRegistry,
)


@lru_cache(maxsize=1)
def default_registry() -> ToolRegistry:
    from lantide.agent.tools import (
        chart_tools,
        doc_tools,
        html_tools,
        query_tools,
        step_tools,
        workspace_tools,
    )

    return ToolRegistry(
        [
            *workspace_tools.TOOLS,
            *query_tools.TOOLS,
            *doc_tools.TOOLS,
            *html_tools.TOOLS,
            *step_tools.TOOLS,
            *chart_tools.TOOLS,
        ]
    )


__all__ = [
    "ALL_STATES",
    "EXECUTING",
    "NO_PROJECT",
    "PLANNING",
    "Tool",
    "ToolOutcome",
    "ToolRegistry",
    "default_registry",
]
