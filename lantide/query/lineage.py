"""Lineage: what each SQL tab reads, from its parsed SQL, and the DAG across a project.

A tab's inputs are the tables its statement names (CTE names excluded), each resolved:

- ``tab``: another tab of the same project (its cached table), an edge of the DAG;
- ``data``: a data file or workbook sheet in ``data/``;
- ``cached``: a cached table made elsewhere (a labelled result, another project's tab);
- ``external``: a table of an external connection;
- ``unknown``: nothing by that name yet (the run will say so).

Files read through table functions (``read_csv('data/x.csv')``) are inputs too. A cycle
among tabs raises :class:`LineageCycle` naming the tabs; Source Run walks this DAG.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from lantide.errors import LantideError
from lantide.query.errors import LineageCycle, QueryErrorDict, error_fields
from lantide.query.guard import ParsedQuery, TableRef, check

TAB = "tab"
DATA = "data"
CACHED = "cached"
EXTERNAL = "external"
UNKNOWN = "unknown"


class InputDict(TypedDict):
    """An input as a lineage listing shows it."""

    kind: str
    table: str
    target: str


class TabLineageDict(TypedDict):
    """One tab of ``lineage(project)``."""

    tab: str
    reads_tabs: list[str]
    reads_sources: list[InputDict]  # data files and sheets
    reads_cached: list[str]
    reads_external: list[str]
    unknown_tables: list[str]
    reads_files: list[str]
    error: NotRequired[QueryErrorDict]  # the tab cannot be read or parsed


# An edge of the tab graph: "from" reads into "to" (a keyword, hence this form).
LineageEdge = TypedDict("LineageEdge", {"from": str, "to": str})


class ProjectLineage(TypedDict):
    """``lineage(project)``: the tabs, their edges and Source Run's order (or the cycle)."""

    project: str
    tabs: list[TabLineageDict]
    edges: list[LineageEdge]
    order: list[str] | None  # None when there is a cycle
    cycle: list[str] | None


@dataclass(frozen=True)
class Input:
    kind: str  # tab / data / cached / external / unknown
    name: str  # the table as written, display form
    target: str  # tab name, data file path, cached table, connection name
    detail: object = None

    def to_dict(self) -> InputDict:
        return {"kind": self.kind, "table": self.name, "target": self.target}


@dataclass
class TabLineage:
    tab: str
    sql: str
    sql_hash: str
    parsed: ParsedQuery | None = None
    inputs: list[Input] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    error: QueryErrorDict | None = None

    @property
    def upstream_tabs(self) -> list[str]:
        return sorted({i.target for i in self.inputs if i.kind == TAB}, key=str.casefold)

    def to_dict(self) -> TabLineageDict:
        out: TabLineageDict = {
            "tab": self.tab,
            "reads_tabs": self.upstream_tabs,
            "reads_sources": [i.to_dict() for i in self.inputs if i.kind == DATA],
            "reads_cached": [i.name for i in self.inputs if i.kind == CACHED],
            "reads_external": [i.name for i in self.inputs if i.kind == EXTERNAL],
            "unknown_tables": [i.name for i in self.inputs if i.kind == UNKNOWN],
            "reads_files": list(self.files),
        }
        if self.error:
            out["error"] = self.error
        return out


def sql_hash(sql: str) -> str:
    return hashlib.sha256(sql.encode("utf-8")).hexdigest()[:16]


def analyse_tab(
    tab: str,
    sql: str,
    resolve: Callable[[TableRef], Input],
    *,
    data_dir: Path | None = None,
    workspace_root: Path | None = None,
    known_table: Callable[[TableRef], bool] = lambda ref: True,
) -> TabLineage:
    """The lineage of one tab; the keywords are :func:`lantide.query.guard.check`'s."""
    lineage = TabLineage(tab=tab, sql=sql, sql_hash=sql_hash(sql))
    try:
        parsed = check(
            sql, data_dir=data_dir, workspace_root=workspace_root, known_table=known_table
        )
    except LantideError as exc:
        lineage.error = error_fields(exc)
        return lineage
    lineage.parsed = parsed
    lineage.files = list(parsed.files)
    lineage.inputs = [resolve(ref) for ref in parsed.tables]
    return lineage


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One cycle of ``graph`` (node -> upstream nodes) as a list of nodes, or None."""
    white, grey, black = 0, 1, 2
    color = {n: white for n in graph}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        color[node] = grey
        stack.append(node)
        for up in sorted(graph.get(node, []), key=str.casefold):
            if up not in color:
                continue
            if color[up] == grey:
                return stack[stack.index(up) :]
            if color[up] == white:
                found = visit(up)
                if found:
                    return found
        stack.pop()
        color[node] = black
        return None

    for node in sorted(graph, key=str.casefold):
        if color[node] == white:
            found = visit(node)
            if found:
                return found
    return None


def upstream_order(graph: dict[str, list[str]], target: str) -> list[str]:
    """``target`` and everything upstream of it, dependencies first (deterministic)."""
    needed: set[str] = set()
    todo = [target]
    while todo:
        node = todo.pop()
        if node in needed:
            continue
        needed.add(node)
        todo.extend(u for u in graph.get(node, []) if u in graph)
    sub = {n: [u for u in graph.get(n, []) if u in needed] for n in needed}
    cycle = find_cycle(sub)
    if cycle:
        raise LineageCycle(cycle)
    return topological(sub)


def topological(graph: dict[str, list[str]]) -> list[str]:
    """Kahn's algorithm; ties broken by name so the order is stable."""
    remaining = {n: set(u for u in ups if u in graph) for n, ups in graph.items()}
    order: list[str] = []
    while remaining:
        ready = sorted((n for n, ups in remaining.items() if not ups), key=str.casefold)
        if not ready:
            raise LineageCycle(
                find_cycle({n: list(u) for n, u in remaining.items()}) or sorted(remaining)
            )
        for n in ready:
            order.append(n)
            del remaining[n]
        for ups in remaining.values():
            ups.difference_update(ready)
    return order


def downstream_of(graph: dict[str, list[str]], tab: str) -> list[str]:
    """Tabs that read ``tab``, directly or through others."""
    out: set[str] = set()
    todo = [tab]
    while todo:
        node = todo.pop()
        for n, ups in graph.items():
            if node in ups and n not in out:
                out.add(n)
                todo.append(n)
    return sorted(out, key=str.casefold)
