"""A DuckDB connection opened on a thread of its own, for an engine made a moment later.

Opening the cache database takes the desktop app 50-60 ms before it is usable: importing
DuckDB's core (15-20 ms, holding the GIL), then ``connect``, which builds the catalog of
DuckDB's built-in functions and runs without the GIL for most of it. The query layer's
own modules take another 25-30 ms of Python. The app starts the connect here and imports
those modules while it runs (:func:`lantide.ui.services._open_query_service`); the
engine then takes the connection instead of connecting itself (``Engine(..., pending=...)``).

Whoever starts a pending connection discards it when done (:meth:`PendingConnection.discard`):
a connection the engine took is not touched, one nobody took is closed (also when it is
still connecting then), so the file is never held by a connection nobody owns. An engine
given one made with other settings closes it before connecting itself: DuckDB refuses a
second configuration of a file it has open.

This module imports nothing heavy: it is imported before the query layer.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

ConnectionConfig = dict[str, str | bool | int | float | list[str]]


def connection_config(memory_limit: str, threads: int) -> ConnectionConfig:
    """What the engine passes to ``duckdb.connect``; a pending connection made with other
    settings is not taken."""
    config: ConnectionConfig = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "memory_limit": memory_limit,
    }
    if threads:
        config["threads"] = int(threads)
    return config


def is_new_database(db_path: Path) -> bool:
    """No database file and no write-ahead log yet: the connect about to run creates it
    (DuckDB then locks it against other processes, so it holds only what we write)."""
    return not db_path.exists() and not Path(f"{db_path}.wal").exists()


class PendingConnection:
    """``duckdb.connect(db_path, config=connection_config(...))``, started now on a
    thread; :meth:`take` waits for it."""

    def __init__(self, db_path: Path, *, memory_limit: str = "75%", threads: int = 0) -> None:
        self.db_path = Path(db_path)
        self.config = connection_config(memory_limit, threads)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self.created = is_new_database(self.db_path)  # before the connect creates it
        self._lock = threading.Lock()
        self._connection: Any = None
        self._error: BaseException | None = None
        self._done = False  # taken or discarded: a late connection is closed at once
        # DuckDB's core is imported here, before the thread starts: importing it holds the
        # GIL throughout, so the caller's own imports meanwhile would only stretch it and
        # delay the connect (about 8 ms later usable); the connect itself mostly runs
        # without the GIL, beside them.
        from lantide.query.duckdb_import import duckdb_core

        self._duckdb = duckdb_core()
        self._thread = threading.Thread(target=self._connect, name="lantide-connect", daemon=True)
        self._thread.start()

    def _connect(self) -> None:
        try:
            connection = self._duckdb.connect(str(self.db_path), config=self.config)
        except BaseException as exc:  # handed to whoever takes it
            self._error = exc
            return
        with self._lock:
            if not self._done:
                self._connection = connection
                return
        with contextlib.suppress(Exception):
            connection.close()

    def matches(self, db_path: Path, config: ConnectionConfig) -> bool:
        return Path(db_path) == self.db_path and config == self.config

    def take(self) -> Any:
        """The connection, once ``connect`` returned; raises what it raised. Once only."""
        self._thread.join()
        with self._lock:
            if self._done:
                raise RuntimeError(f"the pending connection to {self.db_path} is gone")
            self._done = True
            connection, self._connection = self._connection, None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return connection

    def discard(self, *, wait: bool = False) -> None:
        """Close the connection unless it was taken. Without ``wait`` a connect still
        running is not waited for (it closes its connection itself when it returns)."""
        with self._lock:
            self._done = True
            connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()
        if wait:
            self._thread.join()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the connect has returned (for tests and shutdown)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
