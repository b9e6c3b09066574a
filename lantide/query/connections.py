"""Managing a workspace's external connections: list, add or replace, remove, test.

The command line (``lantide connection``) and the desktop app's Settings > Connections
both call these. An entry lives in ``.lantide/workspace.json`` ``"connections"`` without
its password; the password goes to the system keyring (or, where there is none, the
analyst sets ``LANTIDE_PASSWORD_<NAME>`` in the environment). Other secrets written in the
connection string (``AccessToken=``, a URL's ``user:pass@``, ...) move to the keyring too
(:mod:`lantide.query.connection_secrets`); a workspace.json written before that is migrated
by :func:`migrate_connection_secrets`. See :mod:`lantide.query.external` for how a
connection is used.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from lantide.query.connection_secrets import (
    delete_connection_password,
    delete_connection_secret,
    env_var,
    get_connection_password,
    get_connection_secret,
    is_password_key,
    secret_env_var,
    set_connection_password,
    set_connection_secret,
    split_secrets,
)
from lantide.query.errors import ConnectionProblem
from lantide.query.names import same_name

if TYPE_CHECKING:
    from lantide.workspace.model import Workspace


class ConnectionEntry(TypedDict):
    """A connection as ``workspace.json`` keeps it (never a secret)."""

    name: str
    type: Literal["odbc"]
    dialect: str
    connection_string: str  # without its secrets
    secret_keys: NotRequired[list[str]]  # the connection string's secrets in the keyring
    user: NotRequired[str]


class ConnectionRow(TypedDict):
    """A connection as :func:`list_connections` shows it."""

    name: str
    dialect: str
    connection_string: str  # the secrets taken out
    user: str | None
    password_env: str  # LANTIDE_PASSWORD_<NAME>
    secret_keys: list[str]
    secrets_in_file: list[str]  # keys an old workspace.json still holds in plain text
    password: Literal["keyring", "environment", "none"]


class ConnectionTest(TypedDict):
    """:func:`test_connection`'s answer."""

    name: str
    ok: bool
    tables: int  # how many the connection lists
    sample: list[str]  # the first five, qualified
    seconds: float


# The sqlglot dialects an ODBC source is most often written in; any sqlglot dialect works.
COMMON_DIALECTS = (
    "tsql",
    "postgres",
    "mysql",
    "oracle",
    "snowflake",
    "redshift",
    "databricks",
    "bigquery",
    "duckdb",
    "sqlite",
    "trino",
)


def check_dialect(dialect: str) -> str:
    """``dialect`` as sqlglot knows it, or a clear error listing the common ones."""
    from sqlglot.dialects.dialect import Dialect

    name = (dialect or "").strip().lower()
    try:
        Dialect.get_or_raise(name)
    except ValueError:
        raise ConnectionProblem(
            f"unknown SQL dialect {dialect!r}",
            code="CONNECTION_INVALID",
            hint=f"Use the dialect the database speaks, e.g. {', '.join(COMMON_DIALECTS)} "
            "(tsql for SQL Server).",
        ) from None
    return name


def odbc_drivers() -> list[str]:
    """The ODBC drivers registered on this machine (empty when unixODBC is missing)."""
    try:
        import pyodbc

        return sorted(pyodbc.drivers())
    except Exception:
        return []


def list_connections(workspace: Workspace) -> list[ConnectionRow]:
    """The workspace's connections, each with ``password`` saying where its password is:
    ``keyring``, ``environment`` (``LANTIDE_PASSWORD_<NAME>``) or ``none``."""
    out: list[ConnectionRow] = []
    for entry in workspace.connections:
        if not isinstance(entry, dict) or not entry.get("name"):
            continue
        name = str(entry["name"])
        clean, in_file = split_secrets(str(entry.get("connection_string", "")))
        out.append(
            {
                "name": name,
                "dialect": entry.get("dialect") or "postgres",
                "connection_string": clean,
                "user": entry.get("user"),
                "password_env": env_var(name),
                "secret_keys": list(entry.get("secret_keys") or []),
                # secrets an old workspace.json still holds in plain text (keys only)
                "secrets_in_file": sorted(in_file),
                "password": "environment"
                if _env_password(name)
                else "keyring"
                if get_connection_password(name)
                else "none",
            }
        )
    return out


def _env_password(name: str) -> bool:
    return bool(os.environ.get(env_var(name)))


