"""Passwords of external connections: the system keyring, or the environment. Never a file.

``.lantide/workspace.json`` lists connections without secrets. The password of connection
NAME is the keyring entry ``lantide`` / ``connection:NAME``; where no keyring exists
(CI, a headless server) the environment variable ``LANTIDE_PASSWORD_<NAME>`` (NAME upper
case, other characters as ``_``) is read instead.
"""

from __future__ import annotations

import os
import re

from lantide.query.errors import ConnectionProblem
from lantide.workspace import secrets


def _entry(name: str) -> str:
    return f"connection:{name}"


def env_var(name: str) -> str:
    return "LANTIDE_PASSWORD_" + re.sub(r"[^0-9A-Za-z]", "_", name).upper()


def get_connection_password(name: str) -> str | None:
    value = os.environ.get(env_var(name))
    if value:
        return value
    if not secrets.keyring_available():
        return None
    import keyring

    try:
        return keyring.get_password(secrets.SERVICE, _entry(name))
    except Exception:
        return None


def set_connection_password(name: str, password: str) -> None:
    if not secrets.keyring_available():
        raise _no_keyring(name, "no system keyring is available")
    import keyring

    try:
        keyring.set_password(secrets.SERVICE, _entry(name), password)
    except Exception as exc:
        raise _no_keyring(name, str(exc)) from None


def _no_keyring(name: str, detail: str) -> ConnectionProblem:
    return ConnectionProblem(
        f"cannot store the password of connection {name!r}: {detail}",
        code="NO_KEYRING",
        hint=f"Set {env_var(name)} in the environment instead; Lantide never writes "
             "passwords to disk.")


def delete_connection_password(name: str) -> None:
    if not secrets.keyring_available():
        return
    import keyring

    try:
        keyring.delete_password(secrets.SERVICE, _entry(name))
    except Exception:
        pass
