"""An old signed update feed replayed forever (issue 28, item 11): the feed carries its
expiry, ``not_after``, inside the signed part; an expired feed, a feed without one and a
feed claiming years of validity are refused with a message, and nothing is downloaded.
Real Ed25519 keys, a loopback feed server, the real release tool."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest

from lantide.update.check import check_for_update
from lantide.update.errors import BadSignatureError, FeedExpiredError, FeedMalformedError
from lantide.update.feed import canonical_bytes, format_time, parse_feed
from lantide.update.release_tool import sign_feed
from tests.update.feed_server import Route
from tests.update.test_release_tool import tool

pytestmark = pytest.mark.security


def check(release):
    return check_for_update(
        release.feed_url, keys=release.keys, current="9.0.0", asset_key=release.asset_key
    )


def serve(release, signed: dict) -> None:
    release.server.routes["/version_meta.json"] = Route(json.dumps(signed).encode())


def signed_without_expiry(release) -> dict:
    """Signed as a feed was before expiry existed: no not_after at all."""
    body = dict(release.payload)
    signature = release.key.sign(canonical_bytes(body))
    return {**body, "signature": base64.b64encode(signature).decode()}


def test_a_fresh_feed_is_accepted_and_says_until_when(release):
    result = check(release)
    assert result.newer
    left = result.feed.not_after - datetime.now(UTC)
    assert timedelta(days=29) < left <= timedelta(days=30)


def test_an_expired_feed_replayed_is_refused(release):
    serve(release, sign_feed(release.payload, release.key, not_after="2026-11-01T00:00:00Z"))
    with pytest.raises(FeedExpiredError) as err:
        check(release)
    assert "expired at 2026-11-01T00:00:00Z" in err.value.message
    assert "Nothing was downloaded" in err.value.message and err.value.hint
    assert release.server.requests == ["/version_meta.json"]  # no asset fetched


def test_a_feed_stays_valid_until_its_not_after_and_no_longer(release):
    raw = json.dumps(sign_feed(release.payload, release.key, valid_days=7)).encode()
    now = datetime.now(UTC)
    feed = parse_feed(raw, source=release.feed_url, keys=release.keys, now=now + timedelta(days=6))
    assert feed.version == "9.1.0"
    with pytest.raises(FeedExpiredError):  # the same bytes, replayed a week later
        parse_feed(raw, source=release.feed_url, keys=release.keys, now=now + timedelta(days=8))


def test_a_feed_without_not_after_is_refused(release):
    serve(release, signed_without_expiry(release))
    with pytest.raises(FeedMalformedError) as err:
        check(release)
    assert "not_after" in err.value.message and "replayed forever" in err.value.message


@pytest.mark.parametrize(
    ("not_after", "why"),
    [
        (format_time(datetime.now(UTC) + timedelta(days=3650)), "more than 90 days ahead"),
        ("2026-12-31T00:00:00", "UTC offset"),  # no offset: whose midnight?
        ("soon", "UTC offset"),
        (20270101, "UTC offset"),
    ],
    # ids that do not change with the clock: pytest-xdist's workers must collect the same
    ids=["ten years ahead", "no offset", "a word", "a number"],
)
def test_a_not_after_that_bounds_nothing_is_refused(release, not_after, why):
    body = {**release.payload, "not_after": not_after}
    signature = release.key.sign(canonical_bytes(body))
    serve(release, {**body, "signature": base64.b64encode(signature).decode()})
    with pytest.raises(FeedMalformedError) as err:
        check(release)
    assert why in err.value.message


def test_not_after_is_covered_by_the_signature(release):
    signed = sign_feed(release.payload, release.key, not_after="2026-11-01T00:00:00Z")
    signed["not_after"] = format_time(datetime.now(UTC) + timedelta(days=5))  # extended
    serve(release, signed)
    with pytest.raises(BadSignatureError):
        check(release)


def test_the_release_tool_signs_for_a_bounded_time(tmp_path, feed_server, release):
    private = tmp_path / "key.pem"
    assert tool("keygen", private).returncode == 0
    feed = tmp_path / "version_meta.json"
    feed.write_text(json.dumps(release.payload))
    for days in ("0", "91", "-3"):
        done = tool("sign", feed, private, "--valid-days", days)
        assert done.returncode == 1 and "1 to 90 days" in done.stderr
        assert "signature" not in json.loads(feed.read_text())
    done = tool("sign", feed, private, "--valid-days", "14")
    assert done.returncode == 0 and "valid until" in done.stdout
    signed = json.loads(feed.read_text())
    left = datetime.fromisoformat(signed["not_after"]) - datetime.now(UTC)
    assert timedelta(days=13) < left <= timedelta(days=14)
