"""One home for each path and file-name rule of a workspace: lantide.workspace.layout.

The on-disk contract (DESIGN.md section 2) is spelled out literally here, since outside
checks rely on it; the rest of the package must not spell it again."""

import ast

from lantide.workspace import layout
from lantide.workspace.model import Workspace
from tests.conftest import REPO

PACKAGE = REPO / "lantide"
# path parts that only lantide.workspace.layout may join by hand
PATH_PARTS = {
    "sql",
    ".lantide",
    "projects",
    "data",
    "ledger",
    "conversations",
    "trash",
    "lock",
    "locks",
    "workspace.json",
    "session.json",
    "cache.duckdb",
    "charts",
}
FILE_SUFFIXES = (".annotations.json", ".sql", ".jsonl", ".vl.json")


def test_layout_spells_the_contract(tmp_path):
    root = tmp_path / "ws"
    project = root / "projects" / "q3"
    assert layout.sql_tab_path(project, "clean_orders") == root / "projects/q3/sql/clean_orders.sql"
    assert layout.sql_tab_relpath("q3", "clean_orders") == "projects/q3/sql/clean_orders.sql"
    assert layout.sql_tab_project_relpath("clean_orders") == "sql/clean_orders.sql"
    assert layout.chart_path(project, "revenue") == root / "projects/q3/charts/revenue.vl.json"
    assert layout.chart_project_relpath("revenue") == "charts/revenue.vl.json"
    assert layout.sql_tab_of(("projects", "q3", "sql", "clean_orders.sql")) == (
        "q3",
        "clean_orders",
    )
    assert layout.sql_tab_of(("projects", "q3", "plan.md")) is None
    assert layout.sql_tab_of(("projects", "q3", "sql", "notes.txt")) is None
    assert layout.sidecar_path(project / "plan.md") == project / "plan.annotations.json"
    assert (
        layout.sidecar_path(project / "final.report.md")
        == project / "final.report.annotations.json"
    )
    assert layout.log_path(layout.ledger_dir(root), "c1") == root / ".lantide/ledger/c1.jsonl"
    assert (
        layout.log_path(layout.conversations_dir(root), "c1")
        == root / ".lantide/conversations/c1.jsonl"
    )
    assert layout.settings_path(root) == root / ".lantide/workspace.json"
    assert layout.session_path(root) == root / ".lantide/session.json"
    assert layout.cache_db_path(root) == root / ".lantide/cache.duckdb"
    assert layout.lock_path(root) == root / ".lantide/lock"
    assert layout.trash_dir(root) == root / ".lantide/trash"


def test_workspace_and_project_paths_are_the_layout(tmp_path):
    ws = Workspace.create(tmp_path / "ws")
    project = ws.create_project("q3")
    root = ws.root
    assert (
        ws.settings_path,
        ws.session_path,
        ws.cache_db_path,
        ws.ledger_dir,
        ws.conversations_dir,
        ws.projects_dir,
        ws.data_dir,
    ) == (
        root / ".lantide/workspace.json",
        root / ".lantide/session.json",
        root / ".lantide/cache.duckdb",
        root / ".lantide/ledger",
        root / ".lantide/conversations",
        root / "projects",
        root / "data",
    )
    assert project.sql_tab_path("t") == root / "projects/q3/sql/t.sql"
    assert project.sql_dir.is_dir() and ws.ledger_dir.is_dir() and ws.conversations_dir.is_dir()


def _hand_built_paths(tree: ast.AST) -> list[tuple[int, str]]:
    """Paths joined from literal parts: ``x / "sql"``, ``x + ".annotations.json"``,
    f-strings like ``f"projects/{p}/sql/{t}.sql"``, ``glob("*.jsonl")``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
            for side in (node.left, node.right):
                if (
                    isinstance(side, ast.Constant)
                    and isinstance(side.value, str)
                    and (
                        (isinstance(node.op, ast.Div) and side.value.split("/")[0] in PATH_PARTS)
                        or side.value.endswith(FILE_SUFFIXES)
                    )
                ):
                    found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.JoinedStr) and any(
            isinstance(v, ast.FormattedValue) for v in node.values
        ):
            literal = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            if ("sql/" in literal and ".sql" in literal) or any(
                isinstance(v, ast.Constant) and str(v.value).startswith(FILE_SUFFIXES)
                for v in node.values
            ):
                found.append((node.lineno, ast.unparse(node)))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "glob"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).endswith(FILE_SUFFIXES)
        ):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_walker_finds_hand_built_paths():
    source = (
        'a = root / "projects" / p / "sql" / f"{t}.sql"\n'
        'b = f"projects/{p}/sql/{t}.sql"\n'
        'c = path.with_name(path.stem + ".annotations.json")\n'
        'd = ws.root / ".lantide" / "ledger"\n'
        'e = sorted(d.glob("*.jsonl"))\n'
        'f = f"{cid}.jsonl"\n'
        'ok = f"SQL tab {t!r} of {p}"\n'
    )
    lines = sorted({line for line, _ in _hand_built_paths(ast.parse(source))})
    assert lines == [1, 2, 3, 4, 5, 6]


def test_path_rules_have_one_home():
    copies = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_data" in path.parts or path == PACKAGE / "workspace" / "layout.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        copies += [
            f"{path.relative_to(REPO)}:{line}: {text}" for line, text in _hand_built_paths(tree)
        ]
    assert copies == []
