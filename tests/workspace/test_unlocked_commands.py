"""Commands that run beside the open app (without the workspace lock) change nothing but
what they are asked to change (issue 11, item 3's neighbours)."""

from __future__ import annotations

import os

import pytest

from lantide.workspace.model import Workspace


def _tree(root) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            if name == "lock" or name.startswith("cache.duckdb"):
                continue  # the lock, and Lantide's cache of results (not a user file)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = fh.read()
    return out


@pytest.mark.parametrize(
    "args",
    [
        ("prompt", "{ws}", "--project", "pricing"),
        ("prompt", "{ws}", "--project", "pricing", "--json"),
        ("ledger", "{ws}"),
        ("connection", "list", "{ws}"),
        ("knowledge", "{ws}", "--project", "pricing"),
        ("knowledge", "{ws}", "--layer"),
    ],
)
def test_read_only_commands_beside_the_app_write_nothing(sample_workspace, run_cli, args):
    ws = Workspace.open(sample_workspace)  # the app holds the workspace
    try:
        ws.create_project("pricing")
        before = _tree(sample_workspace)
        result = run_cli(*[a.format(ws=sample_workspace) for a in args])
        assert result.returncode == 0, result.stderr
        assert _tree(sample_workspace) == before
        assert ws.focused_project_name == "q3-churn"  # the app's focus is the app's
    finally:
        ws.close()
