"""The updater's errors: each says what went wrong and that nothing was changed."""

from __future__ import annotations

from lantide.errors import LantideError


class UpdateError(LantideError):
    code = "UPDATE_FAILED"


class FeedUnreachableError(UpdateError):
    code = "UPDATE_UNREACHABLE"


class FeedMalformedError(UpdateError):
    code = "UPDATE_FEED_MALFORMED"


class BadSignatureError(UpdateError):
    code = "UPDATE_BAD_SIGNATURE"


class FeedExpiredError(UpdateError):
    """A correctly signed feed past its ``not_after``: an old feed replayed (issue 28)."""

    code = "UPDATE_FEED_EXPIRED"


class NoReleaseKeyError(UpdateError):
    code = "UPDATE_NO_KEY"


class NoAssetError(UpdateError):
    code = "UPDATE_NO_ASSET"


class DownloadError(UpdateError):
    code = "UPDATE_DOWNLOAD_FAILED"


class HashMismatchError(UpdateError):
    code = "UPDATE_HASH_MISMATCH"


class TooLargeError(UpdateError):
    code = "UPDATE_TOO_LARGE"


class DownloadCancelled(UpdateError):
    code = "UPDATE_CANCELLED"


class InstallError(UpdateError):
    code = "UPDATE_INSTALL_FAILED"
