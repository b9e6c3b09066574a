"""Checking the signed release feed against a loopback server: what is accepted, and the
clear error of each way a feed can be wrong (nothing is downloaded then)."""

import json
import socket

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from lantide.update.check import check_for_update
from lantide.update.errors import (
    BadSignatureError,
    FeedMalformedError,
    FeedUnreachableError,
    NoAssetError,
    UpdateError,
)
from lantide.update.feed import canonical_bytes
from tests.update.feed_server import Route


def check(release, **kw):
    kw.setdefault("current", "9.0.0")
    kw.setdefault("asset_key", release.asset_key)
    return check_for_update(release.feed_url, keys=release.keys, **kw)


def test_a_good_feed_gives_the_notes_and_this_platform_s_asset(release):
    result = check(release)
    assert result.newer
    assert result.feed.version == "9.1.0"
    assert "Faster." in result.feed.notes
    assert result.asset.sha256 == release.payload["assets"][release.asset_key]["sha256"]
    # the relative URL is resolved against the feed's
    assert result.asset.url == release.server.url("/dl/lantide-update.tar.gz")
    assert result.message == "Lantide 9.1.0 is available (you have 9.0.0)."
    assert release.server.requests == ["/version_meta.json"]  # the asset is not fetched yet


def test_reformatting_the_signed_feed_keeps_it_valid(release, feed_server):
    signed = json.loads(feed_server.routes["/version_meta.json"].body)
    feed_server.routes["/version_meta.json"] = Route(
        json.dumps(dict(reversed(list(signed.items()))), indent=7).encode()
    )
    assert check(release).newer


def test_a_feed_changed_after_signing_is_refused(release, feed_server):
    signed = json.loads(feed_server.routes["/version_meta.json"].body)
    signed["assets"][release.asset_key]["url"] = "http://127.0.0.1:9/evil.tar.gz"
    feed_server.routes["/version_meta.json"] = Route(json.dumps(signed).encode())
    with pytest.raises(BadSignatureError) as err:
        check(release)
    assert release.feed_url in err.value.message
    assert "Nothing was downloaded" in err.value.message
    assert feed_server.requests == ["/version_meta.json"]


def test_a_feed_signed_by_another_key_is_refused(release):
    release.publish(key=Ed25519PrivateKey.generate())
    with pytest.raises(BadSignatureError):
        check(release)


@pytest.mark.parametrize("signature", [None, "", "not base64!", "QUJD"])
def test_a_feed_without_a_usable_signature_is_refused(release, feed_server, signature):
    payload = dict(release.payload)
    if signature is not None:
        payload["signature"] = signature
    feed_server.routes["/version_meta.json"] = Route(json.dumps(payload).encode())
    with pytest.raises(BadSignatureError):
        check(release)


def test_a_rotated_key_list_accepts_either_key(release):
    other = Ed25519PrivateKey.generate()
    assert check_for_update(
        release.feed_url,
        keys=[other.public_key(), *release.keys],
        current="9.0.0",
        asset_key=release.asset_key,
    ).newer


@pytest.mark.parametrize(
    "current, message",
    [
        ("9.1.0", "You have the latest version, Lantide 9.1.0."),
        ("10.0", "older than this version (10.0); Lantide never installs an older version"),
    ],
)
def test_the_same_or_an_older_version_is_not_offered(release, current, message):
    result = check(release, current=current)
    assert not result.newer
    assert result.asset is None
    assert message in result.message


def test_a_newer_version_without_a_build_for_this_system_says_so(release):
    with pytest.raises(NoAssetError) as err:
        check(release, asset_key="windows-arm64")
    assert "windows-arm64" in err.value.message
    assert release.asset_key in err.value.hint


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_feed_is_a_clear_error(release):
    url = f"http://127.0.0.1:{_free_port()}/version_meta.json"
    with pytest.raises(FeedUnreachableError) as err:
        check_for_update(url, keys=release.keys, current="9.0.0")
    assert url in err.value.message and "Nothing was changed" in err.value.message
    assert "Settings > Updates" in err.value.hint


def test_a_missing_feed_names_the_server_s_answer(release, feed_server):
    del feed_server.routes["/version_meta.json"]
    with pytest.raises(FeedUnreachableError, match="404"):
        check(release)


@pytest.mark.parametrize(
    "body, why",
    [
        (b'{"version": ', "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"version": "1", "version": "2", "signature": "x"}', "appears twice"),
        (b'{"version": "1", "size": 1.5, "signature": "x"}', "fractional number"),
        (b'{"size": NaN, "signature": "x"}', "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b" " * (1024 * 1024 + 10), "larger than 1024 KB"),
    ],
)
def test_a_malformed_feed_is_a_clear_error(release, feed_server, body, why):
    feed_server.routes["/version_meta.json"] = Route(body)
    with pytest.raises(FeedMalformedError) as err:
        check(release)
    assert why in err.value.message
    assert "Nothing was downloaded or changed" in err.value.message


@pytest.mark.parametrize(
    "change, why",
    [
        (lambda p: p.update(format=2), "format 2"),
        (lambda p: p.update(version="soon"), "'soon' is not a version"),
        (lambda p: p.update(date="yesterday"), "not a date"),
        (lambda p: p.update(assets={}), "lists no assets"),
        (lambda p: p["assets"]["linux-tar-x86_64"].update(sha256="abc"), "no sha256"),
        (lambda p: p["assets"]["linux-tar-x86_64"].update(size=True), "no size"),
        (lambda p: p["assets"]["linux-tar-x86_64"].update(size=10**12), "no size"),
        (lambda p: p["assets"]["linux-tar-x86_64"].update(url="file:///etc/passwd"), "not http"),
    ],
)
def test_a_signed_feed_with_bad_fields_is_malformed(release, change, why):
    payload = json.loads(json.dumps(release.payload))
    change(payload)
    release.publish(payload)
    with pytest.raises(FeedMalformedError, match=why):
        check(release)


def test_no_feed_url_is_a_clear_error(release):
    with pytest.raises(UpdateError) as err:
        check_for_update("", keys=release.keys)
    assert err.value.code == "UPDATE_NO_FEED"


def test_canonical_bytes_leave_out_the_signature_and_sort_keys():
    assert (
        canonical_bytes({"b": "é", "a": [1, {"d": None, "c": True}], "signature": "x"})
        == b'{"a":[1,{"c":true,"d":null}],"b":"\\u00e9"}'
    )
