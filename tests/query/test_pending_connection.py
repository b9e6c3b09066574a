"""A connection started ahead of the engine (the desktop app's start-up): the engine takes
it when it was made with the engine's settings, and nothing ever holds the database file
without an owner: not a connection nobody took, not one made with other settings, not one
still connecting when its starter gives up."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lantide.query.engine import Engine
from lantide.query.errors import QueryError
from lantide.query.pending_connection import PendingConnection

# Opens the file read-write in another process: only possible once no connection of ours
# holds it (DuckDB locks the file for the process that has it open).
_OPEN_ELSEWHERE = r"""
import sys, _duckdb
con = _duckdb.connect(sys.argv[1])
print(con.execute("SELECT 40 + 2").fetchone()[0])
"""

# Holds the file open until stdin closes.
_HOLD = r"""
import sys, _duckdb
con = _duckdb.connect(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
"""


def _engine(db: Path, pending: PendingConnection | None, memory_limit: str = "75%") -> Engine:
    return Engine(
        db,
        allowed_dirs=[db.parent],
        search_dir=db.parent,
        memory_limit=memory_limit,
        pending=pending,
    )


def _opens_elsewhere(db: Path) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", _OPEN_ELSEWHERE, str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode == 0 and done.stdout.strip() == "42"


def test_the_engine_takes_a_connection_made_on_its_own_thread(tmp_path, duckdb_connect_threads):
    db = tmp_path / ".lantide" / "cache.duckdb"
    pending = PendingConnection(db)
    engine = _engine(db, pending)
    try:
        assert duckdb_connect_threads == ["lantide-connect"]  # the engine did not connect again
        assert engine.created  # the file did not exist before the pending connect
        pending.discard()  # what its starter does afterwards: the engine's stays open
        engine.execute("CREATE TABLE t AS SELECT 7 AS n")
        assert engine.execute("SELECT n FROM t") == [(7,)]
        # confined like any engine's connection (the settings ran on the taken one)
        with pytest.raises(QueryError):
            engine.execute(f"SELECT * FROM read_csv('{tmp_path.parent}/elsewhere.csv')")
    finally:
        engine.close()
    assert _opens_elsewhere(db)  # closing the engine released the file


def test_a_reopened_file_is_not_taken_for_a_new_one(tmp_path, duckdb_connect_threads):
    db = tmp_path / "cache.duckdb"
    _engine(db, None).close()
    pending = PendingConnection(db)
    engine = _engine(db, pending)
    try:
        assert not engine.created
        assert duckdb_connect_threads[-1] == "lantide-connect"
    finally:
        pending.discard()
        engine.close()


def test_one_made_with_other_settings_is_closed_before_the_engine_connects(
    tmp_path, duckdb_connect_threads
):
    db = tmp_path / "cache.duckdb"
    pending = PendingConnection(db, memory_limit="1GB")
    # DuckDB refuses to open one file with two configurations: the engine must close the
    # pending one first, or this raises
    engine = _engine(db, pending, memory_limit="75%")
    try:
        assert duckdb_connect_threads == ["lantide-connect", threading.current_thread().name]
        assert engine.execute("SELECT current_setting('memory_limit')")[0][0] != "1.0 GiB"
        with pytest.raises(RuntimeError):
            pending.take()  # closed, not handed to anyone later
    finally:
        engine.close()
    assert _opens_elsewhere(db)


def test_a_connection_nobody_takes_is_closed_even_while_still_connecting(tmp_path):
    db = tmp_path / "cache.duckdb"
    pending = PendingConnection(db)
    pending.discard()  # most likely before its connect returned
    assert pending.wait(timeout=60)
    assert _opens_elsewhere(db)
    with pytest.raises(RuntimeError):
        pending.take()


def test_a_locked_file_fails_the_engine_as_it_does_without_one(tmp_path):
    db = tmp_path / "cache.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        pending = PendingConnection(db)
        with pytest.raises(QueryError) as info:
            _engine(db, pending)
        pending.discard()
        assert info.value.code == "CACHE_LOCKED"
        assert str(db) in info.value.message
        with pytest.raises(QueryError) as plain:  # the same answer without one
            _engine(db, None)
        assert plain.value.code == "CACHE_LOCKED"
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
        if holder.stdout is not None:
            holder.stdout.close()


def test_a_broken_cache_file_fails_the_engine_as_it_does_without_one_and_is_kept(tmp_path):
    db = tmp_path / "cache.duckdb"
    garbage = b"not a database\x00" * 512
    db.write_bytes(garbage)
    pending = PendingConnection(db)
    assert not pending.created  # a file is there: not taken for a new database
    with pytest.raises(QueryError) as info:
        _engine(db, pending)
    pending.discard()
    with pytest.raises(QueryError) as plain:
        _engine(db, None)
    assert info.value.code == plain.value.code == "CACHE_UNREADABLE"
    assert str(db) in info.value.message
    assert db.read_bytes() == garbage  # the analyst's file is left as it was
