"""For release managers: make the release key pair, describe an asset, sign the feed.

    python -m lantide.update.release_tool keygen PRIVATE_KEY_FILE
    python -m lantide.update.release_tool asset FILE URL
    python -m lantide.update.release_tool sign FEED_JSON PRIVATE_KEY_FILE

``keygen`` writes the private key (PEM, readable by its owner only) and prints the public
key line for ``resources/update/release-keys.txt``. ``sign`` adds (or replaces) the
feed's ``"signature"``: Ed25519 over :func:`lantide.update.feed.canonical_bytes`.
Keep the private key off the repository and off the build machines that anyone else uses.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lantide.update.errors import UpdateError
from lantide.update.feed import canonical_bytes
from lantide.update.keys import public_key_text

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def sign_feed(payload: dict[str, Any], private_key: Ed25519PrivateKey) -> dict[str, Any]:
    """``payload`` with its ``"signature"`` (base64 Ed25519 over its canonical bytes)."""
    body = {k: v for k, v in payload.items() if k != "signature"}
    signature = private_key.sign(canonical_bytes(body))
    return {**body, "signature": base64.b64encode(signature).decode("ascii")}


def describe_asset(path: Path, url: str) -> dict[str, Any]:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return {"url": url, "sha256": digest.hexdigest(), "size": path.stat().st_size}


def _load_private(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in the PEM file ``path``; a clear error for anything else
    (another kind of key cannot make the signature the app checks)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    hint = "Sign with the private key file that keygen wrote."
    try:
        key = load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise UpdateError(f"{path}: not a readable private key ({exc})", hint=hint) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise UpdateError(f"{path}: a {type(key).__name__}, not an Ed25519 private key", hint=hint)
    return key


def main(argv: list[str] | None = None) -> int:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    parser = argparse.ArgumentParser(prog="python -m lantide.update.release_tool")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("keygen", help="make a release key pair")
    p.add_argument("private_key", type=Path)
    p = sub.add_parser("asset", help="print an asset's entry for the feed")
    p.add_argument("file", type=Path)
    p.add_argument("url")
    p = sub.add_parser("sign", help="sign version_meta.json in place")
    p.add_argument("feed", type=Path)
    p.add_argument("private_key", type=Path)
    args = parser.parse_args(argv)
    if args.command == "keygen":
        if args.private_key.exists():
            sys.stderr.write(f"{args.private_key} exists; not overwritten\n")
            return 1
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        fd = os.open(args.private_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        print(public_key_text(key.public_key()))
    elif args.command == "asset":
        print(json.dumps(describe_asset(args.file, args.url), indent=2))
    else:
        payload = json.loads(args.feed.read_text(encoding="utf-8"))
        try:
            private_key = _load_private(args.private_key)
        except UpdateError as exc:
            sys.stderr.write(f"{exc}\n")
            return 1
        signed = sign_feed(payload, private_key)
        from lantide.workspace.atomic import atomic_write_text

        atomic_write_text(args.feed, json.dumps(signed, indent=2, ensure_ascii=False) + "\n")
        print(f"signed {args.feed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
