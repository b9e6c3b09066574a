"""The HTML Report tab: ``projects/P/report.html`` as a preview and as its source.

- **Preview**: the page in a ``QTextBrowser`` (Qt's rich text: no scripts run, nothing is
  fetched; in-page links such as a citation's ``[n]`` scroll to their target). Charts are
  interactive in the system browser: **Open in browser**.
- **Source**: the HTML text, editable; Ctrl+S saves it atomically. A save whose markup is
  invalid is kept as written (the analyst's text is theirs) and a warning names the line:
  publishing and the agent's chunk patches refuse such a file until it is fixed.
- **Publish HTML** regenerates the page from the Markdown Report (edited chunks are kept,
  or named; see :mod:`lantide.agent.report_html`).

Reads and writes run in workers; a change on disk reloads a clean tab, and a tab with
unsaved edits keeps them and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.documents.document_preview import preview_css
from lantide.ui.documents.document_session import decide_edit_file
from lantide.ui.documents.edit_review_bar import PendingEditReview
from lantide.ui.documents.html_preview import HtmlPreview
from lantide.ui.themed import mark_theme, theme_switched

if TYPE_CHECKING:
    from lantide.agent.report_html import Published
    from lantide.ui.services import AppServices


class HtmlPage(TypedDict):
    """The HTML Report as read: its text, and its chunks or the markup problem."""

    text: str
    chunks: NotRequired[int]
    edited: NotRequired[int]  # chunks edited since published
    problem: NotRequired[str]  # the markup is invalid (then no chunk counts)


def read_page(context, path: str) -> HtmlPage:
    """The file's text and its chunks (or the markup problem, which the tab shows)."""
    from lantide.docs.html_markup import HtmlMarkupError, parse_report_html

    text = Path(path).read_text(encoding="utf-8")
    try:
        chunks = parse_report_html(text, path)
        return {"text": text, "chunks": len(chunks), "edited": sum(c.edited for c in chunks)}
    except HtmlMarkupError as exc:
        return {"text": text, "problem": exc.message}


def save_page(context, path: str, text: str) -> HtmlPage:
    from lantide.workspace.atomic import atomic_write_text

    atomic_write_text(path, text)
    return read_page(context, path)


def publish(context, root: str, project: str, overwrite: bool, query=None) -> Published:
    """``query``: the app's query service (DuckDB is opened once per process), for charts."""
    from lantide.agent.report_html import publish_html
    from lantide.workspace.model import Workspace

    ws = Workspace.open(Path(root), lock=False)
    try:
        return publish_html(
            ws,
            ws.project(project),
            overwrite=overwrite,
            query=(lambda: query) if query is not None else None,
        ).to_dict()
    finally:
        ws.close()


def charts_not_drawn(result: dict[str, Any]) -> str:
    """The publish message's note on charts whose places show an error instead."""
    failed = result.get("chart_errors") or []
    if not failed:
        return ""
    names = ", ".join(str(f.get("src", "?")) for f in failed[:3])
    return f"; {len(failed)} chart(s) not drawn ({names}): their places in the page say why"


def submit_publish(
    services: AppServices,
    project: str,
    overwrite: bool,
    *,
    owner: QWidget,
    on_published: Callable[[dict[str, Any]], None],
    on_refused: Callable[[str, bool], None],
) -> None:
    """Publish ``project``'s HTML Report in a worker (the Evidence bar and the HTML tab
    both offer it). ``on_refused(message, edits_would_be_lost)``: the second is True when
    publishing again with ``overwrite`` would go through."""

    def failed(exc: BaseException) -> None:
        lost = getattr(exc, "code", "") == "HTML_EDITS_WOULD_BE_LOST"
        on_refused(str(getattr(exc, "message", exc)), lost)

    services.workers.submit(
        publish,
        str(services.workspace.root),
        project,
        overwrite,
        services.query,
        on_result=on_published,
        on_error=failed,
        owner=owner,
        name="Publishing the HTML Report",
    )


