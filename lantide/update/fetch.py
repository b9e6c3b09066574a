"""HTTP for the updater (urllib, no extra dependency): the feed, and the asset with
progress, cancel, a size limit and its SHA-256.

An asset is written to ``NAME.part`` in the download folder and renamed to ``NAME`` only
when its size and hash match the signed feed; a failed or cancelled download removes its
``.part`` file (Lantide's own, never a user's file).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from http.client import HTTPResponse
from pathlib import Path
from urllib.parse import urlsplit

from lantide import __version__
from lantide.update.errors import (
    DownloadCancelled,
    DownloadError,
    FeedUnreachableError,
    HashMismatchError,
    TooLargeError,
)
from lantide.update.feed import MAX_FEED_BYTES, Asset, malformed

CHUNK = 64 * 1024
FEED_TIMEOUT = 15.0
DOWNLOAD_TIMEOUT = 30.0  # per read; a stalled server is given up after this

Progress = Callable[[int, int], None]


def _open(url: str, timeout: float) -> HTTPResponse:
    if urlsplit(url).scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url}")
    request = urllib.request.Request(url, headers={"User-Agent": f"Lantide/{__version__}"})
    # the scheme was checked above; an http(s) URL opens as an HTTPResponse (typeshed: Any)
    response: HTTPResponse = urllib.request.urlopen(request, timeout=timeout)
    return response


def _why(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"the server answered {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "no answer in time"
    return str(exc) or type(exc).__name__


def fetch_feed(url: str, timeout: float = FEED_TIMEOUT) -> bytes:
    """The feed's bytes; :class:`FeedUnreachableError` when it cannot be had."""
    try:
        with _open(url, timeout) as response:
            raw = response.read(MAX_FEED_BYTES + 1)
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise FeedUnreachableError(
            f"The update feed {url} could not be reached: {_why(exc)}. Nothing was changed.",
            hint="Check the network connection and the feed URL in Settings > Updates, "
            "then try again.",
        ) from None
    if len(raw) > MAX_FEED_BYTES:
        raise malformed(url, f"it is larger than {MAX_FEED_BYTES // 1024} KB")
    return raw


def _socket_of(response: HTTPResponse | None) -> socket.socket | None:
    """The socket under an http.client response (None when it is gone or unknown)."""
    raw = getattr(getattr(response, "fp", None), "raw", None)
    sock: socket.socket | None = getattr(raw, "_sock", None)  # private to http.client
    return sock


class AssetDownload:
    """One download of a feed's asset; :meth:`cancel` may be called from any thread and
    takes effect even while a read is waiting for the server."""

    def __init__(self, asset: Asset, folder: Path):
        self.asset = asset
        self.folder = Path(folder)
        self.target = self.folder / asset.file_name
        # one .part per process: two Lantide windows downloading at once never mix bytes
        self.part = self.folder / f"{asset.file_name}.{os.getpid()}.part"
        self._cancelled = threading.Event()
        self._response: HTTPResponse | None = None
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the download; returns at once (it runs on the UI thread)."""
        self._cancelled.set()
        with self._lock:
            response = self._response
        sock = _socket_of(response)
        if sock is not None:
            # Shut the socket down rather than close the response: closing waits for the
            # lock the blocked read holds, i.e. for the server; a shutdown wakes the read.
            with contextlib.suppress(OSError):  # already closed: the read is over anyway
                sock.shutdown(socket.SHUT_RDWR)

    def run(self, progress: Progress | None = None) -> Path:
        """Download, check size and SHA-256, return the verified file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            self._fetch(progress)
        except BaseException:
            self.part.unlink(missing_ok=True)
            raise
        os.replace(self.part, self.target)
        return self.target

    def _fetch(self, progress: Progress | None) -> None:
        asset, url = self.asset, self.asset.url
        digest = hashlib.sha256()
        done = 0
        try:
            response = _open(url, DOWNLOAD_TIMEOUT)
            with self._lock:
                self._response = response
            with response, open(self.part, "wb") as out:
                length = response.headers.get("Content-Length")
                if length and length.isdigit() and int(length) > asset.size:
                    raise self._too_large(int(length))
                while True:
                    if self.cancelled:
                        raise self._cancel_error()
                    chunk = response.read(CHUNK)
                    if not chunk:
                        break
                    done += len(chunk)
                    if done > asset.size:
                        raise self._too_large(done)
                    digest.update(chunk)
                    out.write(chunk)
                    if progress is not None:
                        progress(done, asset.size)
        except (DownloadCancelled, TooLargeError):
            raise
        except (OSError, ValueError, urllib.error.URLError) as exc:
            if self.cancelled:
                raise self._cancel_error() from None
            raise DownloadError(
                f"Downloading {url} failed after {done:,} of {asset.size:,} bytes: "
                f"{_why(exc)}. Nothing was installed.",
                hint="Check the network connection and try again.",
            ) from None
        if self.cancelled:
            raise self._cancel_error()
        if done != asset.size:
            raise DownloadError(
                f"The download of {url} ended after {done:,} bytes; the feed says "
                f"{asset.size:,}. Nothing was installed.",
                hint="The server may have cut the connection: try again.",
            )
        if digest.hexdigest() != asset.sha256:
            raise HashMismatchError(
                f"The file downloaded from {url} is not the one the signed feed describes "
                f"(its SHA-256 is {digest.hexdigest()}, the feed says {asset.sha256}). It was "
                f"deleted; nothing was installed.",
                hint="Try again later; if it happens again, download Lantide from its web site.",
            )

    def _too_large(self, size: int) -> TooLargeError:
        return TooLargeError(
            f"The download of {self.asset.url} is larger ({size:,} bytes or more) than the "
            f"signed feed says ({self.asset.size:,} bytes); it was stopped and deleted. "
            f"Nothing was installed.",
            hint="The server sent another file than the feed describes: try again later.",
        )

    def _cancel_error(self) -> DownloadCancelled:
        return DownloadCancelled("The download was cancelled; nothing was installed.")
