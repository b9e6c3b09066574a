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
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lantide.errors import CorruptFileError, LantideError
from lantide.mcp.access import MODES, SCOPE_ALL, check_mode
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
    extra: dict[str, Any] = field(default_factory=dict)  # fields of a newer Lantide, kept

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

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "extra"}
        out.update(self.extra)
        return out

    def public(self) -> dict[str, Any]:
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


def _from_dict(raw: dict[str, Any], path: Path) -> PairedClient:
    known = {f for f in PairedClient.__dataclass_fields__ if f != "extra"}
    try:
        fields = {k: raw[k] for k in known if k in raw}
        client = PairedClient(**fields, extra={k: v for k, v in raw.items() if k not in known})
        if client.mode not in MODES or not isinstance(client.token_hash, str):
            raise ValueError
        return client
    except (TypeError, ValueError, KeyError):
        raise CorruptFileError(
            path,
            f"a paired client entry cannot be read: {raw!r:.120}",
            hint="Fix or remove that entry, then pair the client again.",
        ) from None


class ClientStore:
    """The paired clients file. Every change re-reads it under its lock."""

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else clients_path()
        self._last_written: dict[str, float] = {}
        self._mutex = threading.Lock()
        self._cache: tuple[tuple[int, int, int], list[PairedClient]] | None = None

    def _read(self) -> list[PairedClient]:
        """The clients on disk, as copies the caller may change."""
        return [_copy(c) for c in self._current()]

    def _current(self) -> list[PairedClient]:
        """The clients on disk, shared with the cache (never change them); parsed again
        only when the file changed (every request of every client checks its token
        here, so this is a stat and no copy)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return []
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        cached = self._cache
        if cached is not None and cached[0] == key:
            return cached[1]
        clients = self._parse()
        # a file changed within the clock's granularity could change again unseen
        # (same size, same mtime): such a file is parsed on every read ("racy" files)
        if time.time_ns() - st.st_mtime_ns > RACY_NS:
            self._cache = (key, clients)
        return clients

    def _parse(self) -> list[PairedClient]:
        data = read_json_object(self.path, "paired MCP clients")
        entries = data.get("clients")
        if not isinstance(entries, list):
            raise CorruptFileError(
                self.path, "'clients' is not a list", hint="Fix the file by hand or move it away."
            )
        return [_from_dict(e if isinstance(e, dict) else {}, self.path) for e in entries]

    def _write(self, clients: list[PairedClient]) -> None:
        atomic_write_json(self.path, {"version": 1, "clients": [c.to_dict() for c in clients]})

    def clients(self) -> list[PairedClient]:
        return self._read()

    def get(self, client_id: str) -> PairedClient:
        for client in self._read():
            if client.id == client_id:
                return client
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
                expires_at=_stamp(now + timedelta(days=expires_days)) if expires_days else None,
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
            clients = self._current()
        except LantideError:
            return None, "the paired clients file cannot be read"
        for client in clients:
            if hmac.compare_digest(client.token_hash, digest):
                if client.revoked_at:
                    return None, "token revoked"
                if client.expired():
                    return None, "token expired"
                return _copy(client), "ok"
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
    """``30d``, ``12h``, ``90`` (days) or ``never`` as days (None: never)."""
    value = (text or "30d").strip().lower()
    if value in ("never", "none", "0"):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([dh]?)", value)
    if not match:
        raise LantideError(
            f"cannot read the expiry {text!r}",
            hint="Use a number of days (30d), hours (12h) or never.",
            code="BAD_EXPIRY",
        )
    amount = float(match.group(1))
    return amount / 24 if match.group(2) == "h" else amount
