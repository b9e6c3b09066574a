"""Which Ed25519 public keys may sign the release feed.

The trusted keys ship inside the app, in ``resources/update/release-keys.txt`` (one
base64-encoded raw 32-byte key per line; ``#`` starts a comment). Several lines allow a
key rotation: a feed signed by any of them is accepted. The private key never is in the
repository (see ``packaging/README.md``).

Tests and development runs from source may add a key through ``LANTIDE_UPDATE_DEV_KEY``;
an installed (frozen) build ignores it, and no setting or file in the user's folders can
add a key, so nobody can talk a user into trusting another signer by editing settings.
"""

from __future__ import annotations

import base64
import binascii
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.update.errors import NoReleaseKeyError, UpdateError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

DEV_KEY_ENV = "LANTIDE_UPDATE_DEV_KEY"


def is_frozen() -> bool:
    """An installed build (PyInstaller sets ``sys.frozen``)."""
    return bool(getattr(sys, "frozen", False))


def public_key_from_text(text: str, where: str) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise UpdateError(
            f"{where} holds {text.strip()[:60]!r}, which is not an Ed25519 "
            f"public key (base64 of 32 bytes)",
            hint="Reinstall Lantide; in a build, check the release key file.",
            code="UPDATE_KEY_INVALID",
        )
    return Ed25519PublicKey.from_public_bytes(raw)


def public_key_text(key: Ed25519PublicKey) -> str:
    """``key`` as one line of the keys file."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return base64.b64encode(key.public_bytes(Encoding.Raw, PublicFormat.Raw)).decode("ascii")


def shipped_keys_path() -> Path:
    from lantide.package_data import resource_path

    return resource_path("update", "release-keys.txt")


def read_keys_file(path: Path) -> list[Ed25519PublicKey]:
    keys: list[Ed25519PublicKey] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if line:
            keys.append(public_key_from_text(line, f"{path}, line {number},"))
    return keys


def trusted_keys() -> list[Ed25519PublicKey]:
    """The shipped keys, plus the development key outside installed builds. Raises
    :class:`NoReleaseKeyError` when there is none (a build made without a release key)."""
    keys = read_keys_file(shipped_keys_path())
    dev = os.environ.get(DEV_KEY_ENV, "").strip()
    if dev and not is_frozen():
        keys.append(public_key_from_text(dev, DEV_KEY_ENV))
    if not keys:
        raise NoReleaseKeyError(
            "This build of Lantide has no release key, so it cannot check an update's "
            "signature and does not look for updates.",
            hint="Download new versions from Lantide's web site. (A release build lists its "
            "key in resources/update/release-keys.txt.)",
        )
    return keys
