"""SIGKILL loops: real child processes killed at random points (fixed seed, bounded rounds).

- Annotation saves: a child creates, replies to, resolves and deletes annotations and saves
  text edits of the Plan as fast as it can, printing each change once its save returned.
  After each kill the pair reopens read-write and consistent (every mark has its entry and
  every open entry its mark), and every change the child reported as saved is there.
- Source Run: a child runs Source Run over a three-tab chain after the upstream tab's SQL
  changed. After each kill the cache database opens, each cached table is wholly the old
  or wholly the new version and its bookkeeping row describes what it holds, and the next
  Source Run succeeds and brings every table to the new version (nothing stale is skipped
  as up to date).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO, cli_env

pytestmark = [pytest.mark.security, pytest.mark.slow]

SEED = 20261201
ROUNDS = 20

# -- annotation saves -----------------------------------------------------------------------

ANNOTATION_CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from lantide.docs import open_document
    from lantide.workspace.model import Project

    root, start_at = Path(sys.argv[1]), int(sys.argv[2])
    doc = open_document(Project.load(root, "q3-churn"), "plan")
    target = "Customer counts per quarter"
    for left in doc.annotations:  # one the killed child before this one left open
        if left.is_open and left.id not in ("3f9a1c", "7be204", "c51d8e"):
            doc.resolve(left.id, "B", answer="closed by the next child", by="child")
    print("ready", flush=True)
    i = start_at
    while True:
        start = doc.text.index(target)
        ann = doc.create_annotation(start, start + len(target), f"comment {i}", by="child")
        print(f"created {ann}", flush=True)
        doc.reply(ann, f"reply {i}", by="child")
        print(f"replied {ann} reply {i}", flush=True)
        doc.resolve(ann, "B", answer=f"answer {i}", by="child")
        print(f"resolved {ann}", flush=True)
        if i % 3 == 0:
            doc.delete(ann, by="child")
            print(f"deleted {ann}", flush=True)
        doc.save_text(doc.text + f"\\nline {i} typed by the child\\n", by="child")
        print(f"saved line {i}", flush=True)
        i += 1
""")


def _check_annotations(root: Path, reported: list[str], unsaved_children: set[int]) -> None:
    from lantide.docs import open_document
    from lantide.docs.anchoring import check_consistent
    from lantide.docs.marks import scan_marks
    from lantide.workspace.model import Project

    project = Project.load(root, "q3-churn")
    doc = open_document(project, "plan")
    assert doc.read_only_reason is None
    text = project.plan_path.read_text(encoding="utf-8")
    sidecar = json.loads((project.dir / "plan.annotations.json").read_text(encoding="utf-8"))
    assert check_consistent(text, sidecar["annotations"], scan_marks(text)) == []
    live = {a.id: a for a in doc.annotations}
    deleted = {a.id for a in doc.deleted_annotations}
    assert {"3f9a1c", "7be204", "c51d8e"} <= set(live)  # the sample's own, untouched
    for line in reported:
        verb, rest = line.split(" ", 1)
        if verb == "created":
            assert rest in live or rest in deleted, f"annotation {rest} was lost"
        elif verb == "replied":
            ann_id, reply = rest.split(" ", 1)
            entry = next(
                e for e in sidecar["annotations"] + sidecar.get("deleted", []) if e["id"] == ann_id
            )
            assert any(h.get("text") == reply for h in entry["history"]), line
        elif verb == "resolved":
            assert rest in deleted or not live[rest].is_open, line
        elif verb == "deleted":
            assert rest in deleted, line
        elif verb == "saved":
            assert f"line {rest.split()[1]} typed by the child" in text, line
    # A killed save may leave its temporary file, but the next save of that file removes
    # it: they never pile up. Only a child with no save after it can have left one (the
    # last child, and those before it that were killed before their first save, which
    # happens when a loaded machine is slow to start them).
    leftovers = [p.name for p in project.dir.iterdir() if p.name.endswith(".lantide-tmp")]
    assert all(any(f".{pid}." in name for pid in unsaved_children) for name in leftovers), leftovers


