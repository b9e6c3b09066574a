"""API keys: the system keyring, or the environment. Never a file.

A keyring backend that stores secrets in a plain file (keyrings.alt) does not count as
a keyring here. Where no real backend exists (CI, headless servers) keys come from the
environment only, and asking to store one is a clear error rather than a silent write.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from lantide.errors import LantideError

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

SERVICE = "lantide"
_FILE_BACKEND_MODULES = ("keyrings.alt",)


NO_KEYRING_HINT = (
    "On a machine without a keyring, leave the key empty and start Lantide "
    "with OPENAI_API_KEY set in the environment (with OPENAI_BASE_URL and "
    "LANTIDE_MODEL for the endpoint and model); they override the primary "
    "profile. Lantide never writes keys to a file."
)


class NoKeyringError(LantideError):
    code = "NO_KEYRING"

    def __init__(self, detail: str = ""):
        super().__init__(
            "No system keyring is available to store the API key"
            + (f" ({detail})" if detail else ""),
            hint=NO_KEYRING_HINT,
        )


def _backend() -> KeyringBackend | None:
    import keyring
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        return None
    # The chainer holds the usable backends; an empty chain is no keyring at all.
    backends = getattr(backend, "backends", None)
    if backends is not None and not backends:
        return None
    if type(backend).__module__.startswith(_FILE_BACKEND_MODULES):
        return None
    return backend


def keyring_available() -> bool:
    try:
        return _backend() is not None
    except Exception:  # a broken keyring install must not stop the app
        return False


def _key_name(profile: str) -> str:
    return f"profile:{profile}"


def get_api_key(profile: str) -> str | None:
    """The stored key of a profile, or None. Errors of the keyring read as 'no key'."""
    backend = _backend() if keyring_available() else None
    if backend is None:
        return None
    try:
        return backend.get_password(SERVICE, _key_name(profile))
    except Exception:
        return None


def set_api_key(profile: str, key: str) -> None:
    backend = _backend() if keyring_available() else None
    if backend is None:
        raise NoKeyringError()
    try:
        backend.set_password(SERVICE, _key_name(profile), key)
    except Exception as exc:  # e.g. a locked keyring that refused
        raise NoKeyringError(str(exc)) from None


def delete_api_key(profile: str) -> None:
    backend = _backend() if keyring_available() else None
    if backend is None:
        return
    with contextlib.suppress(Exception):
        backend.delete_password(SERVICE, _key_name(profile))


def env_api_key() -> str | None:
    return os.environ.get("OPENAI_API_KEY") or None
