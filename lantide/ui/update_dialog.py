"""Help > Check for updates: the release notes, the download with progress and cancel,
and the hand-off to the installer (:mod:`lantide.update`); every step runs in a worker.

Each failure (no feed, unreachable, malformed, bad signature, wrong hash, too large,
cancelled) is shown in the dialog as the engine's message and hint; none of them changes
anything on disk but Lantide's own download folder.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from lantide import __version__
from lantide.ui.icons import app_icon, icon
from lantide.ui.theme import colors
from lantide.ui.themed import mark_theme, theme_switched
from lantide.ui.workers import Worker, WorkerPool

if TYPE_CHECKING:
    from lantide.update.check import UpdateCheck
    from lantide.update.install import InstallOutcome

CHECKING, UP_TO_DATE, AVAILABLE, DOWNLOADING, INSTALLING, DONE, FAILED = (
    "checking",
    "up to date",
    "available",
    "downloading",
    "installing",
    "done",
    "failed",
)


# -- work done in the pool (no Qt) -------------------------------------------------------------


def check_feed(context, feed_url: str, keys: list | None, current: str, asset_key: str | None):
    from lantide.update.check import check_for_update
    from lantide.update.schedule import record_check

    try:
        return check_for_update(feed_url, keys=keys, current=current, asset_key=asset_key)
    finally:
        if feed_url:
            record_check()  # a check by hand counts for the weekly one


def download(context, job) -> Path:
    return job.run(lambda done, total: context.progress((done, total)))


def install(context, path: Path, version: str, kind: str | None, root: Path | None, launcher):
    from lantide.update.install import install_update

    return install_update(path, version, kind=kind, install_root=root, launcher=launcher)


def _size(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e6 else f"{max(1, round(n / 1e3)):,} KB"


class UpdateDialog(QDialog):
    """``feed_url``: where to look. The rest is for tests and development: ``keys``
    (trusted public keys; default: the shipped ones), ``kind`` and ``asset_key`` (default:
    this installation's), ``install_root`` (a tarball install's folder), ``launcher``
    (starts the platform's installer), ``download_dir`` (default: the user data folder)."""

    def __init__(
        self,
        workers: WorkerPool,
        feed_url: str,
        parent: QWidget | None = None,
        *,
        keys: list | None = None,
        current: str = __version__,
        kind: str | None = None,
        asset_key: str | None = None,
        install_root: Path | None = None,
        launcher=None,
        download_dir: Path | None = None,
        start: bool = True,
    ):
        super().__init__(parent)
        self.setObjectName("UpdateDialog")
        self.setWindowTitle("Check for updates — Lantide")
        self.setMinimumWidth(520)
        self.resize(640, 150)  # grows when there are release notes to show
        self.workers = workers
        self.feed_url = feed_url
        self._options = dict(
            keys=keys,
            current=current,
            kind=kind,
            asset_key=asset_key,
            install_root=install_root,
            launcher=launcher,
        )
        self.download_dir = download_dir
        self.state = ""
        self.check: UpdateCheck | None = None  # once known
        self.outcome: InstallOutcome | None = None  # once installed
        self.worker: Worker | None = None
        self._build()
        mark_theme(self)
        if start:
            self.start_check()

    def _build(self) -> None:
        logo = QLabel(self)
        logo.setPixmap(app_icon().pixmap(48, 48))
        self.headline = QLabel(self)
        self.headline.setObjectName("UpdateHeadline")
        self.headline.setWordWrap(True)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.headline.setFont(font)
        self.detail = QLabel(self)
        self.detail.setWordWrap(True)
        for label in (self.headline, self.detail):  # they show URLs and paths as typed
            label.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error = QLabel(self)
        self.error.setObjectName("UpdateError")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text = QVBoxLayout()
        text.setSpacing(6)
        text.addWidget(self.headline)
        text.addWidget(self.detail)
        text.addWidget(self.error)
        head = QHBoxLayout()
        head.setSpacing(14)
        head.addWidget(logo, 0, Qt.AlignmentFlag.AlignTop)
        head.addLayout(text, 1)
        self.notes_title = QLabel("<b>Release notes</b>", self)
        self.notes = QTextBrowser(self)
        self.notes.setObjectName("UpdateNotes")
        self.notes.setOpenExternalLinks(True)
        self.notes.document().setDocumentMargin(10)
        self.progress = QProgressBar(self)
        self.progress.setTextVisible(False)
        self.progress_label = QLabel(self)
        self.buttons = QDialogButtonBox(self)
        self.install_button = QPushButton(icon("run"), "Download and install", self)
        self.install_button.clicked.connect(self.start_download)
        self.retry_button = QPushButton(icon("refresh"), "Check again", self)
        self.retry_button.clicked.connect(self.start_check)
        self.quit_button = QPushButton("Quit Lantide", self)
        self.quit_button.clicked.connect(self._quit_app)
        self.restart_button = QPushButton(icon("refresh"), "Restart now", self)
        self.restart_button.clicked.connect(self.restart)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.clicked.connect(self.cancel_work)
        self.close_button = QPushButton("Close", self)
        self.close_button.clicked.connect(self.reject)
        for button, role in (
            (self.install_button, QDialogButtonBox.ButtonRole.AcceptRole),
            (self.retry_button, QDialogButtonBox.ButtonRole.ActionRole),
            (self.quit_button, QDialogButtonBox.ButtonRole.AcceptRole),
            (self.restart_button, QDialogButtonBox.ButtonRole.AcceptRole),
            (self.cancel_button, QDialogButtonBox.ButtonRole.RejectRole),
            (self.close_button, QDialogButtonBox.ButtonRole.RejectRole),
        ):
            self.buttons.addButton(button, role)
        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        layout.addLayout(head)
        layout.addWidget(self.notes_title)
        layout.addWidget(self.notes, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)
        layout.addStretch(0)  # takes the height while the notes are hidden
        layout.addWidget(self.buttons)

    # -- states ----------------------------------------------------------------------------
    def _show_state(self, state: str) -> None:
        self.state = state
        busy = state in (CHECKING, DOWNLOADING, INSTALLING)
        has_notes = self.check is not None and self.check.newer
        self.notes_title.setVisible(has_notes)
        self.notes.setVisible(has_notes)
        self.progress.setVisible(busy)
        self.progress_label.setVisible(state in (DOWNLOADING, INSTALLING))
        if state == CHECKING:
            self.progress.setRange(0, 0)  # busy, no length known
        self.install_button.setVisible(state == AVAILABLE)
        self.retry_button.setVisible(state == FAILED and self.check is None)
        self.quit_button.setVisible(
            state == DONE and bool(self.outcome and self.outcome.quit_to_finish)
        )
        self.restart_button.setVisible(
            state == DONE and bool(self.outcome and self.outcome.tar_root)
        )
        self.cancel_button.setVisible(busy)
        self.cancel_button.setEnabled(state != INSTALLING)  # an unpack runs to its end
        self.close_button.setVisible(not busy)
        if state != FAILED:
            self.error.hide()
        finish = next(
            (b for b in (self.quit_button, self.restart_button) if b.isVisibleTo(self)),
            self.close_button,
        )
        default = {AVAILABLE: self.install_button, DONE: finish}.get(state, self.close_button)
        for button in (
            self.install_button,
            self.quit_button,
            self.restart_button,
            self.close_button,
        ):
            button.setDefault(button is default)
        if has_notes and self.height() < 440:
            self._grow(480)

    def _grow(self, height: int) -> None:
        """Taller, about the same centre, inside the screen (the notes need the room)."""
        centre = self.frameGeometry().center()
        self.resize(max(self.width(), 640), height)
        if not self.isVisible() or self.screen() is None:
            return
        from lantide.ui.layout_state import inside

        frame = self.frameGeometry()
        frame.moveCenter(centre)
        self.move(inside(frame, self.screen().availableGeometry()))

    def _set_head(self, headline: str, detail: str = "") -> None:
        self.headline.setText(headline)
        self.detail.setText(detail)
        self.detail.setVisible(bool(detail))

    # -- check -------------------------------------------------------------------------------
    def start_check(self) -> None:
        self.check = None
        self._set_head("Checking for updates…", f"Reading {self.feed_url or 'the release feed'}")
        self._show_state(CHECKING)
        o = self._options
        self.worker = self.workers.submit(
            check_feed,
            self.feed_url,
            o["keys"],
            o["current"],
            o["asset_key"],
            on_result=self._checked,
            on_error=self._failed,
            name="check for updates",
        )

    def _checked(self, check) -> None:
        self.worker = None
        self.check = check
        feed = check.feed
        if not check.newer:
            self._set_head(check.message, f"Release feed: {self.feed_url}")
            self._show_state(UP_TO_DATE)
            return
        self.notes.setMarkdown(feed.notes or "_No release notes._")
        if check.asset is None:  # running from Python: the notes, no installer
            self._set_head(
                check.message,
                "This copy runs from Python (pip or a source checkout): update it with pip or git.",
            )
            self._show_state(UP_TO_DATE)
            return
        self._set_head(check.message, f"Released {feed.date} · download {_size(check.asset.size)}")
        self._show_state(AVAILABLE)

    # -- download and install ------------------------------------------------------------
    def start_download(self) -> None:
        from lantide.update.check import downloads_dir
        from lantide.update.fetch import AssetDownload

        if self.check is None or self.check.asset is None:
            return
        asset = self.check.asset
        job = AssetDownload(asset, self.download_dir or downloads_dir())
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress_label.setText(f"Downloading {asset.file_name}…")
        self._set_head(
            f"Downloading Lantide {self.check.feed.version}…",
            f"{asset.file_name}, {_size(asset.size)}",
        )
        self._show_state(DOWNLOADING)
        self.worker = self.workers.submit(
            download,
            job,
            on_result=self._downloaded,
            on_error=self._failed,
            on_progress=self._progress,
            on_cancel=job.cancel,
            name="download update",
        )

    def _progress(self, value: Any) -> None:
        done, total = value
        self.progress.setValue(int(1000 * done / total) if total else 0)
        self.progress_label.setText(f"{_size(done)} of {_size(total)}")

    def _downloaded(self, path: Path) -> None:
        assert self.check is not None  # a download starts from a check
        o = self._options
        self.progress.setRange(0, 0)
        self.progress_label.setText("The download matches the signed release feed (SHA-256).")
        self._set_head(f"Installing Lantide {self.check.feed.version}…")
        self._show_state(INSTALLING)
        self.worker = self.workers.submit(
            install,
            path,
            self.check.feed.version,
            o["kind"],
            o["install_root"],
            o["launcher"],
            on_result=self._installed,
            on_error=self._failed,
            name="install update",
        )

    def _installed(self, outcome: InstallOutcome) -> None:
        assert self.check is not None  # an install starts from a check
        self.worker = None
        self.outcome = outcome
        self._set_head(f"Lantide {self.check.feed.version} is ready", outcome.message)
        self._show_state(DONE)

    # -- errors and cancel -----------------------------------------------------------------
    def _failed(self, exc: BaseException) -> None:
        self.worker = None
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        hint = getattr(exc, "hint", None)
        cancelled = getattr(exc, "code", "") == "UPDATE_CANCELLED"
        if self.check is None:
            self._set_head("Lantide could not check for updates")
        elif cancelled:
            self._set_head(
                "Download cancelled",
                f"Lantide {self.check.feed.version} was not installed; you can download it again.",
            )
        else:
            self._set_head(f"Lantide {self.check.feed.version} was not installed")
        self.error.setText(
            f"<span style='color:{colors().danger.name()}'>"
            f"{html.escape(message)}</span>" + (f"<br><br>{html.escape(hint)}" if hint else "")
        )
        self.error.setVisible(not cancelled)
        self._show_state(FAILED)
        if cancelled or (self.check is not None and self.check.asset is not None):
            self.install_button.setText("Download again" if cancelled else "Try again")
            self.install_button.show()

    def cancel_work(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
        if self.state == CHECKING:  # the check has a short timeout; stop waiting for it
            self.reject()

    def _quit_app(self) -> bool:
        """Close the main window (it asks about unsaved tabs); False if it stayed open."""
        from PySide6.QtWidgets import QApplication

        parent = self.parentWidget()
        window = parent.window() if parent is not None else None
        if window is not None and not window.close():
            return False
        self.accept()
        if window is None:
            QApplication.quit()
        return True

    def restart(self) -> None:
        """A tarball install: switch to the unpacked version and start it, then quit."""
        from lantide.update.install import restart_into

        # Restart shows once a tarball install is done
        tar_root = self.outcome.tar_root if self.outcome is not None else None
        assert tar_root is not None
        if not self._quit_app():
            return
        try:
            restart_into(tar_root, self._options["launcher"])
        except Exception as exc:  # the app is closing: say it on stderr
            import sys

            sys.stderr.write(f"lantide: {getattr(exc, 'message', exc)}\n")

    def reject(self) -> None:
        if self.worker is not None and self.state == DOWNLOADING:
            self.worker.cancel()  # closing the dialog stops its download
        super().reject()

    # -- theme -------------------------------------------------------------------------------
    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if theme_switched(self, event) and self.error.isVisibleTo(self):
            text = self.error.text()  # the message's colour is the theme's danger colour
            self.error.setText(
                re.sub(r"color:#[0-9a-f]{6}", f"color:{colors().danger.name()}", text, count=1)
            )
