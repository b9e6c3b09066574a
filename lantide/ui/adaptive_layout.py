"""Layout that gives the centre priority when the window is small.

Qt's main window keeps its docks' sizes when the window shrinks and takes the difference
from the central widget, so a 1024x700 window crushed the Plan to a 50-pixel column. Here
the side docks give up width first (down to their minimums, in proportion to what each
can spare) and the bottom docks give up height, and they get it back when the window
grows again. Splitters that hold two panes side by side stack them when narrow
(:class:`StackWhenNarrow`), and tab bars keep a readable part of each title
(:class:`ReadableTabBar`).

:func:`share_shortfall` is the rule, without Qt, so it can be tested on its own.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QSplitter, QStyle, QTabBar, QWidget

CENTRE_MIN_WIDTH = 560  # a Plan with its annotations, a SQL editor with its toolbar
CENTRE_MIN_HEIGHT = 400  # a SQL tab shows its editor and at least a dozen result rows
TAB_TITLE_MIN_CHARS = 12


def share_shortfall(sizes: list[int], minimums: list[int], shortfall: int) -> list[int]:
    """New sizes after taking ``shortfall`` pixels from ``sizes``, each in proportion to
    what it can spare above its minimum; never below a minimum (so when together they
    cannot spare enough, each ends at its minimum)."""
    spare = [max(0, s - m) for s, m in zip(sizes, minimums, strict=True)]
    total = sum(spare)
    if shortfall <= 0 or total == 0:
        return list(sizes)
    take = min(shortfall, total)
    out = []
    taken = 0
    for i, (size, room) in enumerate(zip(sizes, spare, strict=True)):
        part = take - taken if i == len(sizes) - 1 else round(take * room / total)
        part = min(part, room)
        taken += part
        out.append(size - part)
    return out


def give_back(sizes: list[int], wanted: list[int], surplus: int) -> list[int]:
    """New sizes after handing up to ``surplus`` pixels back towards ``wanted``."""
    missing = [max(0, w - s) for s, w in zip(sizes, wanted, strict=True)]
    total = sum(missing)
    if surplus <= 0 or total == 0:
        return list(sizes)
    give = min(surplus, total)
    return [s + min(m, round(give * m / total)) for s, m in zip(sizes, missing, strict=True)]


class AdaptiveDocks(QObject):
    """Keeps the central widget of ``window`` at least ``CENTRE_MIN_WIDTH`` x
    ``CENTRE_MIN_HEIGHT`` by resizing the docks (see the module's doc)."""

    def __init__(self, window: QMainWindow, side: list[QDockWidget], bottom: list[QDockWidget]):
        super().__init__(window)
        self.window = window
        self.side = side
        self.bottom = bottom
        self._wanted: dict[str, int] = {}  # a place's extent before the window shrank
        self._roomy: dict[str, int] = {}  # the extents last seen with room to spare
        self._last_size = window.size()
        self._adapting = False
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.adapt)
        window.installEventFilter(self)
        # The centre too: the main window may lay it out after the timer ran.
        self._centre().installEventFilter(self)

    def _centre(self) -> QWidget:
        centre = self.window.centralWidget()
        if centre is None:  # the main window sets it before it makes this
            raise RuntimeError("AdaptiveDocks needs the window's central widget")
        return centre

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show) and (
            watched is self.window or watched is self.window.centralWidget()
        ):
            self._timer.start()  # after the main window's own layout has run
        return False

    def _places(self, docks: list[QDockWidget]) -> list[tuple[QDockWidget, int, int]]:
        """Per dock area in use: a dock to resize it by, its current extent across the
        centre and its minimum. Tabified docks share one place, and a hidden tab keeps a
        stale size, so the extent is measured from the central widget's geometry."""
        window = self.window
        centre = self._centre().geometry()
        separator = window.style().pixelMetric(QStyle.PixelMetric.PM_DockWidgetSeparatorExtent)
        places: dict[Qt.DockWidgetArea, list[QDockWidget]] = {}
        for dock in docks:
            if not dock.isFloating() and not dock.isHidden():
                places.setdefault(window.dockWidgetArea(dock), []).append(dock)
        out = []
        for area, members in places.items():
            if area == Qt.DockWidgetArea.LeftDockWidgetArea:
                extent = centre.left() - separator
            elif area == Qt.DockWidgetArea.RightDockWidgetArea:
                extent = window.width() - centre.right() - 1 - separator
            else:
                extent = max(d.height() for d in members)
            horizontal = area in _HORIZONTAL
            minimum = max(_minimum(d, horizontal) for d in members)
            out.append((members[0], max(extent, minimum), minimum))
        return out

    def adapt(self) -> None:
        if self._adapting or not self.window.isVisible():
            return
        self._adapting = True
        try:
            size = self.window.size()
            last, self._last_size = self._last_size, size
            centre = self._centre().size()
            self._fit(
                self.side,
                CENTRE_MIN_WIDTH - centre.width(),
                size.width() > last.width(),
                Qt.Orientation.Horizontal,
            )
            self._fit(
                self.bottom,
                CENTRE_MIN_HEIGHT - centre.height(),
                size.height() > last.height(),
                Qt.Orientation.Vertical,
            )
        finally:
            self._adapting = False

    def _fit(self, docks: list[QDockWidget], shortfall: int, grew: bool, orientation) -> None:
        places = self._places(docks)
        if not places:
            return
        keys = [d.objectName() for d, _e, _m in places]
        sizes = [e for _d, e, _m in places]
        if shortfall > 0:  # remember where each was while there was room
            for key, size in zip(keys, sizes, strict=True):
                self._wanted.setdefault(key, self._roomy.get(key, size))
            new = share_shortfall(sizes, [m for _d, _e, m in places], shortfall)
        elif grew and any(k in self._wanted for k in keys):
            wanted = [max(self._wanted.get(k, s), s) for k, s in zip(keys, sizes, strict=True)]
            new = give_back(sizes, wanted, -shortfall)
            for key, got, want in zip(keys, new, wanted, strict=True):
                if got >= want - 2:
                    self._wanted.pop(key, None)
        else:  # room enough, not growing: these are the sizes the analyst likes
            if not any(k in self._wanted for k in keys):
                self._roomy.update(zip(keys, sizes, strict=True))
            return
        if new != sizes:
            self.window.resizeDocks([d for d, _e, _m in places], new, orientation)


