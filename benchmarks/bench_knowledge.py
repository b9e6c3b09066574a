"""Knowledge layer: what the agent pays per iteration, with and without the mtime cache.

The agent asks for the knowledge layer on every ReAct iteration. Lantide re-reads and
re-renders only when a file's modification time changes; the baseline is the naive way,
reading, parsing and rendering the files on every call. Measured side by side in one run:

- ``layer, unchanged``: the steady state (files unchanged between iterations);
- ``layer, after an edit``: the first call after the analyst saved the file;
- ``expand``: one ``expand_knowledge_catalog`` call on the catalog file;
- ``approve``: one approval (parse, edit, verify, atomic write).

``python -m benchmarks knowledge [--quick]``
"""

from __future__ import annotations

import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from lantide.knowledge import KnowledgeBase
from lantide.knowledge.layer import build_layer
from lantide.knowledge.parser import parse_knowledge
from lantide.knowledge.store import document_cache


def _flat_project() -> str:
    rules = "".join(
        f"- Rule {i}: revenue excludes refunds of type {i} and test accounts.\n" for i in range(30)
    )
    info = "".join(f"- Column t{i}.c{i} holds ISO codes; empty means unknown.\n" for i in range(25))
    return f"# Project knowledge\n\n## Rules\n{rules}\n## Info\n{info}"


def _catalog_project(entries: int) -> str:
    out = ["# Project knowledge\n\n## Rules\n"]
    for g in range(entries // 20):
        out.append(f"\n### Topic {g}\n")
        out.extend(
            f"- Topic {g} rule {i}: " + "a definition the analyst wrote " * 3 + "\n"
            for i in range(20)
        )
    out.append("\n## Info\n- orders.region holds ISO 3166-2 codes.\n")
    return "".join(out)


def _user() -> str:
    return "# User knowledge\n\n## Rules\n" + "".join(
        f"- Preference {i}: dates in ISO 8601, amounts in EUR.\n" for i in range(20)
    )


def _time(fn, repeat: int) -> float:
    """Median milliseconds of ``fn()`` over ``repeat`` runs."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def _naive_layer(user: Path, project: Path):
    docs = [
        parse_knowledge(p.read_text(encoding="utf-8"), scope=s, path=p)
        for p, s in ((user, "user"), (project, "project"))
    ]
    return build_layer(docs, 3000, project_name="bench")


def _case(name: str, text: str, root: Path, repeat: int) -> list[tuple[str, float, float]]:
    user, project = root / f"{name}-user.md", root / f"{name}-project.md"
    user.write_text(_user(), encoding="utf-8")
    project.write_text(text, encoding="utf-8")
    kb = KnowledgeBase(user, project, project_name="bench")
    kb.layer()
    assert kb.layer().text == _naive_layer(user, project).text
    rows = [
        (
            f"{name}: layer, unchanged",
            _time(kb.layer, repeat),
            _time(lambda: _naive_layer(user, project), repeat),
        )
    ]

    def edited():
        os.utime(project, ns=(time.time_ns(), time.time_ns()))
        return kb.layer()

    rows.append(
        (
            f"{name}: layer, after an edit",
            _time(edited, max(5, repeat // 10)),
            _time(lambda: _naive_layer(user, project), max(5, repeat // 10)),
        )
    )
    heading = kb.documents()[1].entries[0].group_name
    rows.append(
        (
            f"{name}: expand({heading!r})",
            _time(lambda: kb.expand(heading), repeat // 4),
            _time(lambda: _naive_expand(user, project, heading), repeat // 4),
        )
    )
    return rows


def _naive_expand(user: Path, project: Path, heading: str):
    from lantide.knowledge.layer import expand

    docs = [
        parse_knowledge(p.read_text(encoding="utf-8"), scope=s, path=p)
        for p, s in ((user, "user"), (project, "project"))
    ]
    return expand(docs, heading)


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    repeat = 40 if quick else 200
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        document_cache.clear()
        flat = _flat_project()
        rows = _case(f"flat ({len(flat):,} chars)", flat, root, repeat)
        big = _catalog_project(400 if quick else 1000)
        rows += _case(f"catalog ({len(big):,} chars)", big, root, repeat)
        path = root / "approve.md"
        path.write_text(
            big.replace("- Topic 0 rule 0:", "- [queued] Topic 0 rule 0:"), encoding="utf-8"
        )
        kb = KnowledgeBase(root / "none.md", path)
        t0 = time.perf_counter()
        kb.approve(1)
        approve_ms = (time.perf_counter() - t0) * 1000
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.system()}"
    )
    print()
    print("| case | Lantide ms | naive ms (re-read every call) | speed-up |")
    print("|---|---:|---:|---:|")
    for name, ours, naive in rows:
        print(f"| {name} | {ours:.3f} | {naive:.3f} | {naive / ours:.1f}x |")
    print(
        f"\napprove one entry in the catalog file (parse, edit, verify, atomic write): "
        f"{approve_ms:.1f} ms"
    )
    return 0