def test_annotation_saves_killed_at_random_points_reopen_consistent(sample_workspace):
    rng = random.Random(SEED)
    reported: list[str] = []
    kills = 0
    unsaved_children: set[int] = set()
    for round_no in range(ROUNDS):
        child = subprocess.Popen(
            [sys.executable, "-c", ANNOTATION_CHILD, str(sample_workspace), str(round_no * 1000)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
            cwd=str(REPO),
        )
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        time.sleep(rng.uniform(0.0, 1.0))
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
            kills += 1
        out, err = child.communicate(timeout=60)
        assert child.returncode == -signal.SIGKILL, err
        lines = [line for line in out.splitlines() if line]
        reported += lines
        # the children whose temporary files no later save has had the chance to remove
        unsaved_children = {child.pid} | (unsaved_children if not lines else set())
        _check_annotations(sample_workspace, reported, unsaved_children)
    assert kills == ROUNDS
    # the kills cut real work: many changes were saved, of every kind
    assert len(reported) >= 2 * ROUNDS, reported
    assert {line.split()[0] for line in reported} == {
        "created",
        "replied",
        "resolved",
        "deleted",
        "saved",
    }


# -- Source Run -----------------------------------------------------------------------------

ROWS = 400_000
PROJECT = "kl"


def _base_sql(version: int) -> str:
    return f"SELECT id, kind, price, {version} AS version FROM items\n"


@pytest.fixture
def chain_workspace(empty_workspace):
    from lantide.workspace.model import Workspace

    lines = ["id,kind,price"] + [f"{i},{'abcde'[i % 5]},{i % 977 * 0.5}" for i in range(ROWS)]
    (empty_workspace / "data" / "items.csv").write_text("\n".join(lines) + "\n")
    Workspace(empty_workspace, {}).create_project(PROJECT)
    sql = empty_workspace / "projects" / PROJECT / "sql"
    (sql / "base.sql").write_text(_base_sql(0))
    (sql / "mid.sql").write_text("SELECT *, price * 2 AS doubled FROM base\n")
    (sql / "top.sql").write_text(
        "SELECT version, count(*) AS n, sum(doubled) AS total FROM mid GROUP BY version\n"
    )
    return empty_workspace


def _source_run_in_process(root: Path) -> dict:
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    ws = Workspace.open(root)
    try:
        svc = QueryService(ws, QuerySettings())
        try:
            return svc.source_run_sql_tab(PROJECT, "top")
        finally:
            svc.close()
    finally:
        ws.close()


def _versions(root: Path) -> dict[str, int]:
    """Each cached tab table's version; asserts it is whole and its bookkeeping row agrees."""
    con = duckdb.connect(str(root / ".lantide" / "cache.duckdb"), read_only=True)
    try:
        book = {
            name: (sql, rows)
            for name, sql, rows in con.execute(
                "SELECT name, sql, row_count FROM _lantide.cached_tables"
            ).fetchall()
        }
        tables = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
            ).fetchall()
        }
        out = {}
        for name in ("base", "mid", "top"):
            if name not in tables:
                assert name not in book, f"bookkeeping row for missing table {name}"
                continue
            versions = con.execute(f'SELECT DISTINCT version FROM "{name}"').fetchall()
            assert len(versions) == 1, f"{name} mixes versions {versions}"
            count = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            assert count == (1 if name == "top" else ROWS), (name, count)
            assert name in book, f"table {name} without its bookkeeping row"
            assert book[name][1] == count, (name, book[name], count)
            if name == "base":  # the row records the SQL that made the table
                assert f"{versions[0][0]} AS version" in book[name][0]
            out[name] = versions[0][0]
        return out
    finally:
        con.close()


def test_source_runs_killed_at_random_points_leave_old_or_new_tables(chain_workspace):
    rng = random.Random(SEED + 1)
    assert _source_run_in_process(chain_workspace)["ok"]
    assert _versions(chain_workspace) == {"base": 0, "mid": 0, "top": 0}
    base = chain_workspace / "projects" / PROJECT / "sql" / "base.sql"
    command = [
        sys.executable,
        "-m",
        "lantide",
        "tab",
        "source-run",
        str(chain_workspace),
        PROJECT,
        "top",
    ]
    # Kill times are drawn across the length of a whole run measured on this machine, so
    # a fast CI machine is attacked mid-run as often as a slow laptop (a fixed 0.3-2.5 s
    # window let most runs finish first on a fast one).
    base.write_text(_base_sql(1))
    started = time.monotonic()
    whole = subprocess.run(
        command, capture_output=True, text=True, env=cli_env(), cwd=str(REPO), timeout=120
    )
    run_seconds = time.monotonic() - started
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert _versions(chain_workspace) == {"base": 1, "mid": 1, "top": 1}
    killed_mid_run = 0
    for version in range(2, ROUNDS + 2):
        base.write_text(_base_sql(version))
        child = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
            cwd=str(REPO),
        )
        time.sleep(rng.uniform(0.15, 0.95) * run_seconds)
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
        out, err = child.communicate(timeout=120)
        if child.returncode == -signal.SIGKILL:
            killed_mid_run += 1
        else:
            assert child.returncode == 0, out + err
        # the cache opens (the real way, replaying its log), then each table is old or new
        from lantide.query import QueryService
        from lantide.workspace.model import Workspace
        from lantide.workspace.settings import QuerySettings

        ws = Workspace.open(chain_workspace)
        QueryService(ws, QuerySettings()).close()
        ws.close()
        found = _versions(chain_workspace)
        assert set(found) == {"base", "mid", "top"}  # a kill never loses an old table
        assert set(found.values()) <= {version - 1, version}, (version, found)
        report = _source_run_in_process(chain_workspace)
        assert report["ok"], report
        assert _versions(chain_workspace) == {"base": version, "mid": version, "top": version}
        leftovers = [
            p.name
            for p in (chain_workspace / ".lantide").iterdir()
            if p.name.endswith(".lantide-tmp")
        ]
        assert leftovers == []
    assert killed_mid_run >= ROUNDS // 2, killed_mid_run  # the kills hit real work
