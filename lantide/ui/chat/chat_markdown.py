"""The assistant's Markdown as HTML a QTextBrowser shows well.

markdown-it-py (CommonMark with tables and strikethrough) renders the text; raw HTML in
the model's answer is escaped, never interpreted (model output is data). SQL code blocks
are coloured like the editor, and every code block sits on a tinted background; tables
get borders and padding; a ``[[QUERY_STEP]]`` line (the agent's one-line summary of a
step, parsed into the ledger) is shown as a muted step note, linked to its ledger entry
when the step is known.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from lantide.ui.sql.sql_highlighter import sql_to_html

STEP_MARKER = "[[QUERY_STEP]]"
STEP_SCHEME = "lantide-step"
_STEP_LINE = re.compile(r"^\s*(?:[-*>]\s*)?\[\[QUERY_STEP\]\]\s*(.*)$", re.M)
_NEWLINE = re.compile("\n")
# what became of a step line, as the engine reports it (StepLinesRead outcomes)
STEP_LINE_WORDS = {
    "parsed": "recorded",
    "mismatch": "recorded; its numbers are not in the step's result",
    "malformed": "no summary recorded: too short to summarise the step",
    "unknown_step": "not recorded: no step has that id",
    "duplicate": "not recorded: that step already has a line",
    "not_waiting": "not recorded: that step is not waiting for a line",
    "unpaired": "not recorded: it names no step",
}


@lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])

    def fence(_renderer, tokens, idx, options, env):  # bound to the renderer as a method
        token = tokens[idx]
        lang = (token.info or "").strip().split(" ")[0].lower()
        code = token.content
        if lang in ("sql", "duckdb", "postgresql", "postgres"):
            block = sql_to_html(code.rstrip("\n"), dark=env.get("dark", False))
        else:
            block = f'<pre style="margin:0;">{html.escape(code.rstrip(chr(10)))}</pre>'
        # A one-cell table: the way Qt's rich text gives a block a padded background.
        return (
            f'<table width="100%" cellspacing="0" cellpadding="6" style="margin:4px 0; '
            f'background-color:{env.get("code_background", "#f3f4f6")};"><tr><td>'
            f"{block}</td></tr></table>\n"
        )

    md.add_render_rule("fence", fence)
    md.add_render_rule("code_block", fence)
    return md


def split_step_lines(text: str) -> list[tuple[str, str]]:
    """``text`` as ("markdown", chunk) and ("step", summary) parts, in order."""
    parts: list[tuple[str, str]] = []
    pos = 0
    for match in _STEP_LINE.finditer(text):
        if match.start() > pos:
            parts.append(("markdown", text[pos : match.start()]))
        parts.append(("step", match.group(1).strip()))
        pos = match.end()
    if pos < len(text):
        parts.append(("markdown", text[pos:]))
    return parts


def unit_starts(text: str) -> list[int]:
    """Offsets in ``text`` where a step line or a top-level Markdown block begins.

    At each of them the text can be cut and both sides rendered alone with the same result
    as the whole, so a long streamed answer keeps its finished blocks rendered and redoes
    only the tail. Link reference definitions (resolved across the whole text) and carriage
    returns (markdown-it counts lines differently) leave no place to cut: ``[0]``.
    """
    if "\r" in text:
        return [0]
    md = _markdown()
    starts: list[int] = []
    pos = 0
    for kind, chunk in split_step_lines(text):
        if kind == "step":
            match = _STEP_LINE.match(text, pos)
            starts.append(pos)
            pos = match.end() if match else pos
            continue
        env: dict = {}
        tokens = md.parse(chunk, env)
        if env.get("references"):
            return [0]
        line_starts = [0] + [m.end() for m in _NEWLINE.finditer(chunk)]
        for token in tokens:
            if token.level == 0 and token.nesting >= 0 and token.map:
                starts.append(pos + line_starts[min(token.map[0], len(line_starts) - 1)])
        pos += len(chunk)
    return sorted(set(starts)) or [0]


def table_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each top-level table in ``text``: from where the table begins to
    where the next block (or the text) begins, so both are places :func:`unit_starts`
    allows to cut. A table is shown in a box of its own that scrolls sideways."""
    if "|" not in text or "\r" in text:
        return []
    md = _markdown()
    spans: list[tuple[int, int]] = []
    pos = 0
    for kind, chunk in split_step_lines(text):
        if kind == "step":
            match = _STEP_LINE.match(text, pos)
            pos = match.end() if match else pos
            continue
        env: dict = {}
        tokens = md.parse(chunk, env)
        if env.get("references"):
            return []
        line_starts = [0] + [m.end() for m in _NEWLINE.finditer(chunk)] + [len(chunk)]
        for token in tokens:
            if token.type == "table_open" and token.level == 0 and token.map:
                start = line_starts[min(token.map[0], len(line_starts) - 1)]
                end = line_starts[min(token.map[1], len(line_starts) - 1)]
                spans.append((pos + start, pos + end))
        pos += len(chunk)
    return spans


def render_markdown(
    text: str,
    *,
    dark: bool = False,
    step_lines: list[tuple[str | None, str]] | None = None,
    muted: str = "#6b7280",
    border: str = "#d1d5db",
    code_background: str = "#f3f4f6",
) -> str:
    """HTML for ``text``. ``step_lines`` are the engine's outcome of each step line, in
    order (:class:`lantide.agent.events.StepLinesRead`): the step it was recorded on (linked)
    and what became of it. A line without one yet (streaming) claims nothing."""
    md = _markdown()
    out: list[str] = []
    steps = list(step_lines or [])
    for kind, chunk in split_step_lines(text):
        if kind == "markdown":
            if chunk.strip():
                out.append(md.render(chunk, {"dark": dark, "code_background": code_background}))
            continue
        step_id, outcome = steps.pop(0) if steps else (None, "")
        label = html.escape(chunk) or "(no summary)"
        words = STEP_LINE_WORDS.get(outcome, "")
        said = f" <i>({html.escape(words)})</i>" if words else ""
        link = (
            f' &nbsp;<a href="{STEP_SCHEME}:{html.escape(step_id)}">ledger&nbsp;›</a>'
            if step_id
            else ""
        )
        out.append(f'<p style="color:{muted}; margin:2px 0;">▸ step: {label}{said}{link}</p>')
    body = "".join(out)
    body = body.replace(
        "<table>",
        f'<table border="1" cellspacing="0" cellpadding="4" '
        f'style="border-color:{border}; border-collapse:collapse;">',
    )
    return body


def plain_preview(text: str, limit: int = 80) -> str:
    """One line of ``text`` without Markdown punctuation (titles, tooltips)."""
    line = " ".join(text.split())
    line = re.sub(r"[*_`#>|]+", "", line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def warm_up() -> None:
    """Import and build the Markdown parser and the SQL lexer (call from a worker), so the
    first answer or SQL tab does not pay for them on the UI thread."""
    render_markdown("# warm\n\n| a |\n|---|\n| 1 |\n\n```sql\nSELECT 1 AS a QUALIFY true\n```\n")
