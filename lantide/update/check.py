"""Check the release feed: is there a newer version, with a build for this platform?"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lantide import __version__
from lantide.update.errors import NoAssetError, UpdateError
from lantide.update.feed import Asset, ReleaseFeed, parse_feed, parse_version
from lantide.update.fetch import fetch_feed

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


@dataclass(frozen=True)
class UpdateCheck:
    feed: ReleaseFeed
    current: str
    newer: bool
    asset: Asset | None  # the file for this platform; None when there is nothing to get

    @property
    def message(self) -> str:
        if self.newer:
            return f"Lantide {self.feed.version} is available (you have {self.current})."
        if parse_version(self.feed.version, self.feed.source) == parse_version(self.current, ""):
            return f"You have the latest version, Lantide {self.current}."
        return (
            f"The release feed offers Lantide {self.feed.version}, older than this "
            f"version ({self.current}); Lantide never installs an older version."
        )


def baked_feed_url() -> str:
    """The feed URL a build was made with (``resources/update/feed-url.txt``), or ""."""
    from lantide.package_data import resource_path

    try:
        lines = resource_path("update", "feed-url.txt").read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    return next(
        (line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")), ""
    )


def effective_feed_url(configured: str) -> str:
    """The URL set in Settings > Updates, else the build's own."""
    return (configured or "").strip() or baked_feed_url()


def check_for_update(
    feed_url: str,
    *,
    keys: list[Ed25519PublicKey] | None = None,
    current: str = __version__,
    asset_key: str | None = None,
) -> UpdateCheck:
    """Fetch and verify the feed at ``feed_url``; raises an :class:`UpdateError` that says
    what went wrong (unreachable, malformed, badly signed, no build for this platform)."""
    from lantide.update.install import asset_key as platform_asset_key
    from lantide.update.keys import trusted_keys

    if not feed_url:
        raise UpdateError(
            "This build of Lantide has no release feed (a development or self-built copy), "
            "and none is set, so it cannot look for updates.",
            hint="Update it the way it was installed (pip, your package manager, a new "
            "installer); if your team publishes a release feed, enter its URL in "
            "Settings > Updates.",
            code="UPDATE_NO_FEED",
        )
    keys = trusted_keys() if keys is None else keys
    raw = fetch_feed(feed_url)
    feed = parse_feed(raw, source=feed_url, keys=keys)
    newer = feed.parsed_version > parse_version(current, "this version")
    asset = None
    if newer:
        key = asset_key or platform_asset_key()
        asset = feed.assets.get(key)
        if asset is None and not key.startswith("source-"):  # pip/checkout: no installer
            raise NoAssetError(
                f"Lantide {feed.version} is available, but the release feed has no build for "
                f"this system ({key}); nothing was downloaded.",
                hint=f"Builds offered: {', '.join(sorted(feed.assets))}. Download Lantide "
                f"from its web site.",
            )
    return UpdateCheck(feed=feed, current=current, newer=newer, asset=asset)


def downloads_dir() -> Path:
    """Where downloads wait for the installer: the user data directory, not the install."""
    from lantide.workspace import paths

    return paths.user_data_dir() / "updates"