_HORIZONTAL = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)


def _minimum(dock: QDockWidget, horizontal: bool) -> int:
    hint = dock.minimumSizeHint().expandedTo(dock.minimumSize())
    return hint.width() if horizontal else hint.height()


class StackWhenNarrow(QObject):
    """A splitter of two panes side by side turns vertical (the second pane below the
    first) while it is narrower than ``min_width``, and back when it is wide again."""

    def __init__(self, splitter: QSplitter, min_width: int):
        super().__init__(splitter)
        self.splitter = splitter
        self.min_width = min_width
        # Its minimum is the stacked one even while side by side: otherwise the window
        # could not get narrow enough for the panes to stack.
        panes = [splitter.widget(i) for i in range(splitter.count())]
        splitter.setMinimumWidth(
            max(pane.minimumSizeHint().width() for pane in panes if pane is not None)
        )
        splitter.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched is self.splitter and event.type() == QEvent.Type.Resize:
            self.update_orientation(event.size().width())
        return False

    def update_orientation(self, width: int) -> None:
        wanted = Qt.Orientation.Vertical if width < self.min_width else Qt.Orientation.Horizontal
        if self.splitter.orientation() != wanted:
            self.splitter.setOrientation(wanted)
            count = self.splitter.count()
            if count:  # equal shares in the new direction
                total = (
                    self.splitter.height()
                    if wanted == Qt.Orientation.Vertical
                    else self.splitter.width()
                )
                self.splitter.setSizes([max(1, total // count)] * count)

    def stacked(self) -> bool:
        return self.splitter.orientation() == Qt.Orientation.Vertical


class ReadableTabBar(QTabBar):
    """Titles elide in the middle, but a tab never shrinks below the first and last
    characters of its title (``TAB_TITLE_MIN_CHARS`` in all); more tabs scroll."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setElideMode(Qt.TextElideMode.ElideMiddle)
        self.setUsesScrollButtons(True)

    def minimumTabSizeHint(self, index: int) -> QSize:  # noqa: N802 - Qt's name
        hint = super().minimumTabSizeHint(index)
        full = self.tabSizeHint(index)
        text = self.tabText(index)
        if len(text) <= TAB_TITLE_MIN_CHARS:
            return full
        shown = text[: TAB_TITLE_MIN_CHARS // 2] + "…" + text[-(TAB_TITLE_MIN_CHARS // 2) :]
        extra = self.fontMetrics().horizontalAdvance(shown) - self.fontMetrics().horizontalAdvance(
            self._elided(text)
        )
        return QSize(min(full.width(), hint.width() + max(0, extra)), hint.height())

    @staticmethod
    def _elided(text: str) -> str:
        """The text Qt's own minimum hint is measured on when eliding in the middle."""
        return text[:1] + "..." + text[-1:] if len(text) > 3 else text
