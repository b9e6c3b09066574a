"""Run benchmark suites: ``python -m benchmarks [SUITE ...] [--quick]``.

Each suite is a module ``benchmarks/bench_<name>.py`` with ``main(argv) -> int`` that
measures Lantide and its baseline side by side in the same run and prints a Markdown
table. Without names, every suite runs. Latest figures live in benchmarks/README.md.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def suites() -> list[str]:
    here = Path(__file__).parent
    return sorted(
        m.name[len("bench_") :]
        for m in pkgutil.iter_modules([str(here)])
        if m.name.startswith("bench_")
    )


def main(argv: list[str]) -> int:
    names = [a for a in argv if not a.startswith("-")]
    flags = [a for a in argv if a.startswith("-")]
    if "-h" in flags or "--help" in flags:
        print(__doc__)
        print("suites:", ", ".join(suites()))
        return 0
    unknown = [n for n in names if n not in suites()]
    if unknown:
        print(
            f"unknown suite(s): {', '.join(unknown)}; known: {', '.join(suites())}", file=sys.stderr
        )
        return 2
    status = 0
    for name in names or suites():
        print(f"\n## {name}\n", flush=True)
        module = importlib.import_module(f"benchmarks.bench_{name}")
        status |= int(module.main(flags) or 0)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
