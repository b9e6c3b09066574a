"""Fixtures of the data-side UI tests (SQL tabs, table browser, chat, ledger).

Import them in a test module: ``from tests.ui.conftest_data import *  # noqa: F401,F403``.

- ``big_parquet``: a 1.5-million-row Parquet file generated once per run with DuckDB.
- ``data_workspace``: a workspace with project ``p``, ``data/big.parquet`` and
  ``data/small.csv`` (a path, not opened).
- ``app_services``: :class:`AppServices` on it with the real query service open and the
  file watcher running; closed (and the workspace unlocked) at the end.

Helpers (imported by name): ``write_tab``, ``open_services`` and ``make_tab`` (a SQL tab
widget shown once its text is loaded).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from lantide.ui.sql.sql_tab import SqlTabWidget

BIG_ROWS = 1_500_000

__all__ = [
    "BIG_ROWS",
    "big_parquet",
    "data_workspace",
    "app_services",
    "open_services",
    "write_tab",
]


@pytest.fixture(scope="session")
def big_parquet(tmp_path_factory) -> Path:
    import duckdb

    path = tmp_path_factory.mktemp("bigdata") / "big.parquet"
    con = duckdb.connect()
    con.execute(f"""
        COPY (
            SELECT i AS id,
                   'customer ' || (i % 5000) AS name,
                   round((i % 1000) * 1.25, 2) AS amount,
                   DATE '2024-01-01' + CAST(i % 365 AS INTEGER) AS day,
                   CASE WHEN i % 10 = 0 THEN NULL ELSE i % 7 END AS bucket
            FROM range({BIG_ROWS}) r(i)
        ) TO '{path}' (FORMAT parquet)""")
    con.close()
    return path


def write_tab(root: Path, project: str, name: str, sql: str) -> Path:
    path = root / "projects" / project / "sql" / f"{name}.sql"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sql, encoding="utf-8")
    return path


def make_tab(qtbot, services, name: str, project: str = "p") -> SqlTabWidget:
    """The SQL tab ``name`` of ``project`` as a widget of its own, 1000x700, shown once its
    text is loaded."""
    from lantide.ui.sql.sql_tab import SqlTabWidget

    tab = SqlTabWidget(services, project, name)
    qtbot.addWidget(tab)
    tab.resize(1000, 700)
    with qtbot.waitSignal(tab.sig_loaded, timeout=10_000):
        pass
    tab.show()
    return tab


@pytest.fixture
def data_workspace(tmp_path, big_parquet) -> Path:
    from lantide.workspace.model import Workspace

    root = tmp_path / "ws"
    ws = Workspace.create(root, name="Data test")
    ws.create_project("p")
    shutil.copy(big_parquet, root / "data" / "big.parquet")
    (root / "data" / "small.csv").write_text(
        "region,revenue,orders\nnorth,120.5,3\nsouth,80.25,2\neast,,1\nwest,42,7\n",
        encoding="utf-8",
    )
    write_tab(root, "p", "all_big", "SELECT * FROM big\n")
    write_tab(
        root,
        "p",
        "by_bucket",
        "SELECT bucket, count(*) AS n, sum(amount) AS total\nFROM all_big\n"
        "GROUP BY bucket\nORDER BY bucket\n",
    )
    return root


def open_services(qtbot, root: Path, *, watcher: bool = True):
    from lantide.ui.services import AppServices
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import Settings

    ws = Workspace.open(root)
    services = AppServices(ws, Settings())
    services.start(query=True, watcher=watcher)
    qtbot.waitUntil(
        lambda: services.query is not None or services.query_error is not None, timeout=30_000
    )
    assert services.query_error is None, services.query_error
    return services


@pytest.fixture
def app_services(qtbot, data_workspace):
    services = open_services(qtbot, data_workspace)
    yield services
    services.close()
    services.workspace.close()
