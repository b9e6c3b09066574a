"""Chart files of a project: names, reading, loading with data, rendering, writing.

Reading never changes a file. :func:`write_chart` is the one writer (atomic, through
:mod:`lantide.workspace.atomic`) and keeps what the analyst wrote: it refuses to replace a
chart file that is not valid (kept byte for byte, always) or that the analyst wrote or
edited (unless ``overwrite``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lantide.charts.data import MAX_CHART_ROWS, resolve_data
from lantide.charts.errors import ChartError
from lantide.charts.render import render_svg
from lantide.charts.spec import AGENT, ANALYST, ChartSpec, check_spec, parse_chart, stamped
from lantide.charts.spec import written_by as spec_written_by
from lantide.workspace import layout
from lantide.workspace.names import name_hint, name_problem
from lantide.workspace.portable_names import portable_name_problem

if TYPE_CHECKING:
    from lantide.charts.data import ChartQuery
    from lantide.workspace.model import Project

MAX_CHART_NAME = 80
_SEPARATOR = re.compile(r"[\x00-\x1f/\\]")


def validate_chart_name(name: str, *, existing: bool = False) -> str:
    """``name`` without ``.vl.json`` and outer spaces, or :class:`ChartError`.

    A new chart's name follows the names' rule (:mod:`lantide.workspace.names`); with
    ``existing`` (a chart file looked up, e.g. from a Report's link) any portable file
    name of the charts folder will do, so a file named by hand still draws."""
    clean = (name or "").strip()
    if clean.lower().endswith(layout.CHART_SUFFIX):
        clean = clean[: -len(layout.CHART_SUFFIX)].strip()
    if existing:
        problem = (portable_name_problem(clean) if clean else "it is empty") or (
            "it names another folder" if _SEPARATOR.search(clean) or clean.startswith(".") else None
        )
    else:
        problem = name_problem(clean)
    if problem:
        raise ChartError(
            f"{name!r} cannot be a chart's name: {problem}",
            hint=name_hint(clean),
            code="CHART_BAD_NAME",
        )
    return clean


def chart_file(project: Project, name: str) -> Path:
    """``projects/P/charts/NAME.vl.json`` of ``project``: an existing chart's file (a new
    chart's name is checked by :func:`write_chart`)."""
    return layout.chart_path(project.dir, validate_chart_name(name, existing=True))


def list_charts(project: Project) -> list[str]:
    """The names of the project's chart files, sorted."""
    folder = layout.charts_dir(project.dir)
    if not folder.is_dir():
        return []
    suffix = layout.CHART_SUFFIX
    return sorted(p.name[: -len(suffix)] for p in folder.glob(f"*{suffix}") if p.is_file())


def _source(path: Path, source: str | None) -> str:
    return source or str(path)


def read_chart(path: Path | str, *, source: str | None = None) -> ChartSpec:
    """The checked chart file at ``path`` (``source``: how errors name it)."""
    path = Path(path)
    shown = _source(path, source)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ChartError(
            f"{shown}: no such chart file",
            hint="Check the name under the project's charts/ folder.",
            code="CHART_MISSING",
            path=shown,
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ChartError(
            f"{shown}: cannot be read ({exc})",
            hint="The file was left as it is.",
            code="CHART_INVALID_JSON",
            path=shown,
        ) from None
    return parse_chart(text, shown)


@dataclass
class LoadedChart:
    """A chart file with its data inline: ``spec`` is ready for :func:`render_svg` (what the
    HTML Report shows) or :func:`lantide.charts.chart_embed_html`."""

    path: Path
    spec: dict[str, object]
    tables: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    row_counts: dict[str, int] = field(default_factory=dict)

    @property
    def title(self) -> str | None:
        title = self.spec.get("title")
        if isinstance(title, dict):
            title = title.get("text")
        return title if isinstance(title, str) else None


def load_chart(
    path: Path | str,
    query: ChartQuery,
    *,
    source: str | None = None,
    max_rows: int = MAX_CHART_ROWS,
) -> LoadedChart:
    """Read, check and fill the chart at ``path`` with rows from ``query``'s workspace."""
    path = Path(path)
    shown = _source(path, source)
    text = path.read_text(encoding="utf-8") if path.is_file() else None
    chart = parse_chart(text, shown) if text is not None else read_chart(path, source=shown)
    resolved = resolve_data(query, chart, text=text, max_rows=max_rows)
    return LoadedChart(path, resolved.spec, resolved.tables, resolved.notes, resolved.row_counts)


def render_chart(
    path: Path | str, query: ChartQuery, *, source: str | None = None
) -> tuple[str, LoadedChart]:
    """The SVG of the chart file at ``path`` and the loaded chart (for its notes)."""
    loaded = load_chart(path, query, source=source)
    try:
        return render_svg(loaded.spec), loaded
    except ChartError as exc:
        shown = _source(Path(path), source)
        raise ChartError(
            f"{shown}: {exc.message}", hint=exc.hint, code=exc.code, path=shown
        ) from None


def write_chart(
    project: Project,
    name: str,
    spec: Mapping[str, object],
    *,
    by: str = ANALYST,
    overwrite: bool = False,
    **meta: Any,
) -> Path:
    """Check ``spec`` and write it as the project's chart ``name`` (atomically).

    ``by``: ``agent`` or ``analyst`` (kept in ``usermeta.lantide`` with ``meta``, e.g. a
    ``step_id``). Refused (:class:`ChartError` ``CHART_EXISTS``), the file untouched: an
    existing file that is not a valid chart; an existing file the analyst wrote or edited,
    when ``by`` is ``agent`` and not ``overwrite``."""
    from lantide.workspace.atomic import atomic_write_text

    clean = validate_chart_name(name)
    path = layout.chart_path(project.dir, clean)
    shown = layout.project_relpath(project.dirname, layout.chart_project_relpath(clean))
    check_spec(spec, shown)
    if path.exists():
        try:
            existing = read_chart(path, source=shown)
        except ChartError as exc:
            raise ChartError(
                f"{shown} exists and is not a valid chart ({exc.message}); it was left as it is",
                hint="Pick another name, or ask the analyst to fix or remove that file.",
                code="CHART_EXISTS",
                path=shown,
            ) from None
        if by == AGENT and not overwrite and spec_written_by(existing.spec) == ANALYST:
            raise ChartError(
                f"{shown} was written or edited by the analyst; it was left as it is",
                hint="Pick another name, or pass overwrite=true if the analyst asked to "
                "replace it.",
                code="CHART_EXISTS",
                path=shown,
            )
    final = stamped(spec, by, **meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(final, indent=2, ensure_ascii=False) + "\n")
    return path
