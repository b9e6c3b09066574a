"""The HTML Report tab's preview: Qt's rich text cannot draw the page's inline ``<svg>``
charts, so they are painted into images in a worker (``svg_image``) and shown in their
place; until then (or when drawing fails) a short note stands there, as before."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

CHART_URL = "lantide-chart-{}"  # the n-th chart's image, answered by loadResource


def _chart_tag(n: int) -> str:
    return f'<p><img src="{CHART_URL.format(n)}"></p>'


def draw_charts(_context, svgs: list[str]) -> list[QImage]:
    """In a worker: each chart's SVG painted into an image."""
    from lantide.ui.documents.chart_images import svg_image

    return [svg_image(svg) for svg in svgs]


class HtmlPreview(QTextBrowser):
    def __init__(self, workers, parent: QWidget | None = None):
        super().__init__(parent)
        self.workers = workers
        self.images: list[QImage] = []
        self._text = ""

    def show_page(self, text: str) -> None:
        """Show ``text`` (a report.html): charts as notes now, as images once drawn."""
        from lantide.docs.html_markup import chart_svgs, without_scripts

        self._text = text
        self.images = []
        self.setHtml(without_scripts(text))
        svgs = chart_svgs(text)
        if svgs:
            self.workers.submit(
                draw_charts,
                svgs,
                on_result=lambda images, t=text: self._charts_drawn(t, images),
                on_error=lambda _exc: None,  # the notes stay: Open in browser shows them
                name="draw the HTML Report's charts",
            )

    def _charts_drawn(self, text: str, images: list[QImage]) -> None:
        from lantide.docs.html_markup import without_scripts

        if text != self._text:
            return  # a newer page is shown meanwhile
        self.images = images
        bar = self.verticalScrollBar()
        at = bar.value()
        self.setHtml(without_scripts(text, chart=_chart_tag))
        bar.setValue(at)

    def loadResource(self, kind: int, url: QUrl | str) -> Any:  # noqa: N802 - Qt's name
        url = QUrl(url) if isinstance(url, str) else url
        name = url.toString()
        if kind == QTextDocument.ResourceType.ImageResource.value and name.startswith(
            CHART_URL.format("")
        ):
            index = name[len(CHART_URL.format("")) :]
            if index.isdigit() and int(index) < len(self.images):
                return self.images[int(index)]
        return super().loadResource(kind, url)
