"""The status bar: messages, the database state, the running query with a cancel button,
the tokens used in this conversation, and the model profile in use.

Everything it shows comes from :class:`~lantide.ui.services.AppServices` signals; the only
command it sends is cancelling the running query (the worker's cancel, which interrupts
DuckDB). Clicking the model profile opens the settings.

Nothing here may widen the window: the message and the running query are elided to the
room they get (the whole text in the tooltip), the model profile to a fixed width.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QStatusBar, QToolButton, QWidget

from lantide.ui.elided_label import ElidedLabel
from lantide.ui.icons import icon
from lantide.ui.services import AppServices, RunningQuery
from lantide.ui.theme import STATUS_BAR_STYLE, colors

QUERY_MAX_WIDTH = 360  # px: the running query's label
PROFILE_MAX_WIDTH = 260  # px: the model profile's button text


def format_tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M tokens"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k tokens"
    return f"{n} tokens"


def budget_text(used: int, budget: int) -> tuple[str, str | None]:
    """The status bar's token text and its level (None, "warning" from 80%, "error" at
    the budget) for ``used`` tokens of a ``budget`` (0: none)."""
    if budget <= 0:
        return (format_tokens(used) if used else ""), None
    text = f"{format_tokens(used).removesuffix(' tokens')} / {format_tokens(budget)}"
    share = used / budget
    return text, ("error" if share >= 1 else "warning" if share >= 0.8 else None)


def format_elapsed(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d} min"


class StatusBarWidget(QStatusBar):
    sig_settings_requested = Signal()

    def __init__(self, services: AppServices, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.setObjectName("StatusBar")
        self.setSizeGripEnabled(False)
        self.setStyleSheet(STATUS_BAR_STYLE)

        self.message_label = ElidedLabel("", self)
        self.message_label.setObjectName("StatusMessage")
        self._message_timer = QTimer(self, singleShot=True)
        self._message_timer.timeout.connect(lambda: self.message_label.setText(""))
        self.addWidget(self.message_label, 1)

        self.database_label = QLabel("Opening the database…", self)
        self.database_label.setObjectName("DatabaseState")

        self.query_box = QWidget(self)
        box = QHBoxLayout(self.query_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(4)
        self.query_label = ElidedLabel("", self.query_box)
        self.query_label.setMaximumWidth(QUERY_MAX_WIDTH)
        self.cancel_button = QToolButton(self.query_box)
        self.cancel_button.setIcon(icon("stop"))
        self.cancel_button.setToolTip("Cancel the running query")
        self.cancel_button.setAutoRaise(True)
        self.cancel_button.clicked.connect(self.cancel_running_query)
        box.addWidget(self.query_label)
        box.addWidget(self.cancel_button)
        self.query_box.hide()

        self.tokens_label = QLabel(self)
        self.tokens_label.setObjectName("ConversationTokens")
        self.model_button = QToolButton(self)
        self.model_button.setAutoRaise(True)
        self.model_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.model_button.setIcon(icon("model"))
        self.model_button.clicked.connect(self.sig_settings_requested.emit)

        self.addPermanentWidget(self.database_label)
        self.addPermanentWidget(self.query_box)
        self.addPermanentWidget(self.tokens_label)
        self.addPermanentWidget(self.model_button)

        self._tick = QTimer(self, interval=250)
        self._tick.timeout.connect(self._update_query)
        services.sig_query_ready.connect(self._database_ready)
        services.sig_query_failed.connect(self._database_failed)
        services.sig_query_started.connect(lambda _r: self._update_query())
        services.sig_query_finished.connect(lambda _r: self._update_query())
        services.sig_tokens_changed.connect(self._tokens_changed)
        services.sig_settings_changed.connect(lambda _s: self.update_profile())
        services.sig_settings_changed.connect(lambda _s: self._tokens_changed(services.tokens_used))
        services.sig_message_posted.connect(self.post)
        if services.query is not None:
            self._database_ready(services.query)
        elif services.query_error is not None:
            self._database_failed(services.query_error)
        self._tokens_changed(services.tokens_used)
        self.update_profile()

    # -- database ------------------------------------------------------------------------
    def _database_ready(self, _service) -> None:
        self.database_label.hide()

    def _database_failed(self, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or str(exc)
        self.database_label.setText("Database unavailable")
        self.database_label.setToolTip(f"{message}\n{getattr(exc, 'hint', '') or ''}".strip())
        self.database_label.setStyleSheet(f"color: {colors().danger.name()};")
        self.database_label.show()

    # -- running query -------------------------------------------------------------------
    def current_query(self) -> RunningQuery | None:
        running = self.services.running_queries()
        return running[-1] if running else None

    def _update_query(self) -> None:
        running = self.services.running_queries()
        if not running:
            self._tick.stop()
            self.query_box.hide()
            return
        newest = running[-1]
        more = f" (+{len(running) - 1})" if len(running) > 1 else ""
        elapsed = format_elapsed(time.monotonic() - newest.started)
        text = f"Running {newest.label}{more} · {elapsed}"
        self.query_label.setText(text)
        width = self.query_label.fontMetrics().horizontalAdvance(text) + 8
        self.query_label.setFixedWidth(min(width, QUERY_MAX_WIDTH))
        self.cancel_button.setEnabled(not newest.worker.context.cancelled)
        self.query_box.show()
        if not self._tick.isActive():
            self._tick.start()

    def cancel_running_query(self) -> None:
        running = self.current_query()
        if running is not None:
            running.worker.cancel()
            self.post(f"Cancelling {running.label}…")
            self._update_query()

    # -- tokens and model ----------------------------------------------------------------
    def _tokens_changed(self, tokens: int) -> None:
        budget = int(getattr(self.services.settings.agent, "token_budget", 0) or 0)
        text, level = budget_text(tokens, budget)
        self.tokens_label.setText(text)
        color = {"error": colors().danger, "warning": colors().warning}.get(level or "")
        self.tokens_label.setStyleSheet(f"color: {color.name()};" if color else "")
        tip = "Tokens used in this conversation (every request, background calls included)"
        if budget:
            tip += (
                f"; budget {budget:,} (Settings > Agent): a warning at 80%, the agent stops at 100%"
            )
        self.tokens_label.setToolTip(tip)
        self.tokens_label.setVisible(bool(text))

    def update_profile(self) -> None:
        from lantide.workspace.settings import resolve_profile

        try:
            profile = resolve_profile(self.services.settings, "primary")
        except Exception:  # a broken keyring must not break the status bar
            profile = None
        if profile is None:
            self.model_button.setText("No model configured")
            self.model_button.setToolTip("Add a model profile in Settings to chat with the agent")
            return
        env = " (environment)" if profile.overridden else ""
        self.model_button.setText(
            self.model_button.fontMetrics().elidedText(
                f"{profile.name}: {profile.model}", Qt.TextElideMode.ElideMiddle, PROFILE_MAX_WIDTH
            )
        )
        window = f", context {profile.context_window:,} tokens" if profile.context_window else ""
        self.model_button.setToolTip(
            f"Primary model profile{env}: {profile.model} at "
            f"{profile.base_url}{window}. Click to change."
        )

    # -- messages ------------------------------------------------------------------------
    def post(self, text: str, level: str = "info") -> None:
        """Show ``text`` for a while; errors stay longer and are coloured."""
        color = {"error": colors().danger, "warning": colors().warning}.get(level)
        self.message_label.setStyleSheet(f"color: {color.name()};" if color else "")
        first_line = text.splitlines()[0] if text else ""
        self.message_label.setText(first_line)
        self.message_label.setToolTip(text)
        self._message_timer.start(15000 if level == "error" else 6000)

    def message(self) -> str:
        return self.message_label.text()