def add_connection(
    workspace: Workspace,
    name: str,
    connection_string: str,
    *,
    dialect: str = "postgres",
    user: str | None = None,
    password: str | None = None,
    replace: bool = True,
) -> ConnectionEntry:
    """Add a connection (or replace the one of that name, when ``replace``) in
    workspace.json; ``password`` goes to the keyring, never to a file. A new entry without
    a password keeps the one already stored for that name."""
    from lantide.query.external import ConnectionConfig

    name = (name or "").strip()
    existing = _find(workspace, name)
    if existing is not None and not replace:
        raise _exists(existing)
    config = ConnectionConfig.from_dict(
        {
            "name": name,
            "connection_string": connection_string,
            "dialect": check_dialect(dialect),
            "user": user,
        }
    )
    # secrets written in the connection string go to the keyring before anything is saved
    clean, secret_keys = move_secrets_to_keyring(config.name, connection_string.strip())
    if not secret_keys and existing is not None and same_name(str(existing["name"]), config.name):
        secret_keys = [k for k in existing.get("secret_keys") or [] if isinstance(k, str)]
    entry: ConnectionEntry = {
        "name": config.name,
        "type": "odbc",
        "dialect": config.dialect,
        "connection_string": clean,
    }
    if secret_keys:
        entry["secret_keys"] = secret_keys
    if user:
        entry["user"] = user
    if password:
        set_connection_password(config.name, password)

    def change(settings: dict[str, Any]) -> None:  # on the file as it is now, not a stale copy
        others = [
            c
            for c in settings.get("connections", [])
            if not (isinstance(c, dict) and same_name(str(c.get("name", "")), config.name))
        ]
        settings["connections"] = others + [entry]

    _save(workspace, change)
    return entry


def move_secrets_to_keyring(name: str, connection_string: str) -> tuple[str, list[str]]:
    """Take the secrets out of ``connection_string`` into the keyring: the password as the
    connection's password, the others by key. Returns the clean string and the keys to list
    in the entry. Without a keyring: ``NO_KEYRING``, naming the environment variable."""
    clean, found = split_secrets(connection_string)
    keys = []
    for key, value in found.items():
        if is_password_key(key):
            set_connection_password(name, value)
        else:
            set_connection_secret(name, key, value)
            keys.append(key)
    return clean, keys


def migrate_connection_secrets(workspace: Workspace) -> list[str]:
    """Move secrets an existing workspace.json holds in plain text to the keyring and
    rewrite the file without them. Returns what could not be moved (no keyring), to report;
    such an entry is left as it is (the analyst's file is not changed behind their back,
    and the connection keeps working from it)."""
    reports: list[str] = []

    def apply(settings: dict[str, Any]) -> bool:
        found, changed = _migrate_in(settings)
        reports.extend(found)
        return changed  # nothing moved: the file is not written at all

    workspace.update_settings(apply)
    return reports


def _migrate_in(settings: dict[str, Any]) -> tuple[list[str], bool]:
    """Move the secrets of ``settings``' connections to the keyring, in place: (what could
    not move, whether anything did)."""
    reports, changed = [], False
    connections = settings.get("connections")
    for entry in connections if isinstance(connections, list) else []:
        if not isinstance(entry, dict) or not entry.get("name"):
            continue
        name, text = str(entry["name"]), entry.get("connection_string")
        if not isinstance(text, str) or not split_secrets(text)[1]:
            continue
        try:
            clean, keys = move_secrets_to_keyring(name, text)
        except ConnectionProblem:
            found = sorted(split_secrets(text)[1])
            where = ", ".join(
                env_var(name) if is_password_key(k) else secret_env_var(name, k) for k in found
            )
            reports.append(
                f"connection {name!r}: .lantide/workspace.json holds {', '.join(found)} in "
                f"plain text and no keyring is available to move it to; set {where} in the "
                "environment and remove it from the file"
            )
            continue
        entry["connection_string"] = clean
        old = [k for k in entry.get("secret_keys") or [] if isinstance(k, str)]
        entry["secret_keys"] = old + [k for k in keys if k not in old]
        if not entry["secret_keys"]:
            del entry["secret_keys"]
        changed = True
    return reports, changed