class HtmlReportTabWidget(QWidget):
    sig_title_changed = Signal(str)
    sig_dirty_changed = Signal(bool)

    def __init__(self, services, project: str, name: str, parent: QWidget | None = None):
        super().__init__(parent)
        from lantide.workspace import layout

        self.setObjectName("HtmlReportTab")
        self.services = services
        self.project = project
        self.name = name
        self.path = layout.project_dir(services.workspace.root, project) / name
        self._loaded_text: str | None = None
        self._dirty = False
        self._overwrite_next = False  # set when publishing was refused to keep edits
        mark_theme(self)

        self.status = QLabel(self)
        self.status.setObjectName("HtmlReportStatus")
        self.status.setWordWrap(True)
        self.publish_button = QPushButton("Publish HTML", self)
        self.publish_button.setObjectName("PublishHtmlButton")
        self.publish_button.setToolTip(
            "Regenerate report.html from the Markdown Report (edited sections are kept "
            "while their Markdown is unchanged)"
        )
        self.publish_button.clicked.connect(lambda: self.publish())
        self.browser_button = QPushButton("Open in browser", self)
        self.browser_button.setObjectName("OpenHtmlInBrowserButton")
        self.browser_button.setToolTip("Open the page in the system browser (interactive charts)")
        self.browser_button.clicked.connect(self.open_in_browser)

        self.preview = HtmlPreview(services.workers, self)  # charts drawn as images
        self.preview.setObjectName("HtmlReportPreview")
        self.preview.setOpenLinks(False)
        self.preview.setOpenExternalLinks(False)
        self.preview.anchorClicked.connect(self._link_clicked)
        self.preview.document().setDocumentMargin(16)
        self.source = QPlainTextEdit(self)
        self.source.setObjectName("HtmlReportSource")
        self.source.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.source.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.source.textChanged.connect(self._text_changed)
        self.views = QTabWidget(self)
        self.views.setObjectName("HtmlReportViews")
        self.views.setDocumentMode(True)
        self.views.addTab(self.preview, "Preview")
        self.views.addTab(self.source, "Source")
        self.views.currentChanged.connect(self._view_changed)

        bar = QHBoxLayout()
        bar.setContentsMargins(8, 3, 8, 3)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.publish_button)
        bar.addWidget(self.browser_button)
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(0, 0, 0, 0)
        layout_.setSpacing(0)
        layout_.addLayout(bar)
        self.edit_review = PendingEditReview(self, self)  # the agent's chunk patches
        layout_.addWidget(self.edit_review.bar)
        layout_.addWidget(self.views, 1)
        services.sig_files_changed.connect(self._files_changed)
        self._refresh_css()
        self.reload()
        self.edit_review.refresh()

    # -- the tab area's interface ---------------------------------------------------------
    def title(self) -> str:
        review = getattr(self, "edit_review", None)
        return f"{self.name} (pending)" if review and review.has_pending else self.name

    # the review of the agent's pending edits (edit_review_bar.ReviewHost)
    def review_kind(self) -> str:
        return "html"

    def review_path(self) -> Path:
        return self.path

    def run_review_job(
        self, fn: Callable, args: tuple, done: Callable, what: str, on_error: Callable
    ) -> None:
        self.services.workers.submit(fn, *args, on_result=done, on_error=on_error, name=what)

    def review_decision(
        self, edit_id: str, action: str, hunks: list[int] | None
    ) -> tuple[Callable, tuple] | None:
        root = self.services.workspace.root
        return decide_edit_file, (root, self.project, "html", edit_id, action, hunks)

    def after_review(self, state) -> None:
        if not self._dirty:
            self.reload()

    def report(self, exc: BaseException, what: str) -> None:
        self.services.report_error(exc, f"{what} ({self.name})")

    def is_dirty(self) -> bool:
        return self._dirty

    def unsaved_text(self) -> str | None:
        return self.source.toPlainText() if self._dirty else None

    def save(self) -> bool:
        if not self._dirty:
            return True
        text = self.source.toPlainText()
        self.services.workers.submit(
            save_page,
            str(self.path),
            text,
            on_result=lambda page: self._saved(text, page),
            on_error=lambda exc: self.services.report_error(exc, f"Saving {self.name}"),
            name=f"Saving {self.name}",
        )
        return True

    # -- loading ----------------------------------------------------------------------------
    def reload(self) -> None:
        self.services.workers.submit(
            read_page,
            str(self.path),
            on_result=self._show,
            on_error=lambda exc: self._show_status(
                f"{self.name} cannot be read: {getattr(exc, 'message', exc)}. Publish HTML "
                "writes it from the Markdown Report.",
                warning=True,
            ),
            name=f"Reading {self.name}",
        )

    def _show(self, page: HtmlPage) -> None:
        text = page["text"]
        self._loaded_text = text
        self.source.blockSignals(True)
        self.source.setPlainText(text)
        self.source.blockSignals(False)
        self._set_dirty(False)
        self._preview(text)
        self._show_page_status(page)

    def _saved(self, text: str, page: HtmlPage) -> None:
        self._loaded_text = text
        self._set_dirty(self.source.toPlainText() != text)
        self._preview(text)
        self._show_page_status(page)
        if "problem" in page:
            self.services.post_message(
                f"Saved, but the HTML is invalid: {page['problem']}", "warning"
            )

    def _show_page_status(self, page: HtmlPage) -> None:
        if "problem" in page:
            self._show_status(page["problem"], warning=True)
            return
        edited = f", {page['edited']} edited since published" if page["edited"] else ""
        self._show_status(f"{self.project}/{self.name}: {page['chunks']} chunks{edited}")

    def _show_status(self, text: str, warning: bool = False) -> None:
        from lantide.ui.theme import colors

        self.status.setText(text)
        color = colors().warning if warning else colors().muted
        self.status.setStyleSheet(f"color: {color.name()};")

    # -- editing ----------------------------------------------------------------------------
    def _text_changed(self) -> None:
        self._set_dirty(self.source.toPlainText() != self._loaded_text)

    def _set_dirty(self, dirty: bool) -> None:
        if dirty != self._dirty:
            self._dirty = dirty
            self.sig_dirty_changed.emit(dirty)
            self.sig_title_changed.emit(self.title())

    def _view_changed(self, index: int) -> None:
        if self.views.widget(index) is self.preview and self._dirty:
            self._preview(self.source.toPlainText())  # what the analyst is writing

    # -- actions ----------------------------------------------------------------------------
    def publish(self) -> None:
        if self._dirty:
            self.services.post_message(
                f"Save or undo your edits of {self.name} first: publishing rewrites it.",
                "warning",
            )
            return
        overwrite, self._overwrite_next = self._overwrite_next, False
        self.publish_button.setEnabled(False)

        def done(result: dict[str, Any]) -> None:
            self.publish_button.setEnabled(True)
            self.publish_button.setText("Publish HTML")
            kept = result.get("kept_edits") or []
            note = f" (kept edited: {', '.join(kept)})" if kept else ""
            note += charts_not_drawn(result)
            self.services.post_message(f"Published {self.name}{note}")
            self.reload()

        def refused(message: str, edits_would_be_lost: bool) -> None:
            self.publish_button.setEnabled(True)
            if edits_would_be_lost:  # the next click overwrites them
                self._overwrite_next = True
                self.publish_button.setText("Publish, overwriting edits")
            self._show_status(message, warning=True)

        submit_publish(
            self.services,
            self.project,
            overwrite,
            owner=self,
            on_published=done,
            on_refused=refused,
        )

    def _preview(self, text: str) -> None:
        self.preview.show_page(text)  # no scripts (Qt runs none); charts as images

    def open_in_browser(self) -> bool:
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path)))

    def _link_clicked(self, url: QUrl) -> None:
        if url.hasFragment() and not url.host() and not url.path():
            self.preview.scrollToAnchor(url.fragment())

    def _files_changed(self, changes: list) -> None:
        here = self.path.resolve()
        mine = [c for c in changes if Path(getattr(c, "path", "")).resolve() == here]
        if not mine:
            return
        if self._dirty:
            self._show_status(
                f"{self.name} changed on disk; your unsaved edits are kept here (saving "
                "writes them over the change).",
                warning=True,
            )
            return
        self.reload()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if theme_switched(self, event):
            self._refresh_css()

    def _refresh_css(self) -> None:
        # the default sheet applies to HTML set after it: show the page again
        self.preview.document().setDefaultStyleSheet(preview_css(self.preview.palette()))
        text = self.source.toPlainText() if self._dirty else self._loaded_text
        if text is not None:
            self._preview(text)
