"""What every window, panel and tab of the desktop app shares: :class:`AppServices`.

One instance per open workspace. It holds the workspace, the user settings, the worker
pool and the query service (opened off the UI thread after the window shows; listen to
``sig_query_ready``), forwards file-watcher batches to the UI thread
(``sig_files_changed``), owns the focused project while the app runs (the agent reads
and changes it through ``lantide.ui.chat.chat_bridge.UiAppState``; ``session.json`` is
written once per change, for the next start and for commands run beside the app, and not
read back), keeps the live open-tab state the agent reads, and tracks running queries for
the status bar. Widgets talk to each other through it
instead of through the main window, so a panel can be built and tested on its own.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from PySide6.QtCore import QObject, QTimer, Signal

from lantide.ui.workers import Worker, WorkerPool
from lantide.workspace.model import Project, Workspace
from lantide.workspace.settings import Settings, save_edited_settings
from lantide.workspace.watcher import FileChange, classify

if TYPE_CHECKING:  # deferred at run time: duckdb and watchdog are heavy
    from lantide.query.service import QueryService
    from lantide.workspace.watcher import WorkspaceWatcher

log = logging.getLogger(__name__)

# Kinds of tab in the open-tab state
# (session.json "open_tabs" entries: {"kind", "project", "name"}).
TAB_PLAN = "plan"
TAB_REPORT = "report"
TAB_SQL = "sql"
TAB_TABLE = "table"
TAB_KINDS = (TAB_PLAN, TAB_REPORT, TAB_SQL, TAB_TABLE)


class TabRefDict(TypedDict):
    """:meth:`TabRef.to_dict`: an open tab in session.json."""

    kind: str
    project: str | None
    name: str
    dirty: bool


class SessionState(TypedDict):
    """What the app writes into session.json (other keys there are kept)."""

    focused_project: str | None
    open_tabs: list[TabRefDict]
    active_tab: TabRefDict | None


@dataclass(frozen=True)
class TabRef:
    """An open tab as the agent and session.json see it."""

    kind: str  # plan / report / sql / table
    project: str | None = None  # project folder name (None for a table tab)
    name: str = ""  # SQL tab name or table name; the document file name for plan/report
    dirty: bool = False

    def key(self) -> tuple[str, str | None, str]:
        return (self.kind, self.project, self.name)

    def to_dict(self) -> TabRefDict:
        return {"kind": self.kind, "project": self.project, "name": self.name, "dirty": self.dirty}

    @classmethod
    def from_dict(cls, data: object) -> TabRef | None:
        """A tab of session.json, which a hand edit may have changed (None: not a tab)."""
        if not isinstance(data, dict) or data.get("kind") not in TAB_KINDS:
            return None
        return cls(
            kind=data["kind"],
            project=data.get("project"),
            name=str(data.get("name") or ""),
            dirty=bool(data.get("dirty", False)),
        )


@dataclass
class RunningQuery:
    """A query the status bar shows with a cancel button."""

    worker: Worker
    label: str
    started: float = field(default_factory=time.monotonic)


PARTS_DELAY_MS = 300


class AppServices(QObject):
    # The QueryService is open (object: the service) or failed to open (object: the error).
    sig_query_ready = Signal(object)
    sig_query_failed = Signal(object)
    # A batch of lantide.workspace.watcher.FileChange, delivered on the UI thread.
    sig_files_changed = Signal(list)
    # The focused project's folder name, or None.
    sig_project_focused = Signal(object)
    # The user settings were saved (object: the Settings).
    sig_settings_changed = Signal(object)
    # The open-tab state changed (list of TabRef, active TabRef or None).
    sig_tabs_changed = Signal(list, object)
    # A query started or finished (the RunningQuery); the status bar shows the newest one.
    sig_query_started = Signal(object)
    sig_query_finished = Signal(object)
    # Tokens used in the current conversation (int), reported by the chat panel.
    sig_tokens_changed = Signal(int)
    # A request to open a tab: {"kind": ..., "project": ..., "name": ...}.
    sig_open_requested = Signal(dict)
    # A message for the status bar / message bar: (text, level) with level info/warning/error.
    sig_message_posted = Signal(str, str)
    # Something asks the agent (e.g. Resolve (N) on a Plan); the chat panel sends it.
    sig_agent_asked = Signal(str)
    # Cached tables were created, replaced or dropped (the explorer re-reads the list).
    sig_tables_changed = Signal()
    # A connection was added, changed or removed.
    sig_connections_changed = Signal()
    # This process added files the explorer lists (the agent's tab or chart): re-read them.
    sig_listing_changed = Signal()
    # a SQL tab's file was renamed by this app (project folder, old name, new name): an open
    # tab of it follows (lantide.ui.sql.tab_rename)
    sig_sql_tab_renamed = Signal(str, str, str)
    # The chat's conversation changed (its id, or None before a new one's first message).
    sig_conversation_changed = Signal(object)
    # A conversation got its title (from the secondary model or a rename): (id, title).
    sig_conversation_titled = Signal(str, str)
    # A ledger step was appended or updated during a chat turn (the step dict).
    sig_step_recorded = Signal(dict)
    # Show a ledger step (a step link in the chat): (conversation id, step id).
    sig_step_selected = Signal(str, str)
    # A query ran from a SQL tab or a table browser: a query-history entry (dict).
    sig_query_ran = Signal(dict)
    # The agent proposed an edit of a Plan or Report (its absolute path, the edit's id):
    # it waits for the analyst's review in the document's tab (lantide.docs.pending_edits).
    sig_edit_proposed = Signal(str, str)
    # The analyst decided hunks of an edit (its id, what it is now: "accepted", "rejected",
    # "partly accepted" or "pending"); the chat's tool card of the edit says so.
    sig_edit_decided = Signal(str, str)

    def __init__(
        self,
        workspace: Workspace,
        settings: Settings,
        *,
        workers: WorkerPool | None = None,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.workspace = workspace
        self.settings = settings
        self.workers = workers or WorkerPool()
        self.query: QueryService | None = None  # open once sig_query_ready has fired
        self.query_error: BaseException | None = None
        self._watcher: WorkspaceWatcher | None = None
        self._watcher_lock = threading.Lock()
        self.watching = False  # the workspace's files are watched (set from a worker)
        self._open_tabs: list[TabRef] = []
        self._active_tab: TabRef | None = None
        self._unsaved_text_source: Callable[[], str | None] | None = None
        self._running_queries: list[RunningQuery] = []
        self._tokens_used = 0
        self.conversation_id: str | None = None  # the chat panel's current conversation
        self._closed = False
        self._started = False
        self._session_at_start = self._read_session()
        self._session_seq = self._session_written = 0
        self._session_lock = threading.Lock()
        self._session_timer = QTimer(self, singleShot=True, interval=200)
        self._session_timer.timeout.connect(self.flush_session)
        self._focused = self._initial_focus()
        self.sig_files_changed.connect(self._refresh_sources)

    # -- start-up ----------------------------------------------------------------------
    def start(self, *, query: bool = True, watcher: bool = True) -> None:
        """Open the query service in a worker and start watching the workspace (once)."""
        if self._started or self._closed:
            return
        self._started = True
        if watcher:
            self.start_watcher()
        if query:
            self.open_query_service()

    def open_query_service(self) -> Worker:
        """Open DuckDB and register the data files off the UI thread."""
        return self.workers.submit(
            _open_query_service,
            self.workspace,
            self.settings,
            on_result=self._query_opened,
            on_error=self._query_failed,
            name="open query service",
            urgent=True,
        )

    def _query_opened(self, service: QueryService) -> None:
        if self._closed:
            _close_quietly(service)
            return
        self.query = service
        self.query_error = None
        for warning in getattr(service, "connection_warnings", None) or []:
            self.post_message(warning, "warning")  # a secret left in workspace.json
        self.sig_query_ready.emit(service)

        # the query layer's parts (guard, checks, lineage, Source Run) load a moment after
        # the app is usable, so the first query does not wait for their imports
        def load_parts() -> None:
            if self.query is service:
                self.workers.submit(
                    lambda _ctx: service.load_parts(),
                    name="load the query layer",
                    on_error=lambda exc: log.warning("loading the query layer: %s", exc),
                )

        QTimer.singleShot(PARTS_DELAY_MS, self, load_parts)

    def _query_failed(self, exc: BaseException) -> None:
        self.query_error = exc
        log.error("the query service did not open: %s", exc)
        self.sig_query_failed.emit(exc)

    def when_query_ready(self, callback: Callable[[Any], None]) -> None:
        """Call ``callback(query_service)`` now if it is open, else once it opens."""
        if self.query is not None:
            callback(self.query)
            return

        def once(service, cb=callback):
            self.sig_query_ready.disconnect(once)
            cb(service)

        self.sig_query_ready.connect(once)

    # -- file watching -----------------------------------------------------------------
    def start_watcher(self) -> None:
        """Start watching the workspace in a worker: setting up the watches walks every
        folder (slow on a large workspace, and it imports watchdog), never on the UI
        thread. ``watching`` is True once changes are being noticed."""
        from lantide.workspace import paths
        from lantide.workspace.watcher import WorkspaceWatcher

        if self._watcher is not None:
            return
        # The callback runs on the watcher's thread; emitting a signal of this QObject
        # from there queues the batch to the UI thread.
        watcher = WorkspaceWatcher(
            self.workspace.root, self._on_watcher_batch, extra_paths=[paths.user_knowledge_path()]
        )
        self._watcher = watcher

        def start(_ctx) -> None:
            with self._watcher_lock:  # close() stops it after this, or it never starts
                if self._watcher is watcher:
                    watcher.start()
                    self.watching = True

        def failed(exc: BaseException) -> None:  # e.g. inotify limits: no live reload
            log.warning("file watching is off: %s", exc)
            if self._watcher is watcher:
                self._watcher = None
            if not self._closed:
                self.post_message(
                    f"Changes made by other programs will not be noticed ({exc}).", "warning"
                )

        self.workers.submit(start, on_error=failed, name="watch the workspace files")

    def _on_watcher_batch(self, changes: list[FileChange]) -> None:
        if not self._closed:
            self.sig_files_changed.emit(list(changes))

    def _refresh_sources(self, changes: list[FileChange]) -> None:
        """Data files changed: the query layer re-registers them, then the lists refresh."""
        if self.query is None or not any(c.kind == "data" for c in changes):
            return
        service = self.query
        self.workers.submit(
            lambda _ctx: service.refresh_sources(changes),
            on_result=lambda _r: self.notify_tables_changed(),
            on_error=lambda e: self.report_error(e, "Reading the data files"),
            name="refresh data sources",
        )

    def notify_paths_changed(self, paths_: list[Path | str], event: str = "modified") -> None:
        """Report files this process changed outside an editor (e.g. the agent's edits).

        The watcher skips Lantide's own writes, so whoever writes a file an open tab shows
        (the agent updating the Plan) calls this and the tab refreshes.
        """
        changes = []
        for raw in paths_:
            path = Path(raw)
            kind = classify(self.workspace.root, path)
            if kind is not None:
                changes.append(FileChange(kind[0], path, event, kind[1]))
        if changes:
            self.sig_files_changed.emit(changes)

    # -- projects ------------------------------------------------------------------------
    def _read_session(self) -> dict[str, object]:
        try:
            return self.workspace.load_session()
        except Exception as exc:  # session state is a convenience; never fatal
            log.warning("could not read session state: %s", exc)
            return {}

    def _initial_focus(self) -> str | None:
        name = self._session_at_start.get("focused_project")
        if not name or not isinstance(name, str):  # a hand edit can put anything there
            return None
        try:
            return self.workspace.project(name).dirname
        except Exception:  # a broken or missing project must not stop the app from opening
            return None

    def focused_project_name(self) -> str | None:
        return self._focused

    def focused_project(self) -> Project | None:
        if not self._focused:
            return None
        try:
            return self.workspace.project(self._focused)
        except Exception:
            return None

    def focus_project(self, name: str | None) -> None:
        """Focus a project (by folder or display name): the one place the app's focus
        changes (the analyst's and the agent's changes alike), remembered in session.json
        by one write soon after. UI thread."""
        project = self.workspace.project(name) if name else None
        dirname = project.dirname if project else None
        if dirname == self._focused:
            return
        self._focused = dirname
        self._write_session()
        self.sig_project_focused.emit(dirname)

    # -- open tabs (for the agent and the next start) --------------------------------------
    def open_tabs(self) -> list[TabRef]:
        return list(self._open_tabs)

    def active_tab(self) -> TabRef | None:
        return self._active_tab

    def set_open_tabs(self, tabs: list[TabRef], active: TabRef | None) -> None:
        """The main window reports its tabs whenever they open, close, switch or get dirty."""
        tabs = list(tabs)
        if tabs == self._open_tabs and active == self._active_tab:
            return
        self._open_tabs = tabs
        self._active_tab = active
        self._write_session()
        self.sig_tabs_changed.emit(list(tabs), active)

    def set_unsaved_text_source(self, source: Callable[[], str | None] | None) -> None:
        """How to read the active tab's unsaved text (the tab area registers itself)."""
        self._unsaved_text_source = source

    def active_unsaved_text(self) -> str | None:
        """The active tab's editor text when it has unsaved edits (Plan, Report, SQL), else
        None. UI thread only: it reads the editor widget."""
        source = self._unsaved_text_source
        try:
            return source() if source is not None else None
        except RuntimeError:  # the tab area was deleted (window closing)
            return None

    def _write_session(self) -> None:
        """Write session.json soon, in a worker: tab switches come in bursts, and an
        fsynced write does not belong on the UI thread."""
        self._session_seq += 1
        self._session_timer.start()

    def _session_state(self) -> tuple[int, SessionState]:
        return self._session_seq, {
            "focused_project": self._focused,
            "open_tabs": [t.to_dict() for t in self._open_tabs],
            "active_tab": self._active_tab.to_dict() if self._active_tab else None,
        }

    def flush_session(self, *, wait: bool = False) -> None:
        """Write pending session state now (``wait``: on this thread, e.g. when closing)."""
        if self._session_seq == self._session_written:
            return
        self._session_timer.stop()
        seq, state = self._session_state()
        if wait:
            self._save_session_state(None, seq, state)
        else:
            self.workers.submit(self._save_session_state, seq, state, name="save session")

    def _save_session_state(self, context, seq: int, state: SessionState) -> None:
        with self._session_lock:
            if seq <= self._session_written:
                return  # a newer state was written already
            try:
                session = self.workspace.load_session()
                session.update(state)
                self.workspace.save_session(session)
            except Exception as exc:  # session state is a convenience; never fatal
                log.warning("could not write session state: %s", exc)
            self._session_written = seq

    def saved_session(self) -> dict[str, object]:
        """session.json as it was when the workspace was opened (the tabs to restore)."""
        return dict(self._session_at_start)

    # -- settings ------------------------------------------------------------------------
    def save_settings(self, settings: Settings | None = None) -> None:
        if settings is not None:
            self.settings = settings
        save_edited_settings(self.settings)  # onto the file as it is now (see there)
        self.sig_settings_changed.emit(self.settings)

    # -- running queries (status bar) ------------------------------------------------------
    def track_query(self, worker: Worker, label: str) -> RunningQuery:
        """Show ``worker`` in the status bar with a cancel button until it finishes."""
        running = RunningQuery(worker, label)
        self._running_queries.append(running)
        worker.signals.sig_work_finished.connect(lambda r=running: self._query_done(r))
        self.sig_query_started.emit(running)
        return running

    def _query_done(self, running: RunningQuery) -> None:
        if running in self._running_queries:
            self._running_queries.remove(running)
        self.sig_query_finished.emit(running)

    def running_queries(self) -> list[RunningQuery]:
        return list(self._running_queries)

    def cancel_queries(self) -> None:
        for running in list(self._running_queries):
            running.worker.cancel()

    # -- conversation tokens ---------------------------------------------------------------
    def report_tokens(self, tokens: int) -> None:
        self._tokens_used = int(tokens)
        self.sig_tokens_changed.emit(self._tokens_used)

    @property
    def tokens_used(self) -> int:
        return self._tokens_used

    # -- cross-widget requests -------------------------------------------------------------
    def request_open(
        self, kind: str, project: str | None = None, name: str = "", *, then: str | None = None
    ) -> None:
        """Ask the main window to open (or switch to) a tab; ``then="source_run"``: and run
        its Source Run (a SQL tab) once it is read."""
        request = {"kind": kind, "project": project, "name": name}
        if then:
            request["then"] = then
        self.sig_open_requested.emit(request)

    def ask_agent(self, text: str) -> None:
        """Send ``text`` to the agent as the analyst's message (through the chat panel)."""
        self.sig_agent_asked.emit(text)

    def set_conversation(self, conversation_id: str | None) -> None:
        """The chat panel switched conversation; the ledger panel follows it."""
        if conversation_id != self.conversation_id:
            self.conversation_id = conversation_id
            self.sig_conversation_changed.emit(conversation_id)

    def notify_connections_changed(self) -> None:
        """Call after a connection was added, changed or removed (workspace.json)."""
        self.sig_connections_changed.emit()
        self.sig_tables_changed.emit()

    def notify_listing_changed(self) -> None:
        """Call after this process wrote files of a project (the watcher skips its own
        writes): the explorer lists the project's tabs and charts again."""
        self.sig_listing_changed.emit()

    def notify_tables_changed(self) -> None:
        """Call after a run created or replaced cached tables."""
        self.sig_tables_changed.emit()

    def post_message(self, text: str, level: str = "info") -> None:
        self.sig_message_posted.emit(text, level)

    def report_error(self, exc: BaseException, what: str = "") -> None:
        """Show an error: a LantideError's message and hint, else a one-line summary."""
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        hint = getattr(exc, "hint", None)
        text = f"{what}: {message}" if what else message
        if hint:
            text = f"{text} — {hint}"
        self.post_message(text, "error")

    # -- shutdown ------------------------------------------------------------------------
    def close(self, wait_ms: int = 5000) -> None:
        """Stop the watcher, cancel work, wait for it and close the query service."""
        if self._closed:
            return
        self.flush_session(wait=True)
        self._closed = True
        with self._watcher_lock:
            watcher, self._watcher, self.watching = self._watcher, None, False
        if watcher is not None:
            watcher.stop()
        self.workers.cancel_all()
        if self.query is not None:
            with contextlib.suppress(Exception):  # closing goes on whatever the interrupt did
                self.query.interrupt()
        self.workers.wait(wait_ms)
        if self.query is not None:
            _close_quietly(self.query)
            self.query = None


def _open_query_service(context, workspace: Workspace, settings: Settings):
    from lantide.query.pending_connection import PendingConnection

    # DuckDB connects on a thread of its own (mostly without the GIL) while this one
    # imports the query layer: about 20 ms sooner usable.
    pending = PendingConnection(
        workspace.cache_db_path,
        memory_limit=settings.query.memory_limit,
        threads=settings.query.threads,
    )
    try:
        from lantide.query import QueryService  # deferred: duckdb is heavy
        from lantide.query.service import import_ahead

        import_ahead()
        return QueryService(workspace, settings.query, pending=pending)
    finally:
        pending.discard()  # nothing, once the engine took it


def _close_quietly(service) -> None:
    try:
        service.close()
    except Exception as exc:
        log.warning("closing the query service failed: %s", exc)