def _save(workspace: Workspace, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply ``change`` to workspace.json as it is on disk now, under its lock
    (:meth:`Workspace.update_settings`), moving secrets still in the file to the keyring
    first; one that cannot move is kept as the analyst wrote it (and reported by list)."""

    def apply(settings: dict[str, Any]) -> None:
        change(settings)
        _migrate_in(settings)

    workspace.update_settings(apply)


def edit_connection(
    workspace: Workspace,
    previous: str,
    name: str,
    connection_string: str,
    *,
    dialect: str = "postgres",
    user: str | None = None,
    password: str | None = None,
) -> ConnectionEntry:
    """Change the connection now named ``previous``; a new ``name`` renames it, and its
    stored password follows unless a new one is given."""
    old = _find(workspace, previous)
    if old is None:
        raise _unknown(workspace, previous)
    old_name, name = str(old["name"]), (name or "").strip()
    if old_name == name:
        return add_connection(
            workspace, name, connection_string, dialect=dialect, user=user, password=password
        )
    respelled = same_name(old_name, name)  # "shop" -> "Shop": the same entry, new spelling
    taken = None if respelled else _find(workspace, name)
    if taken is not None:
        raise _exists(taken)
    # a password from the keyring moves to the new name; one from the environment stays
    # where the analyst put it (LANTIDE_PASSWORD_<NEW NAME> is theirs to set)
    kept = password or (None if _env_password(old_name) else get_connection_password(old_name))
    if kept:
        set_connection_password(name, kept)  # first: without a keyring nothing changes
    try:
        entry = add_connection(
            workspace, name, connection_string, dialect=dialect, user=user, replace=respelled
        )
    except BaseException:
        if kept:
            delete_connection_password(name)
        raise
    # the connection string's other secrets follow the rename, unless given anew
    old_keys = [k for k in old.get("secret_keys") or [] if isinstance(k, str)]
    fresh = set(split_secrets(connection_string)[1])
    carried = [k for k in old_keys if k not in fresh]
    for key in carried:
        value = get_connection_secret(old_name, key)
        if value:
            set_connection_secret(name, key, value)
    if carried:
        keys = list(dict.fromkeys(list(entry.get("secret_keys") or []) + carried))
        entry["secret_keys"] = keys

        def carry(settings: dict[str, Any]) -> None:
            for c in settings.get("connections", []):
                if isinstance(c, dict) and same_name(str(c.get("name", "")), name):
                    c["secret_keys"] = keys

        _save(workspace, carry)
    if respelled:
        delete_connection_password(old_name)
        for key in old_keys:
            delete_connection_secret(old_name, key)
    else:
        remove_connection(workspace, old_name)
    return entry


def remove_connection(workspace: Workspace, name: str) -> dict[str, Any]:
    """Remove a connection and its stored password. Tables staged from it stay cached."""
    entry = _find(workspace, name)
    if entry is None:
        raise _unknown(workspace, name)
    name = str(entry["name"])  # by name: the entry may have been edited on disk meanwhile
    _save(
        workspace,
        lambda settings: settings.__setitem__(
            "connections",
            [
                c
                for c in settings.get("connections", [])
                if not (isinstance(c, dict) and same_name(str(c.get("name", "")), name))
            ],
        ),
    )
    delete_connection_password(str(entry["name"]))
    for key in entry.get("secret_keys") or []:
        delete_connection_secret(str(entry["name"]), str(key))
    return entry


def test_connection(
    workspace: Workspace, name: str, *, timeout_seconds: float | None = 30.0
) -> ConnectionTest:
    """Connect and list the tables: ``{"name", "ok", "tables", "sample", "seconds"}``;
    a :class:`ConnectionProblem` (with the password masked) when it cannot."""
    from lantide.query.external import ExternalSources

    entry = _find(workspace, name)
    if entry is None:
        raise _unknown(workspace, name)
    name = str(entry["name"])
    t0 = time.perf_counter()
    tables = ExternalSources(workspace, timeout_seconds=timeout_seconds).list_tables(
        name, refresh=True
    )
    return {
        "name": name,
        "ok": True,
        "tables": len(tables),
        "sample": [t["qualified_name"] for t in tables[:5]],
        "seconds": round(time.perf_counter() - t0, 3),
    }


test_connection.__dict__["__test__"] = False  # a library call, not a pytest test


def _find(workspace: Workspace, name: str) -> dict[str, Any] | None:
    for entry in workspace.connections:
        if isinstance(entry, dict) and same_name(str(entry.get("name", "")), name or ""):
            # the live entry (workspace.connections is a copy of the list, not of the dicts)
            return entry
    return None


def _exists(entry: dict[str, Any]) -> ConnectionProblem:
    return ConnectionProblem(
        f"a connection named {entry['name']!r} already exists",
        code="CONNECTION_EXISTS",
        hint="Choose another name, or edit or remove that one first.",
    )


def _unknown(workspace: Workspace, name: str) -> ConnectionProblem:
    names = (
        ", ".join(str(c.get("name")) for c in workspace.connections if isinstance(c, dict))
        or "none"
    )
    return ConnectionProblem(
        f"no connection named {name!r}",
        code="CONNECTION_NOT_FOUND",
        hint=f"Connections of this workspace: {names}.",
    )


__all__ = [
    "COMMON_DIALECTS",
    "add_connection",
    "check_dialect",
    "edit_connection",
    "list_connections",
    "migrate_connection_secrets",
    "move_secrets_to_keyring",
    "odbc_drivers",
    "remove_connection",
    "test_connection",
]
