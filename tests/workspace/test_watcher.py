import contextlib
import queue
import time

import pytest

from lantide.workspace.atomic import atomic_write_text
from lantide.workspace.watcher import DATA, DOCUMENT, SQL_TAB, WorkspaceWatcher, classify


@pytest.fixture
def watched(sample_workspace):
    changes: queue.Queue = queue.Queue()
    watcher = WorkspaceWatcher(
        sample_workspace, lambda batch: [changes.put(c) for c in batch], debounce=0.15
    )
    watcher.start()
    # the observer sets up its watches on its own thread: wait until it reports a change
    probe = sample_workspace / "projects/q3-churn/sql/watch_probe.sql"
    probe.write_text("SELECT 0\n")
    _wait_for_path(changes, probe)
    yield sample_workspace, changes
    watcher.stop()


def _wait_for_path(changes, path, seconds=20.0) -> list:
    """Every change reported up to and including the first one of ``path``."""
    out = []
    deadline = time.monotonic() + seconds
    while not out or out[-1].path != path:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no change of {path} reported; got {out}"
        with contextlib.suppress(queue.Empty):
            out.append(changes.get(timeout=remaining))
    return out


def test_external_edit_of_a_plan_is_reported_once(watched):
    root, changes = watched
    plan = root / "projects/q3-churn/plan.md"
    with open(plan, "a") as fh:  # another editor, several writes in a burst
        for i in range(5):
            fh.write(f"\nline {i}")
            fh.flush()
    marker = root / "projects/q3-churn/sql/after_the_burst.sql"
    marker.write_text("SELECT 1\n")  # reported after every earlier path has gone quiet
    got = _wait_for_path(changes, marker)
    plan_changes = [c for c in got if c.path.name == "plan.md"]
    assert len(plan_changes) == 1
    assert plan_changes[0].kind == DOCUMENT and plan_changes[0].project == "q3-churn"
    assert plan_changes[0].event == "modified"


def test_lantide_own_writes_are_ignored(watched):
    root, changes = watched
    atomic_write_text(root / "projects/q3-churn/plan.md", "# rewritten by Lantide\n")
    atomic_write_text(root / "projects/q3-churn/sql/new_tab.sql", "SELECT 1\n")
    # then another program's write: the watcher reports a path once it has been quiet
    # for the debounce, so Lantide's earlier writes were dealt with by the time it shows
    marker = root / "projects/q3-churn/sql/by_hand.sql"
    marker.write_text("SELECT 2\n")
    got = _wait_for_path(changes, marker)
    assert [(c.path.name, c.event) for c in got] == [("by_hand.sql", "created")]


def test_data_files_and_tabs_are_classified(watched):
    root, changes = watched
    (root / "data" / "new sales.csv").write_text("a,b\n1,2\n")
    (root / "projects/q3-churn/sql/extra.sql").write_text("SELECT 2")
    (root / "data" / "customers.csv").unlink()
    marker = root / "projects/q3-churn/sql/after_the_others.sql"
    marker.write_text("SELECT 3\n")
    got = {(c.kind, c.path.name, c.event) for c in _wait_for_path(changes, marker)}
    assert (DATA, "new sales.csv", "created") in got
    assert (SQL_TAB, "extra.sql", "created") in got
    assert (DATA, "customers.csv", "deleted") in got


def test_classify_ignores_lantide_internals_and_temp_files(tmp_path):
    root = tmp_path
    assert classify(root, root / ".lantide" / "cache.duckdb") is None
    assert classify(root, root / "projects/p/.plan.md.abc.lantide-tmp") is None
    assert classify(root, root / "projects/p/plan.md~") is None
    assert classify(root, root / "projects/p/plan.md") == (DOCUMENT, "p")
    assert classify(root, root / "projects/p/sql/t.sql") == (SQL_TAB, "p")


def test_chart_files_are_classified_as_charts(tmp_path):
    from lantide.workspace.watcher import CHART, classify

    path = tmp_path / "projects" / "p" / "charts" / "orders by region.vl.json"
    assert classify(tmp_path, path) == (CHART, "p")
    assert classify(tmp_path, tmp_path / "projects" / "p" / "charts" / "notes.txt") is None
