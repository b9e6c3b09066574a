"""The weekly check on start: when it is due, and when it last ran.

The time of the last check lives in ``update-check.json`` in the user's config directory
(platformdirs), never in a workspace. It is Lantide's own state, one timestamp: a file
that cannot be read counts as "never checked" and is replaced at the next check.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lantide.workspace import paths
from lantide.workspace.atomic import atomic_write_json

CHECK_INTERVAL = timedelta(days=7)


def state_path() -> Path:
    return paths.user_config_dir() / "update-check.json"


def last_check(path: Path | None = None) -> datetime | None:
    path = path or state_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        when = datetime.fromisoformat(data["last_check"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def record_check(now: datetime | None = None, path: Path | None = None) -> None:
    now = now or datetime.now(UTC)
    atomic_write_json(path or state_path(), {"version": 1, "last_check": now.isoformat()})


def is_check_due(
    check_weekly: bool, feed_url: str, now: datetime | None = None, path: Path | None = None
) -> bool:
    """True when the weekly check is on, a feed is set, and the last check is a week old
    (or never happened, or lies in the future: the clock was set back)."""
    if not check_weekly or not feed_url:
        return False
    now = now or datetime.now(UTC)
    last = last_check(path)
    return last is None or last > now + timedelta(days=1) or now - last >= CHECK_INTERVAL
