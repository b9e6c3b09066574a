"""The assistant's answer in the chat: Markdown rendered while it streams, in segments so
that a long answer stays cheap to update, with its step lines linked to the ledger.

:class:`AutoHeightBrowser` (a QTextBrowser as tall as its content) is shared with the tool
cards.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import QApplication, QFrame, QSizePolicy, QTextBrowser, QVBoxLayout, QWidget

from lantide.ui.chat.chat_markdown import (
    STEP_SCHEME,
    render_markdown,
    split_step_lines,
    table_spans,
    unit_starts,
)
from lantide.ui.theme import colors
from lantide.ui.themed import ThemedFrame

RENDER_INTERVAL_MS = 60  # streamed text is re-rendered at most this often
# A streamed answer's finished blocks stay rendered once they reach this many characters;
# each re-render then costs what the tail costs, not what the whole answer costs.
SEGMENT_CHARS = 1200


SIDEWAYS_SCROLL_BAR = (
    "QScrollBar:horizontal { height: 9px; background: transparent; margin: 0; }"
    "QScrollBar::handle:horizontal { background: palette(mid); border-radius: 4px;"
    " min-width: 24px; }"
    "QScrollBar::handle:horizontal:hover { background: palette(dark); }"
    "QScrollBar::add-line:horizontal, QScrollBar::sub-line:horizontal { width: 0; }"
    "QScrollBar::add-page:horizontal, QScrollBar::sub-page:horizontal { background: none; }"
)


class AutoHeightBrowser(QTextBrowser):
    """A QTextBrowser as tall as its content (the transcript scrolls, not each message).

    Its text wraps to its width, breaking a word that does not fit anywhere (a long path),
    so it is never wider than the column it sits in. A ``wide`` box (a table) keeps each
    line whole and scrolls sideways instead; its height then counts the scroll bar."""

    sig_step_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, wide: bool = False):
        super().__init__(parent)
        self.wide = False
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.set_wide(wide)
        self.setMinimumWidth(40)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.setStyleSheet("QTextBrowser { background: transparent; }")
        # under the box's style sheet Fusion drew the handle solid black: a slim one instead
        self.horizontalScrollBar().setStyleSheet(SIDEWAYS_SCROLL_BAR)
        self.document().setDocumentMargin(2)
        self.document().contentsChanged.connect(self._fit)
        self.anchorClicked.connect(self._anchor)

    def set_wide(self, wide: bool) -> None:
        self.wide = wide
        self.setHorizontalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded if wide else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        self.setLineWrapMode(
            QTextBrowser.LineWrapMode.NoWrap if wide else QTextBrowser.LineWrapMode.WidgetWidth
        )
        self.setWordWrapMode(
            QTextOption.WrapMode.NoWrap
            if wide
            else QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere
        )
        self._fit()

    def set_plain_text(self, text: str) -> None:
        self.setPlainText(text)
        self._fit()

    def _fit(self) -> None:
        if self.wide:
            self.document().setTextWidth(-1)
            height = int(self.document().size().height()) + 6
            if self.document().idealWidth() > self.viewport().width():
                height += self.horizontalScrollBar().sizeHint().height()
        else:
            self.document().setTextWidth(self.viewport().width())
            height = int(self.document().size().height()) + 6
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(300, self.height())

    def _anchor(self, url: QUrl) -> None:
        if url.scheme() == STEP_SCHEME:
            self.sig_step_clicked.emit(url.path())
        elif url.scheme() in ("http", "https", "mailto"):
            from PySide6.QtGui import QDesktopServices

            QDesktopServices.openUrl(url)


class AssistantMessageWidget(ThemedFrame):
    """The assistant's answer, rendered as Markdown while it streams.

    Re-rendering the whole answer for every few deltas costs more the longer it gets
    (Markdown, then Qt's HTML import and layout of the whole document). So the answer is
    shown in segments, each a browser of its own: once the finished blocks of the last
    segment are long enough, they stay rendered as they are and a new segment takes the
    growing tail. A segment is cut only where a Markdown block or a step line begins, where
    rendering each side alone gives the same HTML as rendering the whole.
    """

    sig_step_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("AssistantMessage")
        self.text = ""
        # the engine's outcome of each step line, in order: (step id or None, outcome)
        self.step_lines: list[tuple[str | None, str]] = []
        self.segments: list[_Segment] = []
        self._checked_at = 0  # live length when the last cut was looked for
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(2, 2, 2, 2)
        self._layout.setSpacing(0)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RENDER_INTERVAL_MS)
        self._timer.timeout.connect(self.render_pending)
        self._add_segment(0, 0)

    def append(self, delta: str) -> None:
        self.text += delta
        if not self._timer.isActive():
            self._timer.start()

    def set_text(self, text: str) -> None:
        if text == self.text:  # the streamed text, complete: only the tail is left to show
            self.render_pending()
            return
        self.text = text
        self._rebuild()

    def set_step_lines(self, step_lines: list[tuple[str | None, str]]) -> None:
        self.step_lines = list(step_lines)
        self._timer.stop()
        for segment in self.segments:
            if segment is self.segments[-1] or segment.step_count:
                self._render_segment(segment)

    def render_pending(self) -> None:
        """Show the text appended since the last render: the last segment only, after
        closing it off first when its finished blocks are long enough."""
        self._timer.stop()
        live = self._split_off_tables(self.segments[-1])
        tail = self.text[live.start :]
        if len(tail) >= SEGMENT_CHARS and len(tail) - self._checked_at >= SEGMENT_CHARS // 8:
            self._checked_at = len(tail)
            cut = _last_cut(tail)
            if cut >= SEGMENT_CHARS:
                live = self._close(live, cut)
        self._render_segment(live)

    def _split_off_tables(self, live: _Segment) -> _Segment:
        """A table gets a segment of its own (a box that scrolls sideways): the text before
        it is closed off, and the table's segment is closed once a block follows it."""
        while "|" in self.text[live.start :]:
            tail = self.text[live.start :]
            spans = table_spans(tail)
            if not spans:
                break
            start, end = spans[0]
            if start > 0:
                live = self._close(live, start, wide=True)
                continue
            live.browser.set_wide(True)
            after = next((s for s in unit_starts(tail) if s >= end), None)
            if after is None:
                break  # the table is still the end of the text (and may grow)
            live = self._close(live, after)
        return live

    def _close(self, live: _Segment, cut: int, *, wide: bool = False) -> _Segment:
        """Freeze ``live`` at ``cut`` (relative to its start); a new segment takes the rest."""
        live.end = live.start + cut
        self._render_segment(live)
        self._checked_at = 0
        return self._add_segment(live.end, live.first_step + live.step_count, wide=wide)

    def _rebuild(self) -> None:
        """Render the whole text afresh (a replayed answer, a theme switch)."""
        self._timer.stop()
        for segment in self.segments:
            self._layout.removeWidget(segment.browser)
            segment.browser.deleteLater()
        self.segments = []
        self._checked_at = 0
        cuts = _segment_cuts(self.text)
        tables = {start for start, _end in table_spans(self.text)}
        first_step = 0
        ends: list[int | None] = [*cuts, None]
        for start, end in zip([0, *cuts], ends, strict=True):  # one end per start
            segment = self._add_segment(start, first_step, wide=start in tables)
            segment.end = end
            self._render_segment(segment)
            first_step += segment.step_count

    def _add_segment(self, start: int, first_step: int, *, wide: bool = False) -> _Segment:
        browser = AutoHeightBrowser(self, wide=wide)
        browser.sig_step_clicked.connect(self.sig_step_clicked)
        browser.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        browser.customContextMenuRequested.connect(
            lambda pos, b=browser: self._context_menu(b, pos)
        )
        self._layout.addWidget(browser)
        segment = _Segment(start, browser, first_step)
        self.segments.append(segment)
        return segment

    def _render_segment(self, segment: _Segment) -> None:
        theme = colors()
        text = self.text[segment.start : segment.end]
        segment.step_count = sum(1 for kind, _ in split_step_lines(text) if kind == "step")
        segment.browser.setHtml(
            render_markdown(
                text,
                dark=theme.dark,
                step_lines=self.step_lines[segment.first_step :],
                muted=theme.muted.name(),
                border=theme.border.name(),
                code_background=theme.code_background.name(),
            )
        )

    def _context_menu(self, browser: AutoHeightBrowser, pos) -> None:
        menu = browser.createStandardContextMenu(pos)
        menu.addSeparator()
        menu.addAction(
            "Copy the whole answer as Markdown", lambda: QApplication.clipboard().setText(self.text)
        )
        menu.exec(browser.mapToGlobal(pos))
        menu.deleteLater()

    def apply_theme(self) -> None:
        if getattr(self, "segments", None):
            self._rebuild()

    def plain_text(self) -> str:
        return "\n".join(s.browser.toPlainText() for s in self.segments)


class _Segment:
    """Part of an answer in a browser of its own: ``text[start:end]`` (``end`` None while
    it is the growing tail); its step lines take ``step_lines[first_step:]``."""

    __slots__ = ("start", "end", "browser", "first_step", "step_count")

    def __init__(self, start: int, browser: AutoHeightBrowser, first_step: int):
        self.start = start
        self.end: int | None = None
        self.browser = browser
        self.first_step, self.step_count = first_step, 0


def _last_cut(text: str) -> int:
    """Where the last block of ``text`` (still growing while it streams) begins."""
    return unit_starts(text)[-1]


def _segment_cuts(text: str) -> list[int]:
    """Where to cut a whole text into segments of about ``SEGMENT_CHARS`` or more; a table
    is a segment of its own (it scrolls sideways, the text around it wraps)."""
    starts = unit_starts(text)
    cuts, last = set(), 0
    for start in starts if len(text) >= 2 * SEGMENT_CHARS else ():
        if start - last >= SEGMENT_CHARS and len(text) - start >= SEGMENT_CHARS // 2:
            cuts.add(start)
            last = start
    for start, end in table_spans(text):
        cuts.add(start)
        after = next((s for s in starts if s >= end), None)
        if after is not None:
            cuts.add(after)
    cuts.discard(0)
    return sorted(cuts)
