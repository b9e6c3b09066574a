"""Downloading the asset: progress, the SHA-256 of the signed feed, the size limit,
cancel mid-download; a failed download leaves no file behind."""

import hashlib
import threading
import time

import pytest

from lantide.update.check import check_for_update
from lantide.update.errors import DownloadCancelled, DownloadError, HashMismatchError, TooLargeError
from lantide.update.fetch import CHUNK, AssetDownload
from tests.update.feed_server import Release, Route

ASSET = "/dl/lantide-update.tar.gz"


def offered_asset(release):
    return check_for_update(
        release.feed_url, keys=release.keys, current="9.0.0", asset_key=release.asset_key
    ).asset


def test_the_asset_is_downloaded_with_progress_and_verified(release, tmp_path):
    seen = []
    path = AssetDownload(offered_asset(release), tmp_path).run(
        lambda done, total: seen.append((done, total))
    )
    assert path == tmp_path / "lantide-update.tar.gz"
    assert path.read_bytes() == release.asset_body
    size = len(release.asset_body)
    assert seen[-1] == (size, size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) >= 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lantide-update.tar.gz"]


def test_a_file_that_is_not_the_signed_one_is_deleted(release, feed_server, tmp_path):
    asset = offered_asset(release)
    tampered = b"X" + release.asset_body[1:]  # same size, other bytes
    feed_server.routes[ASSET] = Route(tampered)
    with pytest.raises(HashMismatchError) as err:
        AssetDownload(asset, tmp_path).run()
    assert hashlib.sha256(tampered).hexdigest() in err.value.message
    assert "nothing was installed" in err.value.message
    assert list(tmp_path.iterdir()) == []


def test_more_bytes_than_the_feed_says_are_stopped(release, feed_server, tmp_path):
    asset = offered_asset(release)
    feed_server.routes[ASSET] = Route(
        release.asset_body + b"\0" * (3 * CHUNK), content_length=-1
    )  # no header: caught while reading
    with pytest.raises(TooLargeError) as err:
        AssetDownload(asset, tmp_path).run()
    assert f"{asset.size:,} bytes" in err.value.message
    assert list(tmp_path.iterdir()) == []


def test_a_larger_content_length_is_refused_before_reading(release, feed_server, tmp_path):
    asset = offered_asset(release)
    big = release.asset_body * 50
    feed_server.routes[ASSET] = Route(big)
    seen = []
    with pytest.raises(TooLargeError, match=f"{len(big):,} bytes"):
        AssetDownload(asset, tmp_path).run(lambda d, t: seen.append(d))
    assert seen == [] and list(tmp_path.iterdir()) == []


def test_a_download_cut_short_is_an_error(release, feed_server, tmp_path):
    asset = offered_asset(release)
    feed_server.routes[ASSET] = Route(release.asset_body[:1000], content_length=-1)
    with pytest.raises(DownloadError, match="ended after 1,000 bytes"):
        AssetDownload(asset, tmp_path).run()
    assert list(tmp_path.iterdir()) == []


def test_cancel_stops_a_download_waiting_for_the_server(feed_server, tmp_path):
    release = Release(feed_server, asset_body=bytes(range(256)) * (4 * CHUNK // 256))
    asset = offered_asset(release)
    route = Route(release.asset_body, stall_after=CHUNK + 10)  # then the server stalls
    feed_server.routes[ASSET] = route
    download = AssetDownload(asset, tmp_path)
    outcome, seen = {}, []

    def run():
        try:
            download.run(lambda done, _total: seen.append(done))
        except BaseException as exc:  # looked at below
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen and seen[-1] < asset.size  # mid-download, blocked on the stalled server
    download.cancel()
    worker.join(5)
    assert not worker.is_alive(), "cancel did not stop the blocked read"
    assert not route.finished.is_set(), "cancel waited for the stalled server to go on"
    assert isinstance(outcome["error"], DownloadCancelled)
    assert list(tmp_path.iterdir()) == []
    assert not download.target.exists()


def test_the_download_s_file_name_stays_inside_the_download_folder(tmp_path):
    from lantide.update.feed import Asset

    def name(url):
        return Asset(key="linux-deb-x86_64", url=url, sha256="0" * 64, size=1).file_name

    assert name("https://h/dl/lantide_0.2.0_amd64.deb?x=1") == "lantide_0.2.0_amd64.deb"
    assert name("https://h/dl/..%2F..%2F.bashrc") == "_2F.._2F.bashrc"
    for url in ("https://h/dl/..", "https://h/", "https://h/dl/.hidden"):
        assert "/" not in name(url) and not name(url).startswith(".")
    assert name("https://h/") == "lantide-update-linux-deb-x86_64"
