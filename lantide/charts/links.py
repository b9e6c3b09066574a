"""Chart links of a Markdown document: ``![title](charts/NAME.vl.json)`` images.

:func:`chart_links` ``(markdown) -> list[ChartLink]`` finds them with the documents' own
Markdown parser (so a link inside code is not a chart), each with its title, its target
relative to the project folder and its 1-based line, for the HTML Report and checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from lantide.workspace.layout import CHART_SUFFIX


@dataclass(frozen=True)
class ChartLink:
    title: str
    src: str  # as written, relative to the project folder: charts/NAME.vl.json
    line: int  # 1-based line of the paragraph holding it


def chart_links(markdown: str) -> list[ChartLink]:
    """Every image link to a ``.vl.json`` file, in document order."""
    from lantide.docs.markdown_map import markdown_parser

    found: list[ChartLink] = []
    for block in markdown_parser().parse(markdown):
        if block.type != "inline" or not block.children:
            continue
        line = (block.map[0] + 1) if block.map else 1
        for token in block.children:
            src = str(token.attrGet("src") or "") if token.type == "image" else ""
            if src.split("?", 1)[0].endswith(CHART_SUFFIX) and "://" not in src:
                found.append(ChartLink(token.content, src, line))
    return found
