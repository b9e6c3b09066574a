"""The release feed, ``version_meta.json``: parse it, check its Ed25519 signature, read it.

The signature covers the feed's *canonical bytes*: the JSON object without its
``"signature"`` member, written with sorted keys, no whitespace and ASCII escapes
(:func:`canonical_bytes`). Any tool can rebuild them from the parsed file, so the feed
may be pretty-printed or re-indented without breaking the signature; to keep the
canonical form unambiguous a feed may hold only objects, arrays, strings, integers,
booleans and null (no floats), and no object may repeat a key.

Nothing in the feed is read before its signature checks out against a trusted key.

Expiry (issue 28): a signed feed is valid until its ``not_after`` (an ISO 8601 time with
its UTC offset, e.g. ``2027-01-07T00:00:00Z``), which the signature covers like every other
member. Past it the feed is refused (:class:`FeedExpiredError`), so an old feed replayed by
whoever sits between Lantide and the release server cannot hide newer releases forever. A
``not_after`` more than :data:`MAX_VALID_DAYS` ahead of this computer's clock is refused
too (it would make the replay window as long as the signer liked). A feed without
``not_after`` is refused: it could be replayed forever, and no feed without one was ever
published (this tree shipped no release key before expiry existed), so refusing costs no
user an update. The release tool writes ``not_after`` at every signing.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from lantide.update.errors import BadSignatureError, FeedExpiredError, FeedMalformedError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from packaging.version import Version

FEED_FORMAT = 1
MAX_FEED_BYTES = 1024 * 1024
MAX_ASSET_BYTES = 2 * 1024**3  # no installer of ours comes near; a bigger claim is hostile
MAX_NOTES_CHARS = 64 * 1024
MAX_VALID_DAYS = 90  # the longest a signed feed may stay valid, counted from the check
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ASSET_KEY = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class Asset:
    key: str  # e.g. "linux-tar-x86_64"
    url: str  # absolute (a relative URL in the feed is resolved against the feed's)
    sha256: str  # lowercase hex
    size: int  # bytes; the download stops past it

    @property
    def file_name(self) -> str:
        name = urlsplit(self.url).path.rsplit("/", 1)[-1]
        name = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")
        return name or f"lantide-update-{self.key}"


@dataclass(frozen=True)
class ReleaseFeed:
    version: str
    date: str
    notes: str
    assets: dict[str, Asset]
    source: str  # the feed's URL, for messages
    not_after: datetime  # valid until then (UTC); refused after

    @property
    def parsed_version(self) -> Version:
        return parse_version(self.version, self.source)


def canonical_bytes(payload: Mapping[str, object]) -> bytes:
    """The bytes the signature covers: ``payload`` (without ``"signature"``), canonical."""
    body = {k: v for k, v in payload.items() if k != "signature"}
    return json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def parse_version(text: Any, source: str) -> Version:
    # the `packaging` library, not the repository's packaging/ folder (no __init__.py)
    from packaging.version import InvalidVersion, Version

    try:
        return Version(str(text))
    except InvalidVersion:
        raise malformed(source, f"its version {text!r} is not a version number") from None


def parse_feed(
    raw: bytes,
    *,
    source: str,
    keys: list[Ed25519PublicKey],
    now: datetime | None = None,
) -> ReleaseFeed:
    """The verified feed in ``raw`` (fetched from ``source``), or an error saying why not.

    ``keys`` are the trusted Ed25519 public keys; the feed must be signed by one of them.
    ``now``: the time its ``not_after`` is checked against (this computer's clock).
    """
    if len(raw) > MAX_FEED_BYTES:
        raise malformed(source, f"it is larger than {MAX_FEED_BYTES // 1024} KB")
    data = _load_json(raw, source)
    signature = data.get("signature")
    if not isinstance(signature, str) or not signature:
        raise BadSignatureError(
            f'The update feed {source} is not signed (it has no "signature"); nothing was '
            f"downloaded or changed.",
            hint="Only a feed signed with Lantide's release key is used. Check the feed URL "
            "in Settings > Updates.",
        )
    try:
        sig = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        sig = b""
    if len(sig) != 64 or not _verify(sig, canonical_bytes(data), keys):
        raise BadSignatureError(
            f"The update feed {source} does not carry a valid signature of Lantide's release "
            f"key: it was changed after signing or comes from someone else. Nothing was "
            f"downloaded or changed.",
            hint="Check the feed URL in Settings > Updates, or download Lantide from its web site.",
        )
    return _read_verified(data, source, now or datetime.now(UTC))


def _verify(sig: bytes, message: bytes, keys: list[Ed25519PublicKey]) -> bool:
    from cryptography.exceptions import InvalidSignature

    for key in keys:
        try:
            key.verify(sig, message)
            return True
        except InvalidSignature:
            continue
    return False


def _load_json(raw: bytes, source: str) -> dict[str, object]:
    """The feed's JSON object, its shape not checked yet (nor its signature)."""

    def no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
        seen: dict[str, object] = {}
        for k, v in pairs:
            if k in seen:
                raise ValueError(f"the key {k!r} appears twice in one object")
            seen[k] = v
        return seen

    def no_float(text: str) -> float:
        raise ValueError(f"it holds a fractional number ({text}); a feed holds integers only")

    def no_constant(text: str) -> float:
        raise ValueError(f"it holds {text}, which is not JSON")

    try:
        data = json.loads(
            raw.decode("utf-8"),
            object_pairs_hook=no_duplicates,
            parse_float=no_float,
            parse_constant=no_constant,
        )
    except UnicodeDecodeError:
        raise malformed(source, "it is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise malformed(
            source, f"it is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise malformed(source, "it is nested too deeply") from None
    except ValueError as exc:
        raise malformed(source, str(exc)) from None
    if not isinstance(data, dict):
        raise malformed(source, "it is not a JSON object")
    return data


def format_time(when: datetime) -> str:
    """``when`` as the feed writes it: UTC, to the second, with a ``Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _not_after(data: dict[str, object], source: str, now: datetime) -> datetime:
    raw = data.get("not_after")
    if raw is None:
        raise malformed(
            source,
            'it has no "not_after" (the time its signature stops being valid), so an old copy '
            "could be replayed forever",
        )
    try:
        when = datetime.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise malformed(
            source,
            f"its not_after {raw!r} is not a time with its UTC offset, like 2027-01-07T00:00:00Z",
        )
    if when <= now:
        raise FeedExpiredError(
            f"The update feed {source} expired at {format_time(when)} (this computer's clock "
            f"says {format_time(now)}): it may be an old copy replayed to hide newer "
            f"releases. Nothing was downloaded or changed.",
            hint="Try again later (the release feed is signed again regularly); if this "
            "persists, check this computer's clock and the feed URL in Settings > Updates, or "
            "download Lantide from its web site.",
        )
    if when > now + timedelta(days=MAX_VALID_DAYS):
        raise malformed(
            source,
            f"its not_after {format_time(when)} is more than {MAX_VALID_DAYS} days ahead; a "
            f"feed is signed for at most {MAX_VALID_DAYS} days",
        )
    return when.astimezone(UTC)


def _read_verified(data: dict[str, object], source: str, now: datetime) -> ReleaseFeed:
    if data.get("format") != FEED_FORMAT:
        raise malformed(
            source,
            f"its format {data.get('format')!r} is not {FEED_FORMAT}, "
            f"the one this version of Lantide reads",
        )
    not_after = _not_after(data, source, now)
    version = data.get("version")
    parse_version(version, source)
    raw_when = data.get("date")
    when = raw_when if isinstance(raw_when, str) else ""
    try:
        date.fromisoformat(when)
    except ValueError:
        raise malformed(source, f"its date {raw_when!r} is not a date like 2026-12-01") from None
    notes = data.get("notes", "")
    if not isinstance(notes, str) or len(notes) > MAX_NOTES_CHARS:
        raise malformed(source, "its release notes are not text of at most 64 KB")
    raw_assets = data.get("assets")
    if not isinstance(raw_assets, dict) or not raw_assets:
        raise malformed(source, "it lists no assets (the files to download, by platform)")
    assets = {key: _asset(key, value, source) for key, value in raw_assets.items()}
    return ReleaseFeed(
        version=str(version),
        date=when,
        notes=notes,
        assets=assets,
        source=source,
        not_after=not_after,
    )


def _asset(key: str, value: Any, source: str) -> Asset:
    where = f"asset {key!r}"
    if not _ASSET_KEY.fullmatch(key):
        raise malformed(source, f"{where} has a name that is not a platform key")
    if not isinstance(value, dict):
        raise malformed(source, f"{where} is not an object")
    url = value.get("url")
    if not isinstance(url, str) or not url:
        raise malformed(source, f"{where} has no url")
    url = urljoin(source, url)
    if urlsplit(url).scheme not in ("http", "https"):
        raise malformed(source, f"{where} has a url that is not http(s): {url}")
    sha = value.get("sha256")
    if not isinstance(sha, str) or not _SHA256.fullmatch(sha.lower()):
        raise malformed(source, f"{where} has no sha256 of 64 hex digits")
    size = value.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_ASSET_BYTES:
        raise malformed(source, f"{where} has no size in bytes (1 to {MAX_ASSET_BYTES})")
    return Asset(key=key, url=url, sha256=sha.lower(), size=size)


def malformed(source: str, why: str) -> FeedMalformedError:
    return FeedMalformedError(
        f"The update feed {source} cannot be read: {why}. Nothing was downloaded or changed.",
        hint="Check the feed URL in Settings > Updates; if it is right, the release feed is "
        "broken: try again later.",
    )
