"""What a screenshot can show cheaply: a button's or label's text that does not fit its
widget. Used by the screenshot tour (real X server) and the layout tests (offscreen)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QLabel,
    QRadioButton,
    QStyle,
    QToolButton,
    QWidget,
)

SLACK = 2  # pixels of rounding a style may take


def _visible_text(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _where(widget: QWidget) -> str:
    names = []
    w = widget
    while w is not None and len(names) < 4:
        names.append(w.objectName() or type(w).__name__)
        w = w.parentWidget()
    return "/".join(reversed(names))


def _button_need(button: QAbstractButton) -> int:
    fm = button.fontMetrics()
    lines = _visible_text(button.text()).split("\n")
    need = max(fm.horizontalAdvance(line) for line in lines)
    style = button.style()
    if isinstance(button, QToolButton):
        if button.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly:
            return 0
        if (
            button.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon
            and not button.icon().isNull()
        ):
            need += button.iconSize().width() + 2
        return need + 4
    if isinstance(button, (QCheckBox, QRadioButton)):
        return (
            need
            + style.pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth)
            + style.pixelMetric(QStyle.PixelMetric.PM_CheckBoxLabelSpacing)
        )
    if not button.icon().isNull():
        need += button.iconSize().width() + 4
    return need + 2 * style.pixelMetric(QStyle.PixelMetric.PM_ButtonMargin)


def _label_problem(label: QLabel) -> str | None:
    text = label.text()
    if not text or label.pixmap() is not None and not label.pixmap().isNull():
        return None
    if label.wordWrap():
        need_h = label.heightForWidth(label.width())
        if need_h > label.height() + SLACK:
            return f"{label.height()}px high < {need_h}px"
        return None
    need = label.minimumSizeHint().width()
    if need > label.width() + SLACK:
        return f"{label.width()}px < {need}px"
    return None


def clipped_widgets(root: QWidget) -> list[str]:
    """Visible buttons and labels under ``root`` whose text does not fit them. A widget
    Qt counts as visible but with nothing of it on screen (the panel of a tabbed dock
    that is not the current tab, kept outside the window) is not looked at: no screenshot
    can show it, and it is laid out anew when its tab is chosen."""
    found = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisible() or widget.width() <= 0 or widget.visibleRegion().isEmpty():
            continue
        if isinstance(widget, QAbstractButton) and widget.text():
            need = _button_need(widget)
            if need > widget.width() + SLACK:
                found.append(
                    f"button '{widget.text()}' {widget.width()}px < {need}px ({_where(widget)})"
                )
        elif isinstance(widget, QLabel):
            problem = _label_problem(widget)
            if problem:
                found.append(f"label '{widget.text()[:40]}' {problem} ({_where(widget)})")
    return found
