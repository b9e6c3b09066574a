"""Paired MCP clients: ``mcp_clients.json`` in the user config directory.

A client has a name, a kind (Claude Code, Codex, Cursor, other), a scope (one workspace's
folder, or ``all``), an access mode and an expiry. Pairing makes a random token: it is
shown once, kept in the system keyring (so the app can show the configuration again), and
only its SHA-256 hash is written to the file. A request is let in only when its token's
hash matches a client that is neither expired nor revoked (:func:`verify`). Revoking keeps
the entry (the activity log still names the client) and deletes the token from the keyring.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import hmac
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

from lantide.errors import CorruptFileError, LantideError
from lantide.mcp.access import MODES, SCOPE_ALL, check_mode
from lantide.mcp.redact import relative_paths
from lantide.workspace.atomic import atomic_write_json
from lantide.workspace.filelock import file_lock
from lantide.workspace.jsonfile import read_json_object

FILE_NAME = "mcp_clients.json"
TOKEN_PREFIX = "ltd_"
KEYRING_SERVICE = "lantide"
CLIENT_KINDS = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "cursor": "Cursor",
    "other": "Other",
}
MIN_EXPIRY_HOURS = 1  # a pairing's shortest life (0d or 0.0 is no "never")
MAX_EXPIRY_DAYS = 365  # and its longest, short of "never" (README: Agent Integration)
LAST_USED_EVERY = 60.0  # seconds between writes of a client's last use
RACY_NS = 2_000_000_000  # a clients file younger than this is not cached
_TOKEN_SHAPE = re.compile(r"^ltd_[A-Za-z0-9_-]{20,100}$")


class ClientNotFoundError(LantideError):
    code = "MCP_CLIENT_NOT_FOUND"


@dataclass
class PairedClient:
    id: str
    name: str
    kind: str
    scope: str  # a workspace folder (resolved), or "all"
    mode: str
    created_at: str
    expires_at: str | None  # None: never
    token_hash: str
    revoked_at: str | None = None
    last_used_at: str | None = None
    extra: dict[str, object] = field(default_factory=dict)  # fields of a newer Lantide, kept

    @property
    def all_workspaces(self) -> bool:
        return self.scope == SCOPE_ALL

    def expired(self, now: datetime | None = None) -> bool:
        if not self.expires_at:
            return False
        return (now or datetime.now(UTC)) >= _parse_time(self.expires_at)

    @property
    def status(self) -> str:
        return "revoked" if self.revoked_at else "expired" if self.expired() else "active"

    def allows_workspace(self, root: Path | str) -> bool:
        return self.all_workspaces or Path(self.scope) == Path(root).resolve()

    def to_dict(self) -> dict[str, object]:
        """The file's entry: the fields above, then the unknown ones as they were read."""
        out: dict[str, object] = {k: v for k, v in asdict(self).items() if k != "extra"}
        out.update(self.extra)
        return out

    def public(self) -> dict[str, object]:
        """What listings show: everything but the hash."""
        out = {k: v for k, v in self.to_dict().items() if k != "token_hash"}
        out["status"] = self.status
        return out


@dataclass(frozen=True)
class Pairing:
    client: PairedClient
    token: str
    in_keyring: bool


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=256)  # every request checks its client's expiry
def _parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def clients_path() -> Path:
    from lantide.workspace.paths import user_config_dir

    return user_config_dir() / FILE_NAME


def _copy(client: PairedClient) -> PairedClient:
    out = copy.copy(client)
    out.extra = copy.deepcopy(client.extra)
    return out


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:30] or "client"


REQUIRED_TEXT = ("id", "name", "kind", "scope", "mode", "created_at", "token_hash")
OPTIONAL_STAMPS = ("expires_at", "revoked_at", "last_used_at")
FIX_HINT = "Fix that field in a text editor, or remove the entry and pair the client again."


class EntryProblemDict(TypedDict):
    """:meth:`EntryProblem.to_dict` (``lantide mcp list --json``, the settings page)."""

    file: str
    entry: int  # from 1
    client: str | None
    field: str
    message: str
    hint: str


