"""A project's lineage as a graph to draw: nodes, edges and a layered layout, left to right.

:func:`lineage_graph` takes what ``QueryService.lineage(project)`` and
``list_sql_tabs(project)`` answer and returns::

    {"nodes": [{"id", "kind", "name", "label", "layer", "row", "state"?, "error"?}],
     "edges": [{"source", "target", "back", "via"}], "layers": N, "rows": M,
     "cycle": [tab, ...] | None}

- ``kind``: ``tab`` (a SQL tab of the project, with its ``state``: ``up_to_date``,
  ``stale`` or ``never_run``), ``data`` (a data file or sheet), ``cached`` (a cached table
  made elsewhere), ``external`` (a table of a connection), ``file`` (a file read through a
  table function) and ``missing`` (a name that is nothing yet: the run will fail on it).
- ``name`` is what opens the node (the tab's name, the table as written in SQL);
  ``label`` is the name for a reader (``book.Sheet1``).
- An edge goes from what is read to the tab that reads it. Tabs that read each other in a
  cycle are drawn all the same: the edges that close a cycle are ``back`` edges, left out
  of the layering.
- ``layer`` is the column (0 on the left): a tab sits one layer right of the deepest thing
  it reads; a source sits just left of its first reader. ``row`` orders a layer's nodes
  (a few barycentre sweeps keep edges short and crossings few; ties by name), so the same
  project always gives the same picture. An edge that spans several layers has a waypoint
  in each layer between (``via``, ``(layer, row)``), which takes a row there as a node
  does, so no edge runs through a box.

:func:`upstream` is the chain a selected node reads from (the nodes and the edges to
highlight). Pure Python, no Qt: the desktop app draws the result with QGraphicsView.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NotRequired, TypedDict

TAB = "tab"
DATA = "data"
CACHED = "cached"
EXTERNAL = "external"
FILE = "file"
MISSING = "missing"

SWEEPS = 4  # barycentre passes (down and up); more change little on a project's few tabs


class GraphNode(TypedDict):
    id: str
    kind: str
    name: str
    label: str
    layer: int
    row: int
    state: NotRequired[str | None]
    error: NotRequired[str]


class GraphEdge(TypedDict):
    source: str  # what is read
    target: str  # the tab that reads it
    back: bool  # closes a cycle (left out of the layering)
    via: list[tuple[int, int]]  # (layer, row) of each layer the edge passes between its ends


class LineageGraph(TypedDict):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    layers: int
    rows: int
    cycle: list[str] | None


def node_id(kind: str, name: str) -> str:
    return f"{kind}:{name}"


def readable_name(name: str) -> str:
    """``"book"."Sheet1"`` as ``book.Sheet1`` (parsed by sqlglot; the text itself when it
    does not parse as a table name)."""
    import sqlglot
    from sqlglot import exp

    try:
        table = sqlglot.parse_one(name, read="duckdb", into=exp.Table)
    except Exception:
        return name
    if not isinstance(table, exp.Table) or not table.name:
        return name
    return ".".join(p for p in (table.catalog, table.db, table.name) if p)


def lineage_graph(
    lineage: Mapping[str, object], tabs: Sequence[Mapping[str, object]]
) -> LineageGraph:
    """The graph of one project (see the module docstring)."""
    states = {str(t.get("tab")): t for t in tabs}
    entries = [e for e in _dicts(lineage.get("tabs")) if e.get("tab")]
    nodes: dict[str, GraphNode] = {}
    edges: list[tuple[str, str]] = []

    def add(kind: str, name: str, label: str | None = None) -> str:
        key = node_id(kind, name.casefold() if kind != TAB else name)
        if key not in nodes:
            nodes[key] = {
                "id": key,
                "kind": kind,
                "name": name,
                "label": label or name,
                "layer": 0,
                "row": 0,
            }
        return key

    for entry in entries:
        tab = str(entry["tab"])
        key = add(TAB, tab)
        state = states.get(tab, {})
        nodes[key]["state"] = _text(state.get("state"))
        error = entry.get("error") or state.get("error")
        if isinstance(error, Mapping) and error.get("message"):
            nodes[key]["error"] = str(error["message"])
    tab_names = {str(e["tab"]) for e in entries}
    for entry in entries:
        reader = node_id(TAB, str(entry["tab"]))
        inputs: list[str] = []
        for up in _strings(entry.get("reads_tabs")):
            inputs.append(add(TAB, up) if up in tab_names else add(MISSING, up))
        for source in _dicts(entry.get("reads_sources")):
            table = str(source.get("table") or "")
            inputs.append(add(DATA, table, readable_name(table)))
        for name in _strings(entry.get("reads_cached")):
            inputs.append(add(CACHED, name, readable_name(name)))
        for name in _strings(entry.get("reads_external")):
            inputs.append(add(EXTERNAL, name, readable_name(name)))
        for path in _strings(entry.get("reads_files")):
            inputs.append(add(FILE, path))
        for name in _strings(entry.get("unknown_tables")):
            inputs.append(add(MISSING, name, readable_name(name)))
        for up in dict.fromkeys(inputs):
            edges.append((up, reader))
    back = _back_edges(sorted(nodes, key=_order_key), edges)
    forward = [e for e in edges if e not in back]
    layers = _layers(nodes, forward)
    # an edge across several layers passes through a waypoint in each layer between, which
    # takes a row there like a node: no edge is drawn through a box
    waypoints: dict[tuple[str, str], list[str]] = {}
    chained: list[tuple[str, str]] = []
    for a, b in forward:
        steps = [f"~{a}>{b}#{k}" for k in range(layers[a] + 1, layers[b])]
        for k, step in zip(range(layers[a] + 1, layers[b]), steps, strict=True):
            layers[step] = k
        waypoints[(a, b)] = steps
        hops = [a, *steps, b]
        chained.extend(zip(hops, hops[1:], strict=False))
    rows = _order(layers, chained)
    for key, node in nodes.items():
        node["layer"] = layers[key]
        node["row"] = rows[key]
    out_nodes = sorted(nodes.values(), key=lambda n: (n["layer"], n["row"]))
    cycle = lineage.get("cycle")
    return {
        "nodes": out_nodes,
        "edges": [
            {
                "source": a,
                "target": b,
                "back": (a, b) in back,
                "via": [(layers[w], rows[w]) for w in waypoints.get((a, b), [])],
            }
            for a, b in edges
        ],
        "layers": 1 + max(layers.values(), default=-1),
        "rows": 1 + max(rows.values(), default=-1),
        "cycle": list(_strings(cycle)) if cycle else None,
    }


def upstream(graph: LineageGraph, start: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The nodes ``start`` reads from, directly or not (``start`` included), and the edges
    among them: the chain to highlight."""
    into: dict[str, list[str]] = {}
    for edge in graph["edges"]:
        into.setdefault(edge["target"], []).append(edge["source"])
    seen = {start}
    chain: set[tuple[str, str]] = set()
    todo = [start]
    while todo:
        node = todo.pop()
        for up in into.get(node, []):
            chain.add((up, node))
            if up not in seen:
                seen.add(up)
                todo.append(up)
    return seen, chain


