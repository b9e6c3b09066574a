"""A DuckDB statement that stays inside DuckDB until the test lets it go on.

A test that must show a cancel did NOT reach some other statement cannot sleep and then
look (on a slow machine the interrupt simply has not been noticed yet). Instead that other
statement is a :class:`GatedQuery`: it scans an Arrow stream whose producer blocks on a
gate. While the gate is shut the statement is in DuckDB, so an interrupt of its cursor
sets the flag DuckDB checks when the scan goes on. Open the gate once the cancel is over,
and the statement ends with its full count (not interrupted) or ``QUERY_CANCELLED``
(interrupted): a result either way, whatever the machine's speed.
"""

from __future__ import annotations

import itertools
import threading
import time

BATCHES, ROWS_PER_BATCH = 4, 1000
_names = itertools.count()


class GatedQuery:
    """``run(engine)`` on the caller's thread; ``entered`` is set once the statement is
    in DuckDB and blocked; :meth:`open` lets it finish."""

    expected = BATCHES * ROWS_PER_BATCH

    def __init__(self):
        self.entered = threading.Event()
        self._gate = threading.Event()

    def open(self) -> None:
        self._gate.set()

    def _batches(self, schema):
        import pyarrow as pa

        batch = pa.record_batch([pa.array(range(ROWS_PER_BATCH), pa.int64())], schema=schema)
        yield batch
        self.entered.set()
        if not self._gate.wait(60):
            raise TimeoutError("the test never opened the gate")
        for _ in range(BATCHES - 1):
            yield batch

    def run(self, engine) -> int:
        """Count the gated stream's rows through ``engine.run`` (so cancel scopes and
        ``Engine.interrupt`` see the statement as any other)."""
        import importlib

        import pyarrow as pa

        # DuckDB scans an Arrow stream through the duckdb package's Python layer, which
        # the engine loads only with the query service's parts (or a first query).
        importlib.import_module("duckdb")

        schema = pa.schema([("n", pa.int64())])
        reader = pa.RecordBatchReader.from_batches(schema, self._batches(schema))
        name = f"gated_{next(_names)}"

        def work(cur):
            cur.register(name, reader)
            try:
                return cur.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0]
            finally:
                cur.unregister(name)

        return engine.run(work, timeout=None)


def wait_until_no_thread(name: str, seconds: float = 20.0) -> None:
    """Wait until no thread called ``name`` is alive (e.g. a cancel's re-interrupts:
    after that nothing more will be interrupted)."""
    deadline = time.monotonic() + seconds
    while any(t.name == name and t.is_alive() for t in threading.enumerate()):
        assert time.monotonic() < deadline, f"thread {name!r} still running after {seconds} s"
        time.sleep(0.01)
