"""The engine runs headless: no module outside lantide/ui imports Qt, and imports only
point downwards through the layers of DESIGN.md section 1."""

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, cli_env

PACKAGE = REPO / "lantide"
# lower number = lower layer; a module may import its own layer or lower ones
RANKS = {
    "workspace": 1,
    "update": 2,
    "query": 2,
    "docs": 3,
    "charts": 3,  # reads tables through the query layer; the agent, cli and ui draw with it
    "knowledge": 4,
    "agent": 5,
    "evaluation": 6,
    "mcp": 6,
    "cli": 7,
    "ui": 8,
}
SHARED = {"errors", "package_data", "templates", "tokens", "__init__", "__main__"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _engine_modules() -> list[str]:
    mods = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).parts
        if rel[0] in ("ui", "_data") or rel[-1] == "__main__.py":
            continue
        mods.append(_module_name(path))
    return mods


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2:
        return 0
    if parts[1] in RANKS:
        return RANKS[parts[1]]
    return 0  # shared root modules


def test_engine_modules_do_not_load_qt():
    modules = _engine_modules()
    assert len(modules) > 10
    code = (
        "import importlib, json, sys\n"
        f"mods = {modules!r}\n"
        "offenders = []\n"
        "for m in mods:\n"
        "    before = 'PySide6' in sys.modules\n"
        "    importlib.import_module(m)\n"
        "    if not before and 'PySide6' in sys.modules:\n"
        "        offenders.append(m)\n"
        "print(json.dumps({'offenders': offenders, 'qt': 'PySide6' in sys.modules}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=str(REPO),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"offenders": [], "qt": False}


def _dynamic_target(call: ast.Call) -> str | None:
    """The module a call to ``importlib.import_module``/``import_module``/``__import__``
    names: its string literal, ``"?"`` when not a literal; None for any other call."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("import_module", "__import__"):
        return None
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return "?"


def imported_modules(
    tree: ast.AST, module: str, is_package: bool = False
) -> list[tuple[str, bool]]:
    """Every module ``module``'s source imports, at any depth (inside functions too), as
    ``(name, dynamic)``: ``import``/``from`` statements (relative ones resolved, ``from
    lantide import query`` as ``lantide.query``) and calls of ``importlib.import_module`` or
    ``__import__`` (dynamic; ``"?"`` when the name is not a literal)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    out: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, False) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            source = ".".join(base + ([node.module] if node.module else []))
            out.append((source, False))
            if source in ("lantide",) or (node.level and not node.module):
                out += [(f"{source}.{a.name}", False) for a in node.names]
        elif isinstance(node, ast.Call):
            target = _dynamic_target(node)
            if target is not None:
                out.append((target, True))
    return out


@functools.cache
def _package_modules() -> tuple[tuple[str, bool, ast.Module], ...]:
    """Every module of the package, parsed once for the tests of this file (read only)."""
    return tuple(
        (_module_name(path), path.name == "__init__.py", ast.parse(path.read_text(), str(path)))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "_data" not in path.parts
    )


def test_import_walker_sees_nested_relative_and_dynamic_imports():
    source = (
        "import importlib\n"
        "from importlib import import_module\n"
        "from lantide import ui\n"
        "from . import sibling\n"
        "from ..query import service\n"
        "def later(name):\n"
        "    from lantide.docs import agent_api\n"
        "    importlib.import_module('lantide.knowledge')\n"
        "    import_module('PySide6.QtCore')\n"
        "    __import__('lantide.ui.app')\n"
        "    return importlib.import_module(name)\n"
    )
    found = imported_modules(ast.parse(source), "lantide.agent.tools.example")
    assert set(found) == {
        ("importlib", False),
        ("lantide", False),
        ("lantide.ui", False),
        ("lantide.agent.tools", False),
        ("lantide.agent.tools.sibling", False),
        ("lantide.agent.query", False),
        ("lantide.docs", False),
        ("lantide.knowledge", True),
        ("PySide6.QtCore", True),
        ("lantide.ui.app", True),
        ("?", True),
    }


def test_no_module_is_loaded_by_name_at_run_time():
    """Every dependency is an import statement the layer check, type checkers and "go to
    definition" can follow: no ``importlib.import_module``/``__import__`` in the package."""
    dynamic = [
        f"{module} loads {target!r} with importlib/__import__"
        for module, is_package, tree in _package_modules()
        for target, is_dynamic in imported_modules(tree, module, is_package)
        if is_dynamic
    ]
    assert dynamic == []


def test_imports_point_downwards_only():
    violations = []
    for module, is_package, tree in _package_modules():
        own = _layer(module)
        for target, _dynamic in imported_modules(tree, module, is_package):
            if target.startswith("PySide6") and not module.startswith("lantide.ui"):
                violations.append(f"{module} imports {target}")
            if target.startswith("lantide.") and _layer(target) > own and own != 0:
                # cli may open the desktop app (lazily, inside a function)
                if module.startswith("lantide.cli") and target.startswith("lantide.ui"):
                    continue
                violations.append(
                    f"{module} (layer {own}) imports {target} (layer {_layer(target)})"
                )
            if (
                own == 0
                and target.startswith("lantide.")
                and _layer(target) > 0
                and module not in ("lantide.__main__",)
                and not module.startswith("lantide.cli")
            ):
                violations.append(f"shared module {module} imports layer module {target}")
    assert violations == []