# -- layout -------------------------------------------------------------------------------


def _order_key(key: str) -> tuple[int, str]:
    """Tabs first, then sources, each by name: the order every pass starts from."""
    kind, _, name = key.partition(":")
    return (0 if kind == TAB else 1, name.casefold())


def _back_edges(order: list[str], edges: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The edges that close a cycle, found by a depth-first walk in a fixed order."""
    out: dict[str, list[str]] = {}
    for a, b in edges:
        out.setdefault(a, []).append(b)
    state: dict[str, int] = {}  # 1 on the walk's path, 2 done
    back: set[tuple[str, str]] = set()
    for root in order:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(sorted(out.get(root, []), key=_order_key)))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(sorted(out.get(child, []), key=_order_key))))
    return back


def _layers(nodes: Mapping[str, GraphNode], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Longest path from the sources (edges without a cycle), then each node that only is
    read moved right, next to its nearest reader."""
    into: dict[str, list[str]] = {n: [] for n in nodes}
    out: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        into[b].append(a)
        out[a].append(b)
    layer: dict[str, int] = {}
    pending = {n: len(into[n]) for n in nodes}
    ready = sorted((n for n, k in pending.items() if k == 0), key=_order_key)
    while ready:
        node = ready.pop(0)
        layer[node] = max((layer[u] + 1 for u in into[node]), default=0)
        for down in out[node]:
            pending[down] -= 1
            if pending[down] == 0:
                ready.append(down)
        ready.sort(key=_order_key)
    for n in nodes:  # unreachable only through a cycle's back edge: never, but be total
        layer.setdefault(n, 0)
    for n in sorted(nodes, key=lambda k: -layer[k]):
        if not into[n] and out[n]:
            layer[n] = max(0, min(layer[d] for d in out[n]) - 1)
    return layer


def _order(layers: Mapping[str, int], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Rows within each layer: barycentre sweeps, down then up, ties by name."""
    count = 1 + max(layers.values(), default=-1)
    columns: list[list[str]] = [
        sorted((n for n, k in layers.items() if k == i), key=_order_key) for i in range(count)
    ]
    into: dict[str, list[str]] = {}
    out: dict[str, list[str]] = {}
    for a, b in edges:
        into.setdefault(b, []).append(a)
        out.setdefault(a, []).append(b)

    def centre(
        n: str, neighbours: Mapping[str, list[str]], position: Mapping[str, int], own: int
    ) -> float:
        near = [position[m] for m in neighbours.get(n, []) if m in position]
        return sum(near) / len(near) if near else float(own)

    def sweep(indices: Iterable[int], neighbours: Mapping[str, list[str]]) -> None:
        for i in indices:
            position = {n: r for column in columns for r, n in enumerate(column)}
            keys = {
                n: (centre(n, neighbours, position, position[n]), position[n]) for n in columns[i]
            }
            columns[i] = sorted(columns[i], key=keys.__getitem__)

    for _ in range(SWEEPS):
        sweep(range(1, count), into)
        sweep(range(count - 2, -1, -1), out)
    return {n: r for column in columns for r, n in enumerate(column)}


def _dicts(value: object) -> list[Mapping[str, object]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _strings(value: object) -> list[str]:
    return [str(v) for v in value if v is not None] if isinstance(value, list) else []


def _text(value: object) -> str | None:
    return None if value is None else str(value)