@dataclass(frozen=True)
class EntryProblem:
    """A client entry of the file that cannot be read: its position, what the file says
    it is (``id`` when it has a readable one), the field at fault and why. The entry is
    kept in the file as it is; every other client keeps working."""

    path: Path
    index: int
    client_id: str | None
    field: str
    problem: str
    raw: Any

    @property
    def message(self) -> str:
        who = f"client entry {self.index + 1}"
        if self.client_id:
            who = f"client {self.client_id[:60]!r}"
        return f"{self.path}: {who}: {self.field!r} {self.problem}"

    def to_dict(self) -> EntryProblemDict:
        return {
            "file": str(self.path),
            "entry": self.index + 1,
            "client": self.client_id,
            "field": self.field,
            "message": self.message,
            "hint": FIX_HINT,
        }


def _kind_of(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "text",
        list: "a list",
    }.get(type(value), "an object")


def _field_problem(raw: Mapping[str, object]) -> tuple[str, str] | None:
    """(field, why) of the first field of a client entry that cannot be used, else None."""
    text: dict[str, str] = {}
    for name in REQUIRED_TEXT:
        if name not in raw:
            return name, "is missing"
        value = raw[name]
        if not isinstance(value, str) or not value.strip():
            return name, f"is {_kind_of(value)} {_preview(value)}, not a non-empty text"
        text[name] = value
    if text["mode"] not in MODES:
        return "mode", f"is {text['mode'][:40]!r}, not one of {', '.join(MODES)}"
    if not re.fullmatch(r"[0-9a-f]{64}", text["token_hash"]):
        return "token_hash", "is not a SHA-256 hash (64 hexadecimal digits)"
    for name in OPTIONAL_STAMPS:
        value = raw.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            return name, f"is {_kind_of(value)} {_preview(value)}, not a time or null"
        try:
            _parse_time(value)
        except ValueError:
            return name, f"is {value[:40]!r}, not a time like 2026-12-31T23:59:00Z"
    return None


def _preview(value: object) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _from_dict(raw: Any, path: Path, index: int) -> PairedClient | EntryProblem:
    if not isinstance(raw, dict):
        return EntryProblem(path, index, None, "(entry)", f"is {_kind_of(raw)}, not an object", raw)
    found = _field_problem(raw)
    if found is not None:
        client_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        return EntryProblem(path, index, client_id, found[0], found[1], raw)
    known = {f for f in PairedClient.__dataclass_fields__ if f != "extra"}
    fields = {k: raw[k] for k in known if k in raw}
    return PairedClient(**fields, extra={k: v for k, v in raw.items() if k not in known})


