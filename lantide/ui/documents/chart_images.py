"""Charts in the Markdown preview: ``![title](charts/NAME.vl.json)`` drawn as an image.

:class:`ChartImages` answers the preview's image requests for ``.vl.json`` links. A chart
is drawn off the UI thread (a worker: :func:`lantide.charts.render_chart` with the app's
query service, then the SVG painted into a ``QImage``); until it is ready the request gets
a "Drawing the chart…" box, and :attr:`ChartImages.sig_images_changed` tells the preview to
ask again. An error (a bad spec, a missing table) is drawn in place as a box that names
the file. Images are kept per file version (modification time and size) and per state of
the cached tables: an edit of the file, or a table made again, redraws (the old drawing
stays until the new one is ready).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QByteArray, QObject, QRectF, Qt, Signal
from PySide6.QtGui import QImage, QPainter

from lantide.workspace import layout

log = logging.getLogger(__name__)
PIXEL_RATIO = 2.0  # drawn at twice the size: sharp on high-DPI screens, fine elsewhere
MAX_WIDTH = 900  # logical pixels; a wider chart is scaled down to fit the preview


@dataclass(frozen=True)
class ChartImage:
    image: QImage
    status: str  # "ok", "error" or "pending"
    message: str = ""  # the error, naming the file


def svg_image(svg: str) -> QImage:
    """``svg`` painted into an ARGB image at :data:`PIXEL_RATIO` (any thread)."""
    from PySide6.QtSvg import QSvgRenderer

    # vega writes empty paths (d="") for parts with nothing to draw; QtSvg warns on each
    svg = svg.replace(' d=""', ' d="M0,0"')
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    size = renderer.defaultSize()
    width, height = max(1, size.width()), max(1, size.height())
    if width > MAX_WIDTH:
        width, height = MAX_WIDTH, max(1, round(height * MAX_WIDTH / width))
    image = QImage(
        round(width * PIXEL_RATIO), round(height * PIXEL_RATIO), QImage.Format.Format_ARGB32
    )
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, image.width(), image.height()))
    painter.end()
    image.setDevicePixelRatio(PIXEL_RATIO)
    return image


def draw_chart(query, path: Path, source: str) -> tuple[str, QImage, str]:
    """``(status, image, message)`` of the chart file at ``path`` (runs in a worker)."""
    from lantide import charts
    from lantide.errors import LantideError

    try:
        svg, loaded = charts.render_chart(path, query, source=source)
        return "ok", svg_image(svg), "; ".join(loaded.notes)
    except LantideError as exc:
        return "error", svg_image(charts.error_svg(exc.message)), exc.message


class ChartImages(QObject):
    """The chart images of one project's documents, for the preview."""

    sig_images_changed = Signal()

    def __init__(self, services, project: str, parent: QObject | None = None):
        super().__init__(parent)
        self.services = services
        self.project = project
        self.project_dir = layout.project_dir(services.workspace.root, project)
        self._images: dict[str, tuple[tuple[int, int, int], ChartImage]] = {}
        self._drawing: set[tuple[str, tuple[int, int, int]]] = set()
        self._tables = 0  # bumped when cached tables change: every chart is drawn again
        services.sig_tables_changed.connect(self._tables_changed)

    def _tables_changed(self) -> None:
        self._tables += 1
        if self._images:
            self.sig_images_changed.emit()  # the preview asks again, and they redraw

    def _file(self, src: str) -> Path | None:
        """The chart file a link names, if it is inside the project folder."""
        path = (self.project_dir / layout.link_target_path(src)).resolve()
        try:
            path.relative_to(self.project_dir.resolve())
        except ValueError:
            return None
        return path

    def image(self, src: str) -> ChartImage:
        """The image for a ``.vl.json`` link of the preview (never waits)."""
        from lantide.charts.placeholder import error_svg, pending_svg

        shown = layout.project_relpath(self.project, src)
        path = self._file(src)
        if path is None:
            message = f"{src}: a chart must be a file of the project (charts/NAME.vl.json)"
            return ChartImage(svg_image(error_svg(message)), "error", message)
        try:
            stat = path.stat()
            version = (stat.st_mtime_ns, stat.st_size, self._tables)
        except OSError:
            message = f"{shown}: no such chart file"
            return ChartImage(svg_image(error_svg(message)), "error", message)
        kept = self._images.get(src)
        if kept is not None and kept[0] == version:
            return kept[1]
        if (src, version) not in self._drawing:
            self._drawing.add((src, version))
            self.services.when_query_ready(
                lambda query, s=src, v=version, p=path, n=shown: self._draw(query, s, v, p, n)
            )
        if kept is not None:  # the previous drawing until the new one is ready
            return kept[1]
        return ChartImage(svg_image(pending_svg()), "pending")

    def state(self, src: str) -> ChartImage | None:
        """The last finished drawing of a link, if any (for tests and tooltips)."""
        kept = self._images.get(src)
        return kept[1] if kept else None

    def _draw(self, query, src: str, version: tuple[int, int, int], path: Path, shown: str) -> None:
        def done(result, s=src, v=version):
            status, image, message = result
            self._drawing.discard((s, v))
            self._images[s] = (v, ChartImage(image, status, message))
            self.sig_images_changed.emit()

        def failed(exc, s=src, v=version):
            self._drawing.discard((s, v))
            log.error("chart %s not drawn: %s", s, exc)

        self.services.workers.submit(
            lambda ctx: draw_chart(query, path, shown),
            on_result=done,
            on_error=failed,
            name=f"chart {shown}",
        )

    def forget(self) -> None:
        """Draw every chart again on the next request (the data may have changed)."""
        self._images.clear()
