"""Opening a workspace's database imports only what opening needs: the result checks load
with the first query; opening, registering the data files, listing the tables and running
a query use DuckDB's compiled core, the ``duckdb`` package's Python layer loading with the
service's parts (the desktop app) or what needs it (exports, some file readers)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env, run_script_json

REPO = Path(__file__).resolve().parents[2]

_SCRIPT = r"""
import json, sys
from pathlib import Path
from lantide.query import QueryService
from lantide.workspace.model import Workspace
ws = Workspace.open(Path(sys.argv[1]))
report = {}
with QueryService(ws) as service:
    listed = service.show_tables()
    report["listed"] = sorted(t["name"] for t in listed["tables"])
    report["opened"] = sorted(
        name for name in ("lantide.query.checks", "duckdb")
        if name in sys.modules
    )
    report["listing_loaded"] = sorted(  # the browser's modules: not needed to list
        name for name in ("lantide.query.browse", "lantide.query.guard",
                          "lantide.query.lineage", "lantide.query.results")
        if name in sys.modules
    )
    report["first_query"] = service.run_query("SELECT 42 AS n")["preview"]
    report["duckdb_after_query"] = "duckdb" in sys.modules
    result = service.run_query("SELECT count(*) AS n FROM customers")
    report["rows"] = result["preview"]
    report["checks_loaded"] = "lantide.query.checks" in sys.modules
ws.close()
print(json.dumps(report))
"""


def test_opening_the_database_spares_the_checks_and_the_duckdb_package(sample_workspace):
    report = run_script_json(_SCRIPT, str(sample_workspace))
    assert report["opened"] == []
    assert report["listing_loaded"] == []  # they load with the service's parts, or a query
    assert {"customers", "orders", "products"} <= set(report["listed"])
    assert report["first_query"] == [[42]]
    # a result's columns are bound with DESCRIBE, not the relation API: a headless query
    # spares the package's Python layer too (60-90 ms of imports; issue 33)
    assert not report["duckdb_after_query"]
    assert report["rows"] == [[2000]]
    assert report["checks_loaded"]  # the first query brought them


_PARTS_SCRIPT = r"""
import json, sys
from pathlib import Path
from lantide.query import QueryService
from lantide.workspace.model import Workspace
ws = Workspace.open(Path(sys.argv[1]))
with QueryService(ws) as service:
    before = "duckdb" in sys.modules
    service.load_parts()
    print(json.dumps([before, "duckdb" in sys.modules]))
ws.close()
"""


def test_the_service_parts_bring_the_duckdb_package(sample_workspace):
    """The desktop app loads the parts a moment after it is usable: the first query then
    does not wait for ``import duckdb`` either."""
    done = subprocess.run(
        [sys.executable, "-c", _PARTS_SCRIPT, str(sample_workspace)],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=str(REPO),
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [False, True]
