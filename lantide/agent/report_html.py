"""Publishing and editing ``projects/P/report.html``, the HTML Report (issue 16, part 4).

- :func:`publish_html` (``lantide report html``, **Publish HTML**, the benchmark): reads
  the Markdown Report, the ledger steps it cites, the evidence check and the charts it
  shows (:mod:`lantide.agent.report_charts`), builds the page
  (:mod:`lantide.docs.html_report`) and writes it atomically. An existing ``report.html``
  is read first: invalid markup stops here (file and line, nothing written), and chunks
  the analyst or the agent edited are kept when their Markdown section is unchanged;
  otherwise the edited chunks are named and nothing is written, unless ``overwrite``.
- :func:`read_chunks` and :func:`patch_chunk` serve the agent's ``read_html_report`` and
  ``patch_html_chunk`` (one chunk's content replaced, checked by
  :func:`lantide.docs.html_markup.check_fragment`).
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, overload

from lantide.agent.check_gate import describe_waiver
from lantide.agent.report_check import StepIndex, check_text, read_report
from lantide.docs.citations import cited_step_ids
from lantide.docs.html_markup import (
    Chunk,
    check_fragment,
    parse_report_html,
    replace_chunk,
)
from lantide.docs.html_report import ChartHook, ReportSource, merge_edits
from lantide.docs.html_sanitize import added_removed_parts
from lantide.docs.markdown_map import markdown_parser
from lantide.errors import LantideError, MissingFileError
from lantide.workspace import layout
from lantide.workspace.atomic import atomic_write_text

if TYPE_CHECKING:
    from lantide.query.service import QueryService
    from lantide.workspace.model import Project, Workspace

PREVIEW_CHARS = 160


class ChunkNotFoundError(LantideError):
    code = "HTML_CHUNK_NOT_FOUND"


def html_path(project: Project) -> Path:
    return layout.report_html_path(project.dir)


class Published(TypedDict):
    """:meth:`PublishResult.to_dict` (``lantide report html --json``, the app)."""

    path: str
    chunks: int
    bytes: int
    evidence_check_ok: bool
    kept_edits: list[str]
    overwritten_edits: list[str]
    chart_errors: list[dict[str, str]]


class ChunkInfo(TypedDict):
    """A chunk of the HTML Report as ``read_html_report`` lists it."""

    id: str
    title: str
    line: int
    edited: bool
    chars: int
    text: str  # a preview of its text


class ChunkListing(TypedDict):
    path: str
    chunks: list[ChunkInfo]


class ChunkContent(ChunkInfo):
    """One chunk with its whole content (``read_html_report`` with ``chunk``)."""

    path: str
    content: str


class ChunkPatched(TypedDict):
    path: str
    chunk: str
    chars: int
    edited: bool


@dataclass
class PublishResult:
    path: str
    chunks: int
    bytes: int
    check_ok: bool
    kept_edits: list[str] = field(default_factory=list)
    overwritten_edits: list[str] = field(default_factory=list)
    # charts not drawn ({src, code, message}); their places in the page show the error
    chart_errors: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> Published:
        return {
            "path": self.path,
            "chunks": self.chunks,
            "bytes": self.bytes,
            "evidence_check_ok": self.check_ok,
            "kept_edits": self.kept_edits,
            "overwritten_edits": self.overwritten_edits,
            "chart_errors": self.chart_errors,
        }


def report_source(
    workspace: Workspace,
    project: Project,
    chart_html: ChartHook | None = None,
    index: StepIndex | None = None,
) -> ReportSource:
    """What the page is made of, read from disk now (``index``: the ledger, when the
    caller read it already)."""
    path = project.report_path
    text = read_report(project)
    if index is None:
        index = StepIndex.of_workspace(workspace.ledger_dir, project.dirname)
    tokens = markdown_parser().parse(text)  # one parse, for the check and the page
    check = check_text(text, index, str(path), tokens=tokens).to_dict()  # malformed: stops
    cited = cited_step_ids(text)
    steps: dict[str, dict[str, object]] = {}
    for step_id in cited:
        found = index.get(step_id)
        if found is not None:
            steps[step_id] = dict(found.step)
    return ReportSource(
        project=project.name,
        report_name=project.report,
        markdown=text,
        status=project.status,
        approval=project.approval(),
        check=dict(check),  # the page reads it as plain JSON
        steps=steps,
        kinds={k: v for k, v in index.badges().items() if k in cited},
        generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        chart_html=chart_html,
        tokens=tokens,
    )


def step_check_marks(index: StepIndex, step_ids: list[str]) -> str:
    """The HTML mark of a chart drawn from ``step_ids``: each unresolved error check (as a
    number cited to the step is check_failed) and each waiver (who, when, why)."""
    parts = []
    for step_id in step_ids:
        found = index.get(step_id)
        if found is None:
            continue
        for check in found.failed:
            code = html_lib.escape(str(check.get("code")))
            parts.append(
                f'<span class="lt-check-mark">check failed: {code}'
                f"</span> on step {html_lib.escape(step_id)}: "
                f"{html_lib.escape(str(check.get('message') or ''))}"
            )
        for waiver in found.waivers:
            parts.append(
                f'<span class="lt-waiver">{html_lib.escape(describe_waiver(waiver))}</span>'
            )
    return "".join(f" {p}" for p in parts)


def _existing_chunks(path: Path) -> list[Chunk]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except UnicodeDecodeError as exc:
        raise LantideError(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})",
            hint="The file was left as it is. Fix or move it aside, then publish again.",
            code="HTML_INVALID",
        ) from None
    return parse_report_html(text, str(path))


def publish_html(
    workspace: Workspace,
    project: Project,
    overwrite: bool = False,
    query: Callable[[], QueryService] | None = None,
) -> PublishResult:
    """Write ``report.html`` from the Markdown Report (see the module docstring). Charts
    (``![title](charts/NAME.vl.json)``) are filled from ``query()`` (the app's query
    service); without it, a query service of the workspace is opened when a chart needs
    one and closed after."""
    from lantide.agent.report_charts import ReportCharts

    opened: list[QueryService] = []

    def own_query() -> QueryService:
        from lantide.query import QueryService

        opened.append(QueryService(workspace))
        return opened[-1]

    charts = ReportCharts(project, query or own_query)
    index = StepIndex.of_workspace(workspace.ledger_dir, project.dirname)
    charts.step_marks = lambda step_ids: step_check_marks(index, step_ids)
    try:
        source = report_source(workspace, project, charts, index)
        path = html_path(project)
        old = _existing_chunks(path)
        merged = merge_edits(source, old, str(path), overwrite=overwrite)
    finally:
        for service in opened:
            service.close()
    atomic_write_text(path, merged.text)
    return PublishResult(
        str(path),
        merged.chunks,
        len(merged.text.encode("utf-8")),
        bool(source.check.get("ok")),
        merged.kept,
        merged.overwritten,
        charts.failed,
    )


def _read_html(project: Project) -> tuple[Path, str]:
    path = html_path(project)
    try:
        return path, path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingFileError(
            path,
            "HTML Report",
            hint="Publish it first: Publish HTML in the Report tab, or lantide report html "
            "WORKSPACE PROJECT.",
        ) from None


def _text_of(content: str) -> str:
    plain = re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]*>", " ", content))).strip()
    return plain if len(plain) <= PREVIEW_CHARS else plain[:PREVIEW_CHARS] + "…"


@overload
def read_chunks(project: Project, chunk_id: None = None) -> ChunkListing: ...
@overload
def read_chunks(project: Project, chunk_id: str) -> ChunkContent: ...
@overload
def read_chunks(project: Project, chunk_id: str | None) -> ChunkListing | ChunkContent: ...
def read_chunks(project: Project, chunk_id: str | None = None) -> ChunkListing | ChunkContent:
    """The chunks of the HTML Report (id, title, line, edited, a text preview), or one
    chunk's whole content."""
    path, text = _read_html(project)
    chunks = parse_report_html(text, str(path))
    if chunk_id is not None:
        chunk = _find(chunks, chunk_id, path)
        return {"path": str(path), **_describe(chunk), "content": chunk.content}
    return {"path": str(path), "chunks": [_describe(c) for c in chunks]}


