"""The chart file: a Vega-Lite spec whose ``data`` names a Lantide table or step.

``projects/P/charts/NAME.vl.json`` holds one JSON object, a Vega-Lite (v6) spec, where
every ``data`` that Lantide fills is a reference instead of numbers::

    {"data": {"table": "revenue_by_month"}}   a table of the workspace (a cached table,
                                              a SQL tab's table, a data file's table)
    {"data": {"step": "9f2c41d07a11"}}        a ledger step's result: the cached table
                                              that step made

A reference may stand wherever Vega-Lite takes ``data`` (top level, a layer, a lookup's
``from``). Inline ``values`` are allowed in sub-views only (a threshold line, a label);
the top level must be a reference. ``url`` is refused anywhere: charts render offline and
the HTML Report fetches nothing. ``usermeta.lantide`` is Lantide's own: ``by`` (``agent``
or ``analyst``) and ``sha256``, the fingerprint of the spec the agent wrote, so a later
hand edit is noticed (:func:`written_by`).

:func:`parse_chart` checks all of that and the spec against the vendored Vega-Lite JSON
schema (``resources/vega/vega-lite-schema.json``); its :class:`ChartError` names the file
and the line where it applies. Nothing here writes a file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, NoReturn

from lantide.charts.errors import ChartError
from lantide.package_data import read_resource_text

SCHEMA_URL = "https://vega.github.io/schema/vega-lite/v6.json"
REFERENCE_KEYS = ("table", "step")
AGENT, ANALYST = "agent", "analyst"
Pointer = tuple[str | int, ...]
JsonObject = dict[str, object]  # a Vega-Lite spec or part of it: open JSON


@dataclass(frozen=True)
class DataReference:
    """One ``{"table": …}`` or ``{"step": …}`` in a spec, at ``pointer`` (JSON path)."""

    kind: str  # "table" or "step"
    name: str
    pointer: Pointer


@dataclass(frozen=True)
class ChartSpec:
    """A checked chart file: its spec as written and its data references."""

    spec: dict[str, object]
    references: tuple[DataReference, ...]
    source: str  # the file's name as shown in errors


def _fail(
    source: str, text: str | None, message: str, *, code: str, hint: str, path: Pointer = ()
) -> NoReturn:
    line = line_of(text, path) if text is not None else None
    where = f"{source}, line {line}" if line else source
    raise ChartError(f"{where}: {message}", hint=hint, code=code, path=source, line=line)


MAX_DEPTH_MESSAGE = "nested too deeply to be a chart"


def _too_deep(source: str) -> ChartError:
    return ChartError(
        f"{source}: {MAX_DEPTH_MESSAGE}",
        hint="A chart spec is a few levels deep; the file was left as it is.",
        code="CHART_INVALID_JSON",
        path=source,
    )


def parse_chart(text: str, source: str) -> ChartSpec:
    """Read and check a chart file's ``text``; ``source`` names it in errors."""
    try:
        spec = json.loads(text)
    except RecursionError:
        raise _too_deep(source) from None
    except json.JSONDecodeError as exc:
        raise ChartError(
            f"{source}, line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})",
            hint="Fix the JSON in a text editor; the file was left as it is.",
            code="CHART_INVALID_JSON",
            path=source,
            line=exc.lineno,
        ) from None
    return check_spec(spec, source, text)


def check_spec(spec: Any, source: str, text: str | None = None) -> ChartSpec:
    """Check a spec (from a file's ``text`` when given, for line numbers)."""
    try:
        return _check_spec(spec, source, text)
    except RecursionError:
        raise _too_deep(source) from None


def _check_spec(spec: Any, source: str, text: str | None) -> ChartSpec:
    if not isinstance(spec, dict):
        _fail(
            source,
            text,
            "a chart is a JSON object (a Vega-Lite spec)",
            code="CHART_INVALID_SPEC",
            hint='Write {"data": {"table": "…"}, "mark": …, "encoding": …}.',
        )
    for pointer in _url_keys(spec):
        _fail(
            source,
            text,
            f"'url' at {_show(pointer)}: charts never fetch anything (they render offline)",
            code="CHART_EXTERNAL_DATA",
            hint='Load the data into the workspace and point at its table: {"table": "NAME"}.',
            path=pointer,
        )
    references = tuple(_references(spec, source, text))
    top = spec.get("data")
    if not (isinstance(top, dict) and any(k in top for k in REFERENCE_KEYS)):
        _fail(
            source,
            text,
            "the chart's data must name a table or a step, not hold numbers",
            code="CHART_NO_DATA",
            hint='Set "data": {"table": "TABLE"} or {"step": "STEP_ID"}.',
            path=("data",) if top is not None else (),
        )
    _check_schema(_for_schema(spec), source, text)
    return ChartSpec(spec, references, source)