class ClientStore:
    """The paired clients file. Every change re-reads it under its lock."""

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else clients_path()
        self._last_written: dict[str, float] = {}
        self._mutex = threading.Lock()
        self._cache: tuple[tuple[int, int, int], list[PairedClient | EntryProblem]] | None = None

    def _read(self) -> list[PairedClient]:
        """The clients on disk, as copies the caller may change."""
        return [_copy(c) for c in self._current()]

    def _current(self) -> list[PairedClient]:
        """The readable clients on disk, shared with the cache (never change them)."""
        return [e for e in self._entries() if isinstance(e, PairedClient)]

    def _entries(self) -> list[PairedClient | EntryProblem]:
        """Every entry of the file, readable or not, parsed again only when the file
        changed (every request of every client checks its token here, so this is a stat
        and no copy)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return []
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        cached = self._cache
        if cached is not None and cached[0] == key:
            return cached[1]
        entries = self._parse()
        # a file changed within the clock's granularity could change again unseen
        # (same size, same mtime): such a file is parsed on every read ("racy" files)
        if time.time_ns() - st.st_mtime_ns > RACY_NS:
            self._cache = (key, entries)
        return entries

    def _parse(self) -> list[PairedClient | EntryProblem]:
        data = read_json_object(self.path, "paired MCP clients")
        entries = data.get("clients", [])
        if not isinstance(entries, list):
            raise CorruptFileError(
                self.path,
                f"'clients' is {_kind_of(entries)}, not a list of clients",
                hint="Fix the file in a text editor, or move it aside and pair the clients "
                "again (lantide mcp pair).",
            )
        return [_from_dict(entry, self.path, n) for n, entry in enumerate(entries)]

    def problems(self) -> list[EntryProblem]:
        """The entries of the file that cannot be read (kept in the file as they are)."""
        return [e for e in self._entries() if isinstance(e, EntryProblem)]

    def _write(self, clients: list[PairedClient]) -> None:
        """Write ``clients`` (the readable ones, in their order, plus any new one at the
        end); an unreadable entry stays in the file as it was, at its place."""
        out: list[Any] = [c.to_dict() for c in clients]
        for problem in self.problems():
            out.insert(min(problem.index, len(out)), problem.raw)
        atomic_write_json(self.path, {"version": 1, "clients": out})

    def clients(self) -> list[PairedClient]:
        return self._read()

    def get(self, client_id: str) -> PairedClient:
        for client in self._read():
            if client.id == client_id:
                return client
        for problem in self.problems():
            if problem.client_id == client_id:
                raise CorruptFileError(self.path, problem.message, hint=FIX_HINT)
        known = ", ".join(c.id for c in self._read()) or "none yet"
        raise ClientNotFoundError(
            f"no paired MCP client {client_id!r}",
            hint=f"Paired clients: {known} (lantide mcp list).",
        )

    def pair(
        self,
        name: str,
        *,
        kind: str = "other",
        scope: str = SCOPE_ALL,
        mode: str = "observe",
        expires_days: float | None = 30,
    ) -> Pairing:
        kind = kind if kind in CLIENT_KINDS else "other"
        mode = check_mode(mode)
        expires_days = check_expiry_days(expires_days)
        name = " ".join((name or CLIENT_KINDS[kind]).split())[:60]
        if scope != SCOPE_ALL:
            from lantide.workspace.model import Workspace

            root = Path(scope).expanduser().resolve()
            if not Workspace.is_workspace(root):
                raise LantideError(
                    f"{root} is not a Lantide workspace",
                    hint="Pass a workspace folder, or --scope all.",
                    code="NOT_A_WORKSPACE",
                )
            scope = str(root)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = _now()
        with file_lock(self.path):
            clients = self._read()
            taken = {c.id for c in clients}
            client_id = _slug(name)
            while client_id in taken:
                client_id = f"{_slug(name)}-{secrets.token_hex(2)}"
            client = PairedClient(
                id=client_id,
                name=name,
                kind=kind,
                scope=scope,
                mode=mode,
                created_at=_stamp(now),
                expires_at=(
                    _stamp(now + timedelta(days=expires_days)) if expires_days is not None else None
                ),
                token_hash=hash_token(token),
            )
            self._write(clients + [client])
        return Pairing(client, token, store_token(client.id, token))

    def revoke(self, client_id: str) -> PairedClient:
        with file_lock(self.path):
            clients = self._read()
            for client in clients:
                if client.id == client_id:
                    if not client.revoked_at:
                        client.revoked_at = _stamp(_now())
                        self._write(clients)
                    forget_token(client_id)
                    return client
        return self.get(client_id)  # raises, naming the known ones

    def verify(self, token: str | None) -> tuple[PairedClient | None, str]:
        """The client of ``token`` if it may connect now, else None and why not."""
        if not token:
            return None, "no token"
        if not _TOKEN_SHAPE.match(token):
            return None, "not a Lantide token"
        digest = hash_token(token)
        try:
            entries = self._entries()
        except LantideError as exc:  # the reason goes to the client: no home folder in it
            return None, relative_paths(
                f"the paired clients file cannot be read ({exc.message})", []
            )
        for entry in entries:
            if isinstance(entry, EntryProblem):
                stored = entry.raw.get("token_hash") if isinstance(entry.raw, dict) else None
                # compare_digest refuses text that is not ASCII: such a hash matches nothing
                if (
                    isinstance(stored, str)
                    and stored.isascii()
                    and hmac.compare_digest(stored, digest)
                ):
                    return None, relative_paths(
                        f"this client's entry cannot be read: {entry.message}", []
                    )
            elif hmac.compare_digest(entry.token_hash, digest):
                if entry.revoked_at:
                    return None, "token revoked"
                if entry.expired():
                    return None, "token expired"
                return _copy(entry), "ok"
        return None, "unknown token"

    def touch(self, client_id: str) -> None:
        """Record a use (written at most once a minute per client)."""
        with self._mutex:
            last = self._last_written.get(client_id, 0.0)
            if time.monotonic() - last < LAST_USED_EVERY:
                return
            self._last_written[client_id] = time.monotonic()
        try:
            with file_lock(self.path, timeout=2.0):
                clients = self._read()
                for client in clients:
                    if client.id == client_id:
                        client.last_used_at = _stamp(_now())
                        self._write(clients)
        except LantideError:
            pass  # a busy or broken file must not fail the client's call


# -- the keyring ---------------------------------------------------------------------


def _key_name(client_id: str) -> str:
    return f"mcp:{client_id}"


def store_token(client_id: str, token: str) -> bool:
    """Keep the token in the keyring; False where there is none (it was shown once)."""
    from lantide.workspace.secrets import _backend, keyring_available

    backend = _backend() if keyring_available() else None
    if backend is None:
        return False
    try:
        backend.set_password(KEYRING_SERVICE, _key_name(client_id), token)
        return True
    except Exception:
        return False


def stored_token(client_id: str) -> str | None:
    from lantide.workspace.secrets import _backend, keyring_available

    backend = _backend() if keyring_available() else None
    if backend is None:
        return None
    try:
        token = backend.get_password(KEYRING_SERVICE, _key_name(client_id))
    except Exception:
        return None
    return token if isinstance(token, str) else None


def forget_token(client_id: str) -> None:
    from lantide.workspace.secrets import _backend, keyring_available

    backend = _backend() if keyring_available() else None
    if backend is None:
        return
    with contextlib.suppress(Exception):  # nothing stored, or no keyring: nothing to forget
        backend.delete_password(KEYRING_SERVICE, _key_name(client_id))


def parse_expiry(text: str | None) -> float | None:
    """``30d``, ``12h``, ``90`` (days) or ``never`` as days (None: never). A duration must
    lie between :data:`MIN_EXPIRY_HOURS` and :data:`MAX_EXPIRY_DAYS`: ``0d`` or ``0.0``
    is not "never" (that is written ``never``), and a token does not live for ages."""
    value = (text or "30d").strip().lower()
    if value in ("never", "none"):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([dh]?)", value)
    if not match:
        raise LantideError(
            f"cannot read the expiry {text!r}",
            hint=f"Use a number of days (30d, at most {MAX_EXPIRY_DAYS}d), hours (12h) or never.",
            code="BAD_EXPIRY",
        )
    amount = float(match.group(1))
    return check_expiry_days(amount / 24 if match.group(2) == "h" else amount, text)


def check_expiry_days(days: float | None, given: object = None) -> float | None:
    """``days`` when a token may live that long (None: never), else a clear refusal."""
    if days is None:
        return None
    shown = str(given)[:40] if given is not None else f"{days:g} days"
    if not days * 24 >= MIN_EXPIRY_HOURS:  # also NaN
        raise LantideError(
            f"the expiry {shown!r} is too short: a token must live at least "
            f"{MIN_EXPIRY_HOURS} hour",
            hint=f"Give a duration from {MIN_EXPIRY_HOURS}h to {MAX_EXPIRY_DAYS}d, "
            "or never for a token without expiry.",
            code="BAD_EXPIRY",
        )
    if days > MAX_EXPIRY_DAYS:  # also infinity (digits past a float's range)
        raise LantideError(
            f"the expiry {shown!r} is too long: a token lives at most {MAX_EXPIRY_DAYS} days",
            hint=f"Give a duration up to {MAX_EXPIRY_DAYS}d and pair the client again when "
            "it expires, or never for a token without expiry.",
            code="BAD_EXPIRY",
        )
    return days
