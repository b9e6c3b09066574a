"""Drawing a quick chart with QPainter: bars, a line or a scatter, with axes and ticks.

:class:`ChartCanvas` only draws what it is given (:class:`ChartData`); choosing columns and
fetching rows is :mod:`lantide.ui.sql.chart_widget`'s job. Dates and timestamps on the x axis
are drawn on a time scale with date labels. Hovering a bar or a point shows its values.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QToolTip, QWidget

BAR, LINE, SCATTER = "bar", "line", "scatter"
KINDS = (BAR, LINE, SCATTER)
SERIES_COLORS = ("#3b82f6", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#06b6d4")


@dataclass
class ChartData:
    kind: str
    x_label: str
    y_label: str
    x: list = field(default_factory=list)  # categories (bar) or numbers/dates
    y: list[float | None] = field(default_factory=list)  # None: not a number, not drawn
    x_is_time: bool = False
    note: str = ""  # e.g. "first 50 of 1,204 categories"
    # Bars of one category next to each other, coloured by a second column's value:
    # ``series`` names the colours (the legend), ``bar_series`` is each bar's colour and
    # ``bar_group`` its category's index (its label is drawn once, under the group).
    series: list[str] = field(default_factory=list)
    series_label: str = ""
    bar_series: list[int] = field(default_factory=list)
    bar_group: list[int] = field(default_factory=list)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering ``lo..hi`` (1, 2, 2.5, 5 × 10^n steps)."""
    if not math.isfinite(lo) or not math.isfinite(hi):
        return []
    if hi == lo:
        hi, lo = hi + 1, lo - 1 if lo != 0 else 0
    span = hi - lo
    raw = span / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(lo / step) * step
    ticks = [round(first, 12)]
    while ticks[-1] < hi and len(ticks) < 50:
        ticks.append(round(first + len(ticks) * step, 12))
    return ticks


def format_number(value: float) -> str:
    if value == 0:
        return "0"
    magnitude = abs(value)
    for threshold, unit, suffix in (
        (1e12, 1e12, "T"),
        (1e9, 1e9, "B"),
        (1e6, 1e6, "M"),
        (1e4, 1e3, "k"),
    ):
        if magnitude >= threshold:
            return f"{value / unit:.3g}{suffix}"
    if magnitude >= 1:
        return f"{value:.6g}"
    return f"{value:.3g}"


