"""Fixtures of the adversarial tests, shared from the query, agent and update tests, and
the suite's figures at the end of a run (issue 28): how many tests each family tried and how
many failed, a family being a file of this folder (``test_deep_sql.py``: ``deep_sql``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.agent.conftest import open_ws, scripted, session_factory  # noqa: F401
from tests.query.conftest import open_service  # noqa: F401
from tests.update.conftest import feed_server, release  # noqa: F401

HERE = Path(__file__).parent.name  # "security"


def _family(nodeid: str) -> str | None:
    path = nodeid.split("::", 1)[0].replace("\\", "/")
    parts = path.split("/")
    if len(parts) < 2 or parts[-2] != HERE or not parts[-1].startswith("test_"):
        return None
    return parts[-1].removeprefix("test_").removesuffix(".py")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    tried: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for outcome in ("passed", "failed", "error", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            family = _family(getattr(report, "nodeid", ""))
            if family is None or (report.when != "call" and outcome != "error"):
                continue
            tried[family] += 1
            if outcome in ("failed", "error", "xpassed"):
                failed[family] += 1
    if not tried:
        return
    width = max(len(f) for f in tried)
    write = terminalreporter.write_line
    terminalreporter.section("security suite: tried / failed per family")
    for family in sorted(tried):
        write(f"  {family:<{width}}  {tried[family]:>5} tried  {failed[family]:>4} failed")
    total, bad = sum(tried.values()), sum(failed.values())
    write(f"  {'all':<{width}}  {total:>5} tried  {bad:>4} failed")
