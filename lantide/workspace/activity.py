"""What outside agents did: ``.lantide/activity/CLIENT.jsonl``, append-only.

One line per call: ``at, client, client_name, mode, transport, tool, arguments, ok,
error`` and ``step_ids`` when a query ran. Arguments are stored with secrets removed:
values under secret-looking keys are replaced, and the client's own token (or anything
shaped like a Lantide token) is cut out of every string, so no token reaches the file.
Long values are cut (the ledger keeps a step's whole SQL).

It lives in the workspace layer because it is a workspace file that both the MCP server
(writing) and the in-app agent's Context Summary (reading who works beside it) use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import NotRequired, TypedDict

from lantide.untrusted import clean_text
from lantide.workspace import layout
from lantide.workspace.atomic import append_jsonl, read_jsonl_tail

REDACTED = "[removed]"
MAX_VALUE_CHARS = 2_000
_SECRET_KEY = re.compile(
    r"(token|secret|password|passwd|api[_-]?key|authori[sz]ation|"
    r"credential|pwd)",
    re.I,
)
_TOKEN_TEXT = re.compile(r"ltd_[A-Za-z0-9_-]{20,100}")
_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]+")


class ActivityEntry(TypedDict):
    """One line of an activity file, as :func:`record_call` writes it."""

    at: str  # ISO 8601, UTC, microseconds
    client: str  # the paired client's id
    client_name: str
    mode: str  # the client's access mode
    transport: str
    tool: str
    arguments: dict[str, object]  # scrubbed
    ok: bool
    error: NotRequired[dict[str, object]]  # error, message, required_mode (those set), scrubbed
    step_ids: NotRequired[list[str]]  # the ledger steps the call recorded
    duration_ms: NotRequired[float]


class ConnectedClient(TypedDict):
    """A client that called lately (:func:`connected_clients`)."""

    client: str
    name: str
    mode: str
    calls: int
    queries: int  # ledger steps its calls recorded
    last_tool: object  # as read from the file (a string when Lantide wrote it)
    minutes_ago: int


def activity_dir(workspace_root: Path) -> Path:
    return layout.activity_dir(Path(workspace_root))


@functools.lru_cache(maxsize=256)  # every call of every client writes here
def activity_path(workspace_root: Path, client_id: str) -> Path:
    return layout.log_path(
        activity_dir(workspace_root), _SAFE_ID.sub("-", client_id)[:60] or "client"
    )


def scrub(value: object, token: str | None = None, key: str | None = None) -> object:
    """``value`` with secrets removed (see the module docstring)."""
    if key is not None and _SECRET_KEY.search(key):
        return REDACTED
    if isinstance(value, dict):
        return scrub_dict(value, token)
    if isinstance(value, (list, tuple)):
        return [scrub(v, token) for v in value]
    if isinstance(value, str):
        if token:
            value = value.replace(token, REDACTED)
        value = _TOKEN_TEXT.sub(REDACTED, value)
        if len(value) > MAX_VALUE_CHARS:
            value = value[:MAX_VALUE_CHARS] + f"…[cut at {MAX_VALUE_CHARS:,}]"
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return scrub(str(value), token)


def scrub_dict(value: Mapping[str, object], token: str | None = None) -> dict[str, object]:
    """:func:`scrub` of an object: keys as text, values under secret-looking keys removed."""
    return {str(k): scrub(v, token, str(k)) for k, v in value.items()}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record_call(
    workspace_root: Path,
    *,
    client_id: str,
    client_name: str,
    mode: str,
    transport: str,
    tool: str,
    arguments: Mapping[str, object],
    ok: bool,
    error: Mapping[str, object] | None = None,
    step_ids: list[str] | None = None,
    duration_ms: float | None = None,
    token: str | None = None,
) -> ActivityEntry:
    entry: ActivityEntry = {
        "at": _now(),
        "client": client_id,
        "client_name": client_name,
        "mode": mode,
        "transport": transport,
        "tool": tool,
        "arguments": scrub_dict(arguments or {}, token),
        "ok": bool(ok),
    }
    if error:
        entry["error"] = scrub_dict(
            {
                k: error.get(k)
                for k in ("error", "message", "required_mode")
                if error.get(k) is not None
            },
            token,
        )
    if step_ids:
        entry["step_ids"] = list(step_ids)
    if duration_ms is not None:
        entry["duration_ms"] = duration_ms
    # a record, not evidence (the ledger is): its fsync waits for a group commit, so the
    # call it records is answered without waiting for the disk
    append_jsonl(activity_path(workspace_root, client_id), entry, defer_fsync=True)
    return entry


def read_activity(workspace_root: Path, limit: int = 500) -> list[dict[str, object]]:
    """The latest ``limit`` calls of every client, oldest first (damaged lines skipped).
    Each file is read from its end, so a long history costs what its tail costs. Lines are
    as the files hold them (only ``tool`` is checked): Lantide writes :class:`ActivityEntry`."""
    folder = activity_dir(workspace_root)
    if not folder.is_dir():
        return []
    entries: list[dict[str, object]] = []
    for path in layout.log_paths(folder):
        for record in read_jsonl_tail(path, limit):
            if isinstance(record, dict) and isinstance(record.get("tool"), str):
                entries.append(
                    {k: clean_text(v) if isinstance(v, str) else v for k, v in record.items()}
                )
    entries.sort(key=lambda e: str(e.get("at") or ""))
    return entries[-limit:] if limit > 0 else entries


def connected_clients(
    workspace_root: Path, within_minutes: float = 60.0, now: datetime | None = None
) -> list[ConnectedClient]:
    """Clients that called within the last ``within_minutes``: name, mode, calls, last
    call (for the Context Summary), most recent first."""
    now = now or datetime.now(UTC)
    seen: dict[str, ConnectedClient] = {}
    last_at: dict[str, datetime] = {}
    for entry in read_activity(workspace_root, limit=200):
        try:
            at = datetime.strptime(str(entry["at"]), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        except (KeyError, ValueError):
            continue
        if (now - at).total_seconds() > within_minutes * 60:
            continue
        key = str(entry.get("client"))
        client = seen.setdefault(
            key,
            {
                "client": key,
                "name": str(entry.get("client_name") or entry.get("client")),
                "mode": str(entry.get("mode")),
                "calls": 0,
                "queries": 0,
                "last_tool": None,
                "minutes_ago": 0,
            },
        )
        client["calls"] += 1
        step_ids = entry.get("step_ids")  # a hand edit may leave anything there
        client["queries"] += len(step_ids) if isinstance(step_ids, list) else 0
        last_at[key] = at
        client["last_tool"] = entry.get("tool")
    out = sorted(seen.values(), key=lambda c: last_at[c["client"]], reverse=True)
    for c in out:
        c["minutes_ago"] = int((now - last_at[c["client"]]).total_seconds() // 60)
    return out
