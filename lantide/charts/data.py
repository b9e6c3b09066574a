"""Filling a chart's data references with rows, through the query layer's public API.

:func:`resolve_data` turns each ``{"table": T}`` / ``{"step": S}`` of a checked
:class:`~lantide.charts.spec.ChartSpec` into ``{"values": [...]}`` read from DuckDB
(``QueryService.relation_info`` / ``fetch_rows``; a step's table is found in the cache
catalog by the step id that made it). At most :data:`MAX_CHART_ROWS` rows per reference:
more are cut and a note says so (aggregate in SQL to chart everything).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from lantide.charts.errors import ChartError
from lantide.charts.spec import ChartSpec, DataReference, line_of
from lantide.errors import LantideError

if TYPE_CHECKING:
    from lantide.query.browse import RelationInfo, TableSchema
    from lantide.query.catalog import Catalog
    from lantide.query.results import JSONValue

MAX_CHART_ROWS = 5_000


class ChartQuery(Protocol):
    """What charts read through the query layer (a ``QueryService`` has it all)."""

    @property
    def catalog(self) -> Catalog: ...

    def relation_info(self, relation_name: str) -> RelationInfo: ...

    def read_schema(self, table: str) -> TableSchema: ...

    def fetch_rows(
        self, relation_name: str, offset: int = 0, limit: int = 200, order_by: Any = None
    ) -> list[tuple[Any, ...]]: ...


@dataclass
class ResolvedData:
    """The spec with inline values, and what the analyst should know about them."""

    spec: dict[str, object]
    tables: list[str] = field(default_factory=list)  # the relations read, per reference
    notes: list[str] = field(default_factory=list)  # rows cut, and the like
    row_counts: dict[str, int] = field(default_factory=dict)  # relation -> rows it has


def step_table(query: ChartQuery, step_id: str) -> str | None:
    """The cached table a ledger step made, or None (not materialized, or replaced since)."""
    wanted = step_id.strip().casefold()
    for table in query.catalog.all_cached():
        if (table.step_id or "").casefold() == wanted:
            return table.name
    return None


def _relation(query: ChartQuery, chart: ChartSpec, ref: DataReference, text: str | None) -> str:
    if ref.kind == "table":
        return ref.name
    name = step_table(query, ref.name)
    if name is None:
        line = line_of(text, ref.pointer)
        where = f"{chart.source}, line {line}" if line else chart.source
        raise ChartError(
            f"{where}: step {ref.name!r} has no cached result to chart",
            hint='Chart the step\'s table instead ({"table": "NAME"}), or run the '
            "query again with a result_label so its result is kept.",
            code="CHART_MISSING_STEP",
            path=chart.source,
            line=line,
        )
    return name


def _rows(query: ChartQuery, relation: str, limit: int) -> tuple[list[dict[str, JSONValue]], int]:
    """The first ``limit`` rows as records, and the relation's row count. The count scans
    the whole relation (a view over a CSV file: hundreds of ms), so it is taken only when
    the rows were cut; otherwise the rows read are all of them."""
    from lantide.query.results import jsonable

    names = [c["name"] for c in query.read_schema(relation)["columns"]]
    rows = query.fetch_rows(relation, 0, limit + 1)
    total = len(rows) if len(rows) <= limit else int(query.relation_info(relation)["row_count"])
    records = [dict(zip(names, map(jsonable, row), strict=True)) for row in rows[:limit]]
    return records, total


def resolve_data(
    query: ChartQuery,
    chart: ChartSpec,
    *,
    text: str | None = None,
    max_rows: int = MAX_CHART_ROWS,
) -> ResolvedData:
    """``chart``'s spec with every reference replaced by its rows (``text``: the file's
    text, for line numbers in errors). Raises :class:`ChartError` naming the file."""
    spec: dict[str, object] = json.loads(json.dumps(chart.spec))
    out = ResolvedData(spec)
    for ref in chart.references:
        relation = _relation(query, chart, ref, text)
        try:
            values, total = _rows(query, relation, max_rows)
        except LantideError as exc:
            line = line_of(text, ref.pointer)
            where = f"{chart.source}, line {line}" if line else chart.source
            what = f"step {ref.name!r}'s table {relation!r}" if ref.kind == "step" else relation
            raise ChartError(
                f"{where}: cannot read the chart's data {what!r}: {exc.message}",
                hint=exc.hint or "Run the SQL tab that makes the table, or name another table.",
                code="CHART_MISSING_TABLE",
                path=chart.source,
                line=line,
            ) from None
        target: Any = spec
        for part in ref.pointer:
            target = target[part]
        target.clear()
        target["values"] = values
        out.tables.append(relation)
        out.row_counts[relation] = total
        if total > len(values):
            out.notes.append(
                f"{chart.source}: shows the first {len(values):,} of {total:,} rows of "
                f"{relation!r}; aggregate in SQL to chart them all."
            )
    return out
