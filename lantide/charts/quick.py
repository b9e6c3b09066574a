"""The SQL tab's quick chart (bar, line or scatter of one x and one y column) as a
Vega-Lite spec over the result's table: what "Save as chart file" writes."""

from __future__ import annotations

from lantide.charts.spec import SCHEMA_URL

QUICK_MARKS = {"bar": "bar", "line": "line", "scatter": "point"}
_TIME_PREFIXES = ("DATE", "TIMESTAMP", "TIME")


def quick_chart_spec(
    kind: str,
    table: str,
    x: str,
    y: str,
    *,
    x_type: str = "",
    title: str | None = None,
    color: str | None = None,
    summed: bool = False,
) -> dict[str, object]:
    """A chart file's spec for the quick chart ``kind`` of ``y`` against ``x`` of ``table``
    (``x_type``: the column's DuckDB type, so dates make a time axis). Bars of a category
    that repeats: ``color`` names the column that tells its rows apart (bars side by side,
    one colour each), or ``summed`` adds them up, as the quick chart draws them."""
    if kind not in QUICK_MARKS:
        raise ValueError(f"unknown quick chart kind {kind!r}; known: {sorted(QUICK_MARKS)}")
    if kind == "bar":  # one bar per row, in the result's order, as the quick chart draws
        x_encoding: dict[str, object] = {"field": x, "type": "nominal", "sort": None}
    elif (x_type or "").upper().startswith(_TIME_PREFIXES):
        x_encoding = {"field": x, "type": "temporal"}
    else:
        x_encoding = {"field": x, "type": "quantitative"}
    y_encoding: dict[str, object] = {"field": y, "type": "quantitative"}
    encoding: dict[str, object] = {"x": x_encoding, "y": y_encoding}
    if kind == "bar" and color:
        encoding["color"] = {"field": color, "type": "nominal"}
        encoding["xOffset"] = {"field": color, "type": "nominal"}
        y_encoding["aggregate"] = "sum"
    elif kind == "bar" and summed:
        y_encoding["aggregate"] = "sum"
    return {
        "$schema": SCHEMA_URL,
        "title": title or f"{y} by {x}",
        "data": {"table": table},
        "mark": {"type": QUICK_MARKS[kind], "tooltip": True},
        "encoding": encoding,
    }
