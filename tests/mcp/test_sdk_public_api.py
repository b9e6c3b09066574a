"""Lantide serves MCP through the SDK's public API only: every name it takes from ``mcp``
or ``mcp_types`` is one those packages export at their top (``mcp``, ``mcp.server``,
``mcp_types``), so an SDK upgrade cannot break a call silently by changing a module the
SDK never promised to keep."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import lantide

PUBLIC_MODULES = ("mcp", "mcp.server", "mcp_types")
# the item type of the streams ``Server.run`` reads and writes (its public signature): a
# transport placed between the SDK's stdio reader and the server sends it
TRANSPORT_SEAM = {("mcp.shared.message", "SessionMessage")}


def _sdk_imports() -> list[tuple[str, str, str]]:
    """(file, module, name) of every import of the SDK in the package."""
    found: list[tuple[str, str, str]] = []
    root = Path(lantide.__file__).parent
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.split(".")[0] in ("mcp", "mcp_types"):
                    found += [(path.name, node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in ("mcp", "mcp_types"):
                        found.append((path.name, alias.name, ""))
    return found


def test_the_package_imports_only_what_the_sdk_exports_at_its_top():
    imports = _sdk_imports()
    assert imports, "the MCP server imports the SDK somewhere"
    for file, module, name in imports:
        if (module, name) in TRANSPORT_SEAM:
            continue
        assert module in PUBLIC_MODULES, f"{file} imports the SDK's module {module}"
        if name:
            assert not name.startswith("_"), f"{file} imports {module}.{name}"
            exported = getattr(importlib.import_module(module), "__all__", None)
            if exported is not None and module != "mcp_types":
                assert name in exported, f"{file}: {module} does not export {name}"
