"""`lantide init` never replaces or modifies a file that is already there (issue 11, item 1)."""

from __future__ import annotations

import os
import threading

import pytest

from lantide.errors import LantideError
from lantide.workspace.model import Workspace


def _tree(root) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = fh.read()
    return out


def test_init_sample_refuses_to_replace_the_analysts_data(tmp_path, run_cli):
    root = tmp_path / "analysis"
    (root / "data").mkdir(parents=True)
    (root / "data" / "customers.csv").write_bytes(b"id,name\n1,mine\n")
    (root / "data" / "orders.parquet").write_bytes(b"PAR1 not really, but mine")
    (root / "notes.txt").write_text("keep me")
    before = _tree(root)

    result = run_cli("init", root, "--sample")

    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert "data/customers.csv" in result.stderr and "data/orders.parquet" in result.stderr
    assert "without --sample" in result.stderr  # says what to do instead
    assert _tree(root) == before  # nothing replaced, nothing added
    assert not Workspace.is_workspace(root)


def test_init_sample_refuses_a_same_table_name_in_another_case_or_format(tmp_path, run_cli):
    root = tmp_path / "analysis"
    (root / "data").mkdir(parents=True)
    # Same file on a case-insensitive disk; same table name "products" for DuckDB.
    (root / "data" / "Customers.CSV").write_bytes(b"id\n1\n")
    (root / "data" / "products.parquet").write_bytes(b"mine")
    before = _tree(root)

    result = run_cli("init", root, "--sample")

    assert result.returncode == 1
    assert "data/Customers.CSV" in result.stderr and "data/products.parquet" in result.stderr
    assert _tree(root) == before


def test_init_sample_refuses_an_existing_project_folder_before_writing_anything(tmp_path, run_cli):
    root = tmp_path / "analysis"
    (root / "projects" / "q3-churn").mkdir(parents=True)
    (root / "projects" / "q3-churn" / "plan.md").write_text("# my own plan\n")
    before = _tree(root)

    result = run_cli("init", root, "--sample")

    assert result.returncode == 1
    assert "projects/q3-churn" in result.stderr
    assert _tree(root) == before  # no sample data written before the refusal


def test_init_sample_in_a_folder_of_other_files_works_and_keeps_them(tmp_path, run_cli):
    root = tmp_path / "analysis"
    (root / "data").mkdir(parents=True)
    (root / "data" / "sales.csv").write_bytes(b"a\n1\n")
    result = run_cli("init", root, "--sample")
    assert result.returncode == 0, result.stderr
    assert (root / "data" / "sales.csv").read_bytes() == b"a\n1\n"
    assert (root / "data" / "customers.csv").stat().st_size > 1000


def test_init_without_sample_keeps_every_existing_file(tmp_path, run_cli):
    root = tmp_path / "analysis"
    (root / "data").mkdir(parents=True)
    (root / "data" / "customers.csv").write_bytes(b"id\n1\n")
    (root / "projects" / "mine").mkdir(parents=True)
    (root / "projects" / "mine" / "plan.md").write_text("# mine\n")
    before = _tree(root)
    result = run_cli("init", root)
    assert result.returncode == 0, result.stderr
    after = _tree(root)
    assert {k: after[k] for k in before} == before


def test_two_inits_at_once_make_one_workspace_file(tmp_path):
    """The workspace file is created, never replaced: of two racing inits one wins and
    the other is told the folder is already a workspace."""
    root = tmp_path / "w"
    outcomes: list[object] = []
    barrier = threading.Barrier(8)

    def init(i):
        barrier.wait()
        try:
            Workspace.create(root, name=f"ws{i}")
            outcomes.append(i)
        except LantideError as exc:
            outcomes.append(exc.code)

    threads = [threading.Thread(target=init, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if isinstance(o, int)]
    assert len(winners) == 1, outcomes
    assert set(outcomes) - set(winners) <= {"ALREADY_A_WORKSPACE"}
    assert Workspace.open(root, lock=False).name == f"ws{winners[0]}"


@pytest.mark.parametrize("present", ["data/targets.xlsx", "data/products.csv"])
def test_create_sample_checks_every_sample_file(tmp_path, present):
    from lantide.workspace.sample import create_sample

    root = tmp_path / "w"
    (root / present).parent.mkdir(parents=True)
    (root / present).write_bytes(b"mine")
    with pytest.raises(LantideError) as info:
        create_sample(root)
    assert present in info.value.message
    assert (root / present).read_bytes() == b"mine"


@pytest.mark.slow  # builds the whole sample workspace: 2 s
def test_first_run_sample_moves_a_half_built_folder_aside_and_keeps_it(tmp_path):
    from lantide.workspace.sample import ensure_sample_workspace

    target = tmp_path / "sample-workspace"
    (target / "data").mkdir(parents=True)
    (target / "data" / "customers.csv").write_bytes(b"cut short")  # an older crash

    ensure_sample_workspace(target)

    assert Workspace.is_workspace(target)
    assert (target / "projects" / "q3-churn" / "plan.md").exists()
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("sample-workspace.incomplete-")]
    assert len(kept) == 1 and (kept[0] / "data" / "customers.csv").read_bytes() == b"cut short"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_init_where_a_file_has_a_folders_name_says_so_and_changes_nothing(tmp_path, run_cli):
    root = tmp_path / "analysis"
    root.mkdir()
    (root / "data").write_text("my notes, in a file called data")
    before = _tree(root)
    result = run_cli("init", root)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "data" in result.stderr and "not a folder" in result.stderr
    assert _tree(root) == before
    assert not (root / ".lantide").exists()
