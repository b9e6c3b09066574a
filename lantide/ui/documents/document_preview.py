"""The live preview of a Plan or Report: the docs layer's HTML in a ``QTextBrowser``.

Annotation marks are highlighted by status and are links: clicking one selects the
annotation. Other links open in the system browser. A chart image link
(``![title](charts/NAME.vl.json)``) shows the drawn chart, from
:class:`~lantide.ui.documents.chart_images.ChartImages` (drawn off the UI thread).
Replacing the HTML keeps the scroll position, so the preview does not jump while the
analyst types.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QImage, QPalette, QResizeEvent, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

from lantide.ui.theme import colors
from lantide.ui.themed import mark_theme, theme_switched


def preview_css(palette: QPalette) -> str:
    c = colors()
    text = palette.color(QPalette.ColorRole.Text).name()
    return f"""
body {{ line-height: 140%; }}
h1, h2, h3, h4 {{ color: {c.heading.name()}; }}
code, pre {{ font-family: monospace; background-color: {c.code_background.name()}; }}
blockquote {{ color: {c.muted.name()}; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid {c.border.name()}; padding: 3px 6px; }}
a {{ color: {c.link.name()}; }}
a.annotation-link {{ color: {text}; text-decoration: none; }}
mark {{ background-color: {c.mark_open.name()}; }}
mark.lantide-open {{ background-color: {c.mark_open.name()}; }}
mark.lantide-resolved {{ background-color: {c.mark_resolved.name()}; }}
mark.lantide-unknown {{ background-color: {c.danger.lighter(170).name()}; }}
a.lantide-citation {{ text-decoration: none; }}
a.lantide-citation-formal {{ color: {c.success.name()}; }}
a.lantide-citation-exploratory {{ color: {c.warning.name()}; }}
a.lantide-citation-missing {{ color: {c.danger.name()}; }}
a.lantide-citation-check_failed {{ color: {c.danger.name()}; font-weight: bold; }}
span.lantide-citation-bad {{ color: {c.danger.name()}; text-decoration: underline; }}
span.lantide-chart-check {{ color: {c.danger.name()}; font-weight: bold; }}
"""


class DocumentPreviewWidget(QTextBrowser):
    sig_annotation_clicked = Signal(str)
    sig_step_clicked = Signal(str)  # a Report citation [^s:ID]: its step id

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("DocumentPreview")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._link_clicked)
        self.document().setDocumentMargin(16)
        self._html = ""
        self._step_kinds: dict[str, str] | None = None  # labels the citations when known
        self._step_notes: dict[str, str] = {}  # their tooltips: numbers and matched cells
        self._chart_marks: dict[str, str] = {}  # chart src -> its steps' failed checks
        self.chart_images = None  # ChartImages once set_chart_images is called
        # a chart wider than the preview is scaled to fit; after a resize, fitted again
        self._refit = QTimer(self, singleShot=True, interval=150)
        self._refit.timeout.connect(self._charts_drawn)
        mark_theme(self)
        self.refresh_theme()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if theme_switched(self, event):  # light/dark: the colours are in the style sheet
            self.refresh_theme()

    def refresh_theme(self) -> None:
        self.document().setDefaultStyleSheet(preview_css(self.palette()))
        if self._html:
            self._apply(self._html)

    def set_preview_html(self, html: str) -> None:
        if html == self._html:
            return
        self._html = html
        self._apply(html)

    def set_step_kinds(
        self, kinds: dict[str, str] | None, notes: dict[str, str] | None = None
    ) -> None:
        """Label the Report's citations with their steps' badges (formal, exploratory,
        missing, check_failed: the engine's) and tooltips (the numbers each cites and the
        cells they matched) from now on."""
        self._step_kinds = kinds
        self._step_notes = dict(notes or {})
        if self._html:
            self._apply(self._html)

    def set_chart_marks(self, marks: dict[str, str]) -> None:
        """Mark each chart drawn from a step with an unresolved error check (the engine's
        notes, by the chart's src) from now on."""
        if marks == self._chart_marks:
            return
        self._chart_marks = dict(marks)
        if self._html:
            self._apply(self._html)

    def _apply(self, html: str) -> None:
        if self._chart_marks and ".vl.json" in html:
            from lantide.docs.render import mark_chart_images

            html = mark_chart_images(html, self._chart_marks)
        if self._step_kinds is not None and "lantide-citation" in html:
            from lantide.docs.citations import relabel_citations

            html = relabel_citations(html, self._step_kinds, self._step_notes)
        bar = self.verticalScrollBar()
        ratio = bar.value() / bar.maximum() if bar.maximum() else 0.0
        self.setHtml(html)
        if bar.maximum():
            bar.setValue(round(ratio * bar.maximum()))

    def html(self) -> str:
        return self._html

    def set_chart_images(self, images) -> None:
        """Draw ``.vl.json`` image links with ``images`` (a ChartImages)."""
        self.chart_images = images
        images.sig_images_changed.connect(self._charts_drawn)

    def _charts_drawn(self) -> None:
        if self._html and ".vl.json" in self._html:
            self._apply(self._html)  # the document asks for its images again

    def loadResource(self, kind: int, url: QUrl | str) -> Any:  # noqa: N802 - Qt's name
        url = QUrl(url) if isinstance(url, str) else url
        if (
            self.chart_images is not None
            and kind == QTextDocument.ResourceType.ImageResource.value
            and url.path().endswith(".vl.json")
            and not url.scheme()
        ):
            return self._fitted(self.chart_images.image(url.path()).image)
        return super().loadResource(kind, url)

    def _fitted(self, image: QImage) -> QImage:
        """``image`` scaled down to the preview's width (less the document's margins)."""
        ratio = image.devicePixelRatio() or 1.0
        room = self.viewport().width() - 2 * round(self.document().documentMargin()) - 4
        if not self.verticalScrollBar().isVisible():  # it may appear once the page is laid out
            room -= self.verticalScrollBar().sizeHint().width()
        room = max(120, room)
        if image.width() / ratio <= room:
            return image
        fitted = image.scaledToWidth(
            round(room * ratio), Qt.TransformationMode.SmoothTransformation
        )
        fitted.setDevicePixelRatio(ratio)
        return fitted

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width() and ".vl.json" in self._html:
            self._refit.start()

    def scroll_to_annotation(self, annotation_id: str) -> None:
        self.scrollToAnchor(f"ann-{annotation_id}")

    def follow(self, ratio: float) -> None:
        """Scroll to the same relative place as the editor."""
        bar = self.verticalScrollBar()
        bar.setValue(round(max(0.0, min(1.0, ratio)) * bar.maximum()))

    def _link_clicked(self, url: QUrl) -> None:
        if url.scheme() == "lantide-step":
            self.sig_step_clicked.emit(url.path() or url.toString().split(":", 1)[-1])
        elif url.scheme() == "annotation":
            self.sig_annotation_clicked.emit(url.path() or url.toString().split(":", 1)[-1])
        elif url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
