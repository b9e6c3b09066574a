"""For release managers: make the release key pair, describe an asset, sign the feed.

    python -m lantide.update.release_tool keygen PRIVATE_KEY_FILE
    python -m lantide.update.release_tool asset FILE URL
    python -m lantide.update.release_tool sign FEED_JSON PRIVATE_KEY_FILE [--valid-days N]

``keygen`` writes the private key (PEM, readable by its owner only) and prints the public
key line for ``resources/update/release-keys.txt``. ``sign`` sets the feed's
``"not_after"`` (``--valid-days``, default 30, at most 90) and adds (or replaces) its
``"signature"``: Ed25519 over :func:`lantide.update.feed.canonical_bytes`. The feed must be
signed again before it expires (a cron job on the release machine, or each week by hand).
Keep the private key off the repository and off the build machines that anyone else uses.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from lantide.update.errors import UpdateError
from lantide.update.feed import MAX_VALID_DAYS, canonical_bytes, format_time
from lantide.update.keys import public_key_text

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


DEFAULT_VALID_DAYS = 30


class FeedAsset(TypedDict):
    """One asset of the feed (``assets.KEY``), as :func:`describe_asset` writes it."""

    url: str
    sha256: str  # lowercase hex
    size: int  # bytes


def sign_feed(
    payload: Mapping[str, object],
    private_key: Ed25519PrivateKey,
    *,
    valid_days: int = DEFAULT_VALID_DAYS,
    not_after: str | None = None,
) -> dict[str, object]:
    """``payload`` with its ``"not_after"`` (now + ``valid_days``, or ``not_after`` as
    given) and its ``"signature"`` (base64 Ed25519 over its canonical bytes)."""
    if not 1 <= valid_days <= MAX_VALID_DAYS:
        raise UpdateError(
            f"a feed is valid for 1 to {MAX_VALID_DAYS} days, not {valid_days}",
            hint=f"Sign it for at most {MAX_VALID_DAYS} days, and again before it expires.",
        )
    expires = not_after or format_time(datetime.now(UTC) + timedelta(days=valid_days))
    body = {k: v for k, v in payload.items() if k != "signature"}
    body["not_after"] = expires
    signature = private_key.sign(canonical_bytes(body))
    return {**body, "signature": base64.b64encode(signature).decode("ascii")}


def describe_asset(path: Path, url: str) -> FeedAsset:
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
    p = sub.add_parser("sign", help="sign version_meta.json in place, valid for a while")
    p.add_argument("feed", type=Path)
    p.add_argument("private_key", type=Path)
    p.add_argument(
        "--valid-days",
        type=int,
        default=DEFAULT_VALID_DAYS,
        help=f"days until the feed expires (not_after), 1 to {MAX_VALID_DAYS}; sign it again "
        f"before then (default {DEFAULT_VALID_DAYS})",
    )
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
            signed = sign_feed(payload, private_key, valid_days=args.valid_days)
        except UpdateError as exc:
            sys.stderr.write(f"{exc}\n")
            return 1
        from lantide.workspace.atomic import atomic_write_text

        atomic_write_text(args.feed, json.dumps(signed, indent=2, ensure_ascii=False) + "\n")
        print(f"signed {args.feed}, valid until {signed['not_after']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