def _url_keys(value: Any, pointer: Pointer = ()) -> Iterator[Pointer]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "usermeta":
                continue
            if key == "url":
                yield (*pointer, key)
            else:
                yield from _url_keys(item, (*pointer, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _url_keys(item, (*pointer, i))


def _walk_data(value: Any, pointer: Pointer = ()) -> Iterator[tuple[Pointer, JsonObject]]:
    """Every ``data`` object in the spec, with its pointer."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "usermeta":
                continue
            if key == "data" and isinstance(item, dict):
                yield (*pointer, key), item
            yield from _walk_data(item, (*pointer, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk_data(item, (*pointer, i))


def _references(spec: JsonObject, source: str, text: str | None) -> Iterator[DataReference]:
    for pointer, data in _walk_data(spec):
        kinds = [k for k in REFERENCE_KEYS if k in data]
        if not kinds:
            continue
        extra = sorted(set(data) - set(REFERENCE_KEYS))
        name = data[kinds[0]]
        if len(kinds) > 1 or extra or not isinstance(name, str) or not name.strip():
            _fail(
                source,
                text,
                f"data at {_show(pointer)} must be exactly one of "
                '{"table": "NAME"} or {"step": "STEP_ID"}',
                code="CHART_INVALID_SPEC",
                hint="A reference has one key and a non-empty name; filters and formats "
                "go in the spec's transform.",
                path=pointer,
            )
        yield DataReference(kinds[0], name.strip(), pointer)


def _for_schema(spec: JsonObject) -> JsonObject:
    """The spec as Vega-Lite sees it: each reference becomes named data."""
    out: JsonObject = json.loads(json.dumps(spec))
    for _pointer, data in _walk_data(out):
        for kind in REFERENCE_KEYS:
            if kind in data:
                data.clear()
                data["name"] = f"lantide_{kind}"
                break
    return out


@cache
def _validator() -> Any:
    import jsonschema

    schema = json.loads(read_resource_text("vega", "vega-lite-schema.json"))
    return jsonschema.Draft7Validator(schema)


def _check_schema(spec: JsonObject, source: str, text: str | None) -> None:
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator().iter_errors(spec))
    if error is None:
        return
    # "is not valid under any of the given schemas" says little: a choice of words
    # ("mark": "barr") reads better as the list of the words allowed there
    deep = list(_deep_context(error))
    enums = [e for e in deep if e.validator == "enum"]
    unexpected = [e for e in deep if e.validator == "additionalProperties"]
    if enums:
        error = max(enums, key=lambda e: len(e.absolute_path))
    elif unexpected:  # a misspelt property: the branch that objects to the fewest
        error = min(unexpected, key=lambda e: len(e.message))
    pointer = tuple(error.absolute_path)
    _fail(
        source,
        text,
        f"not valid Vega-Lite at {_show(pointer)}: {_short(error.message)}",
        code="CHART_INVALID_SPEC",
        hint="See the Vega-Lite documentation for that property "
        "(https://vega.github.io/vega-lite/docs/).",
        path=pointer,
    )


def _deep_context(error: Any) -> Iterator[Any]:
    for sub in error.context or ():
        yield sub
        yield from _deep_context(sub)


def _short(message: str, limit: int = 240) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"


def _show(pointer: Pointer) -> str:
    return "/" + "/".join(str(p) for p in pointer) if pointer else "the top level"


def line_of(text: str | None, pointer: Pointer = ()) -> int | None:
    """The 1-based line of the JSON value at ``pointer`` in ``text``: keys are found in
    order, each after the previous one (a good guess, not a parser: list indices are
    skipped). None when the text or the pointer's first key is not found."""
    if text is None:
        return None
    position, found = 0, False
    for part in pointer:
        if isinstance(part, int):
            continue
        match = re.compile(r'"' + re.escape(str(part)) + r'"\s*:').search(text, position)
        if match is None:
            break
        position, found = match.start(), True
    if not found:
        return 1 if not pointer else None
    return text.count("\n", 0, position) + 1


def fingerprint(spec: dict[str, object]) -> str:
    """The sha-256 of a spec without ``usermeta.lantide`` (canonical JSON)."""
    bare = json.loads(json.dumps(spec))
    meta = bare.get("usermeta")
    if isinstance(meta, dict):
        meta.pop("lantide", None)
        if not meta:
            bare.pop("usermeta")
    canonical = json.dumps(bare, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def written_by(spec: dict[str, object]) -> str:
    """``agent`` when the agent wrote the spec and nobody changed it since, else ``analyst``."""
    meta = spec.get("usermeta")
    lantide = meta.get("lantide") if isinstance(meta, dict) else None
    if (
        isinstance(lantide, dict)
        and lantide.get("by") == AGENT
        and lantide.get("sha256") == fingerprint(spec)
    ):
        return AGENT
    return ANALYST


def stamped(spec: Mapping[str, object], by: str, **fields: Any) -> dict[str, object]:
    """``spec`` with ``usermeta.lantide`` set: ``by``, ``sha256`` and ``fields``."""
    out: JsonObject = json.loads(json.dumps(spec))
    out.setdefault("$schema", SCHEMA_URL)
    existing = out.get("usermeta")
    meta: JsonObject = existing if isinstance(existing, dict) else {}
    out["usermeta"] = meta
    lantide: JsonObject = {"by": by, **fields}
    meta["lantide"] = lantide
    lantide["sha256"] = fingerprint(out)
    return out
