"""The engine runs headless: no module outside lantide/ui imports Qt, and imports only
point downwards through the layers of DESIGN.md section 1."""

import ast
import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, cli_env

PACKAGE = REPO / "lantide"
# lower number = lower layer; a module may import its own layer or lower ones
RANKS = {"workspace": 1, "query": 2, "docs": 3, "knowledge": 4, "agent": 5, "mcp": 6, "cli": 7,
         "ui": 8}
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
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=cli_env(), cwd=str(REPO), timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"offenders": [], "qt": False}


def test_imports_point_downwards_only():
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_data" in path.parts:
            continue
        module = _module_name(path)
        own = _layer(module)
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if target.startswith("PySide6") and not module.startswith("lantide.ui"):
                    violations.append(f"{module} imports {target}")
                if target.startswith("lantide.") and _layer(target) > own and own != 0:
                    # cli may open the desktop app (lazily, inside a function)
                    if module.startswith("lantide.cli") and target.startswith("lantide.ui"):
                        continue
                    violations.append(f"{module} (layer {own}) imports {target} (layer {_layer(target)})")
                if own == 0 and target.startswith("lantide.") and _layer(target) > 0 \
                        and module not in ("lantide.__main__",) and not module.startswith("lantide.cli"):
                    violations.append(f"shared module {module} imports layer module {target}")
    assert violations == []
