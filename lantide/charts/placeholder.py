"""Small SVGs shown in place of a chart: an error (naming the file) or "drawing…"."""

from __future__ import annotations

import textwrap
from xml.sax.saxutils import escape

WIDTH, LINE_HEIGHT, WRAP = 560, 18, 80


def _box(lines: list[str], colour: str, fill: str) -> str:
    height = 16 + LINE_HEIGHT * len(lines)
    texts = "".join(
        f'<text x="12" y="{22 + i * LINE_HEIGHT}" font-family="sans-serif" font-size="13" '
        f'fill="{colour}">{escape(line)}</text>'
        for i, line in enumerate(lines)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}"><rect x="0.5" y="0.5" width="{WIDTH - 1}" '
        f'height="{height - 1}" fill="{fill}" stroke="{colour}"/>{texts}</svg>'
    )


def _wrapped(message: str) -> list[str]:
    lines: list[str] = []
    for paragraph in message.splitlines() or [""]:
        lines.extend(textwrap.wrap(paragraph, WRAP) or [""])
    return lines[:12]


def error_svg(message: str) -> str:
    """An SVG box with ``message`` (wrapped), for a chart that could not be shown."""
    return _box(_wrapped(message), "#c62828", "#fdecea")


def pending_svg(message: str = "Drawing the chart…") -> str:
    """An SVG box shown while a chart is drawn off the UI thread."""
    return _box(_wrapped(message), "#666666", "#f4f4f4")