def to_number(value) -> float | None:
    """A value on a numeric axis: numbers, booleans, dates and timestamps (seconds)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        return value.timestamp()
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.UTC).timestamp()
    try:
        return float(value)  # Decimal
    except (TypeError, ValueError):
        return None


def format_time(seconds: float, span: float) -> str:
    moment = _dt.datetime.fromtimestamp(seconds, tz=_dt.UTC)
    if span > 2 * 86400:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%m-%d %H:%M")


def label_layout(widest: int, slot: float, line_height: int) -> tuple[bool, int]:
    """(slanted, every): category labels side by side when the widest fits its slot, else
    slanted at 30 degrees; and only every n-th label so that none overlaps the next (a
    slanted one needs about 2.2 line heights of width)."""
    slanted = widest + 6 > slot
    need = line_height * 2.2 if slanted else widest + 6
    return slanted, max(1, math.ceil(need / max(slot, 1.0)))


class ChartCanvas(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.data: ChartData | None = None
        self.message = "Run the query to chart its result."
        self.setMouseTracking(True)
        self.setMinimumSize(200, 60)  # a SQL tab in a small window still fits
        self._hits: list[tuple[QRectF, str]] = []

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(640, 360)

    def set_data(self, data: ChartData | None, message: str = "") -> None:
        self.data = data
        self.message = message
        self.update()

    # -- painting ----------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        self._hits = []
        data = self.data
        if data is None or not data.y:
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(
                self.rect(), Qt.AlignmentFlag.AlignCenter, self.message or "Nothing to chart."
            )
            return
        metrics = QFontMetrics(self.font())
        y_values = [v for v in data.y if v is not None]
        lo, hi = min(y_values), max(y_values)
        if data.kind == BAR:
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        y_ticks = nice_ticks(lo, hi)
        y_lo, y_hi = (y_ticks[0], y_ticks[-1]) if y_ticks else (lo, hi or 1)
        label_w = (
            max(metrics.horizontalAdvance(format_number(t)) for t in y_ticks) if y_ticks else 30
        )
        line_h = metrics.height()
        top = 16 + (line_h if data.note or data.series else 0)
        right_pad = 24 if data.kind == BAR else 48  # room for the last x label
        plot = QRectF(
            label_w + 14 + line_h,
            top,
            self.width() - label_w - 14 - line_h - right_pad,
            self.height() - top - 16 - 2.4 * line_h,
        )
        if plot.width() < 40 or plot.height() < 40:  # say so rather than show nothing
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(
                self.rect(),
                Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                "Too little room to draw the chart: drag the divider above the result "
                "up, or make the window larger.",
            )
            return
        text_color = palette.color(QPalette.ColorRole.Text)
        muted = palette.color(QPalette.ColorRole.PlaceholderText)
        grid = QColor(muted)
        grid.setAlpha(60)

        def y_pos(v: float) -> float:
            return plot.bottom() - (v - y_lo) / ((y_hi - y_lo) or 1) * plot.height()

        painter.setPen(QPen(grid, 1))
        for tick in y_ticks:
            y = y_pos(tick)
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        painter.setPen(muted)
        for tick in y_ticks:
            y = y_pos(tick)
            painter.drawText(
                QRectF(0, y - line_h / 2, label_w + 8 + line_h, line_h),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                format_number(tick),
            )
        # axis titles
        painter.setPen(text_color)
        painter.drawText(
            QRectF(plot.left(), self.height() - line_h - 4, plot.width(), line_h),
            Qt.AlignmentFlag.AlignCenter,
            data.x_label,
        )
        painter.save()
        painter.translate(4 + line_h / 2, plot.center().y())
        painter.rotate(-90)
        painter.drawText(
            QRectF(-plot.height() / 2, -line_h / 2, plot.height(), line_h),
            Qt.AlignmentFlag.AlignCenter,
            data.y_label,
        )
        painter.restore()
        if data.note:
            painter.setPen(muted)
            painter.drawText(
                QRectF(plot.left(), 4, plot.width(), line_h), Qt.AlignmentFlag.AlignRight, data.note
            )
        color = QColor(SERIES_COLORS[0])
        if data.kind == BAR and data.series:
            self._paint_grouped_bars(painter, data, plot, y_pos, metrics, muted)
        elif data.kind == BAR:
            self._paint_bars(painter, data, plot, y_pos, color, metrics, muted)
        else:
            self._paint_xy(painter, data, plot, y_pos, color, metrics, muted, grid)
        painter.setPen(QPen(muted, 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())

    def _paint_grouped_bars(self, painter, data, plot, y_pos, metrics, muted) -> None:
        """Bars of each category side by side, one colour per series, a legend on top;
        category labels are thinned (every n-th) and slanted when they do not fit."""
        groups = max(data.bar_group) + 1 if data.bar_group else 0
        per_group = max(1, len(data.series))
        group_w = plot.width() / max(groups, 1)
        bar_w = max(1.0, group_w * 0.8 / per_group)
        zero = y_pos(0.0)
        for i, value in enumerate(data.y):
            if value is None:
                continue
            g, s = data.bar_group[i], data.bar_series[i]
            x = plot.left() + g * group_w + group_w * 0.1 + s * bar_w
            top = y_pos(value)
            painter.fillRect(
                QRectF(x, min(top, zero), bar_w, abs(zero - top)),
                QColor(SERIES_COLORS[s % len(SERIES_COLORS)]),
            )
            self._hits.append(
                (
                    QRectF(x, plot.top(), bar_w, plot.height()),
                    f"{data.x[g]}, {data.series_label} {data.series[s]}: {format_number(value)}",
                )
            )
        self._paint_category_labels(painter, list(data.x), plot, group_w, metrics, muted)
        # the legend: one swatch per series, left to right above the plot
        x = plot.left()
        painter.setPen(muted)
        for s, name in enumerate(data.series):
            text = f"{name}"
            width = metrics.horizontalAdvance(text) + 18
            if x + width > plot.right():
                painter.drawText(QPointF(x, 4 + metrics.ascent()), "…")
                break
            painter.fillRect(
                QRectF(x, 4 + (metrics.height() - 10) / 2, 10, 10),
                QColor(SERIES_COLORS[s % len(SERIES_COLORS)]),
            )
            painter.drawText(QPointF(x + 14, 4 + metrics.ascent()), text)
            x += width + 8

    def hit_texts(self) -> list[str]:
        """What hovering each bar or point says, as last painted."""
        return [text for _rect, text in self._hits]

    def _paint_category_labels(self, painter, labels, plot, slot, metrics, muted) -> None:
        """One label per slot (:func:`label_layout`): side by side, or slanted, every n-th."""
        widest = max((metrics.horizontalAdvance(str(t)) for t in labels), default=0)
        slanted, every = label_layout(widest, slot, metrics.height())
        painter.save()
        painter.setPen(muted)
        for i, label in enumerate(labels):
            if i % every:
                continue
            centre = plot.left() + i * slot + slot / 2
            if not slanted:
                painter.drawText(
                    QRectF(centre - slot / 2, plot.bottom() + 3, slot, metrics.height()),
                    Qt.AlignmentFlag.AlignHCenter,
                    str(label),
                )
                continue
            painter.save()
            painter.translate(centre, plot.bottom() + 4)
            painter.rotate(-30)
            painter.drawText(
                QRectF(-110, 0, 110, metrics.height()),
                Qt.AlignmentFlag.AlignRight,
                metrics.elidedText(str(label), Qt.TextElideMode.ElideRight, 108),
            )
            painter.restore()
        painter.restore()

    def _paint_bars(self, painter, data, plot, y_pos, color, metrics, muted) -> None:
        n = len(data.y)
        slot = plot.width() / n
        bar_w = max(1.0, slot * 0.72)
        zero = y_pos(0.0)
        for i, (label, value) in enumerate(zip(data.x, data.y, strict=True)):
            if value is None:
                continue
            x = plot.left() + i * slot + (slot - bar_w) / 2
            top = y_pos(value)
            rect = QRectF(x, min(top, zero), bar_w, abs(zero - top))
            painter.fillRect(rect, color)
            self._hits.append(
                (
                    QRectF(plot.left() + i * slot, plot.top(), slot, plot.height()),
                    f"{label}: {format_number(value)}",
                )
            )
        self._paint_category_labels(painter, list(data.x), plot, slot, metrics, muted)

    def _paint_xy(self, painter, data, plot, y_pos, color, metrics, muted, grid) -> None:
        points = [
            (x, y) for x, y in zip(data.x, data.y, strict=True) if x is not None and y is not None
        ]
        if not points:
            return
        xs = [p[0] for p in points]
        x_lo, x_hi = min(xs), max(xs)
        if data.x_is_time:
            span = x_hi - x_lo
            x_ticks = [x_lo + span * i / 4 for i in range(5)] if span else [x_lo]
            x_label = lambda v: format_time(v, span)  # noqa: E731
        else:
            x_ticks = nice_ticks(x_lo, x_hi)
            if x_ticks:
                x_lo, x_hi = min(x_lo, x_ticks[0]), max(x_hi, x_ticks[-1])
            x_label = format_number

        def x_pos(v: float) -> float:
            return plot.left() + (v - x_lo) / ((x_hi - x_lo) or 1) * plot.width()

        for tick in x_ticks:
            x = x_pos(tick)
            painter.setPen(QPen(grid, 1))
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            painter.setPen(muted)
            painter.drawText(
                QRectF(x - 60, plot.bottom() + 3, 120, metrics.height()),
                Qt.AlignmentFlag.AlignHCenter,
                x_label(tick),
            )
        if data.kind == LINE:
            path = QPainterPath()
            for i, (x, y) in enumerate(sorted(points)):
                point = QPointF(x_pos(x), y_pos(y))
                path.moveTo(point) if i == 0 else path.lineTo(point)
            painter.setPen(QPen(color, 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
        fill = QColor(color)
        fill.setAlpha(150 if data.kind == SCATTER else 255)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        radius = 3.0 if data.kind == SCATTER else (2.5 if len(points) <= 120 else 0)
        for x, y in points:
            center = QPointF(x_pos(x), y_pos(y))
            if radius:
                painter.drawEllipse(center, radius, radius)
            if len(self._hits) < 5000:
                self._hits.append(
                    (
                        QRectF(center.x() - 5, center.y() - 5, 10, 10),
                        f"{data.x_label} {x_label(x)}, {data.y_label} {format_number(y)}",
                    )
                )

    # -- hover ---------------------------------------------------------------------------
    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        pos = event.position()
        for rect, text in reversed(self._hits):
            if rect.contains(pos):
                QToolTip.showText(event.globalPosition().toPoint(), text, self)
                return
        QToolTip.hideText()