def _describe(chunk: Chunk) -> ChunkInfo:
    return {
        "id": chunk.id,
        "title": chunk.title,
        "line": chunk.line,
        "edited": chunk.edited,
        "chars": len(chunk.content),
        "text": _text_of(chunk.content),
    }


def _find(chunks: list[Chunk], chunk_id: str, path: Path) -> Chunk:
    for chunk in chunks:
        if chunk.id == chunk_id:
            return chunk
    raise ChunkNotFoundError(
        f"{path}: no chunk {chunk_id!r}",
        hint="Chunks: " + ", ".join(c.id for c in chunks[:40]) + ". Call read_html_report.",
    )


_MARK_TAG = re.compile(r"</?mark\b[^>]*>", re.I)


def _raw_html(markdown: str) -> str:
    """The raw HTML of a Markdown document (blocks and inline tags, in order), without the
    annotation marks (they are the review's, never on the page)."""
    parts: list[str] = []
    for token in markdown_parser().parse(markdown):
        if token.type == "html_block":
            parts.append(token.content)
        for child in token.children or []:
            if child.type == "html_inline":
                parts.append(child.content)
    return _MARK_TAG.sub("", "\n".join(parts))


def raw_html_left_out(old: str, new: str) -> list[str]:
    """What the HTML Report's sanitizer would leave out of the raw HTML ``new`` (a Markdown
    Report) adds to ``old``: ``update_report`` refuses such an edit, by the same rule as
    ``patch_html_chunk`` and the export (:mod:`lantide.docs.html_sanitize`)."""
    return added_removed_parts(_raw_html(old), _raw_html(new))


def patch_chunk(project: Project, chunk_id: str, content: str) -> ChunkPatched:
    """Replace one chunk's content; the file must parse before and after, and the new
    content pass :func:`check_fragment` (the sanitizer's rule, the same as the page's):
    what is written is the sanitizer's serialization of it. Nothing is written otherwise."""
    path, _text, new_text, result = preview_patch_chunk(project, chunk_id, content)
    atomic_write_text(path, new_text)
    return result


def preview_patch_chunk(
    project: Project, chunk_id: str, content: str
) -> tuple[Path, str, str, ChunkPatched]:
    """What :func:`patch_chunk` would write, checked the same way, nothing written:
    ``(path, the text on disk, the new text, the result)`` (a pending edit is made of it)."""
    path, text = _read_html(project)
    chunks = parse_report_html(text, str(path))
    chunk = _find(chunks, chunk_id, path)
    content = check_fragment(content, f"the new content of chunk {chunk_id!r}")
    new_text = replace_chunk(text, chunk, content)
    parse_report_html(new_text, str(path))  # still one well-formed page
    return (
        path,
        text,
        new_text,
        {
            "path": str(path),
            "chunk": chunk_id,
            "chars": len(content),
            "edited": True,
        },
    )
