"""The release manager's tool: a key pair, an asset entry and a signed feed that the app
accepts; the private key file is readable by its owner only and never overwritten."""

import json
import stat
import subprocess
import sys

from lantide.update.check import check_for_update
from lantide.update.keys import public_key_from_text
from tests.conftest import REPO, cli_env
from tests.update.feed_server import Route


def tool(*args):
    return subprocess.run(
        [sys.executable, "-m", "lantide.update.release_tool", *map(str, args)],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=str(REPO),
        timeout=60,
    )


def test_keygen_asset_and_sign_make_a_feed_the_app_accepts(tmp_path, feed_server):
    private = tmp_path / "release-key.pem"
    made = tool("keygen", private)
    assert made.returncode == 0, made.stderr
    public = public_key_from_text(made.stdout.strip(), "keygen output")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert tool("keygen", private).returncode == 1  # never overwrites a key

    build = tmp_path / "lantide-2.0.0-linux-x86_64.tar.gz"
    build.write_bytes(b"a build" * 100)
    entry = tool("asset", build, "lantide-2.0.0-linux-x86_64.tar.gz")
    feed = tmp_path / "version_meta.json"
    feed.write_text(
        json.dumps(
            {
                "format": 1,
                "version": "2.0.0",
                "date": "2026-12-24",
                "notes": "Déjà vu: notes in UTF-8.",
                "assets": {"linux-tar-x86_64": json.loads(entry.stdout)},
            }
        )
    )
    signed = tool("sign", feed, private)
    assert signed.returncode == 0, signed.stderr
    assert "signature" in json.loads(feed.read_text())

    feed_server.routes["/version_meta.json"] = Route(feed.read_bytes())
    result = check_for_update(
        feed_server.url("/version_meta.json"),
        keys=[public],
        current="1.0",
        asset_key="linux-tar-x86_64",
    )
    assert result.newer and result.feed.notes == "Déjà vu: notes in UTF-8."
    assert result.asset.size == 700
    assert result.asset.url == feed_server.url("/lantide-2.0.0-linux-x86_64.tar.gz")


def test_sign_with_a_key_that_is_not_ed25519_is_refused_clearly(tmp_path):
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    private = tmp_path / "not-a-release-key.pem"
    key = ec.generate_private_key(ec.SECP256R1())
    private.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    feed = tmp_path / "version_meta.json"
    feed.write_text('{"format": 1, "version": "2.0.0"}\n')
    before = feed.read_bytes()

    signed = tool("sign", feed, private)

    assert signed.returncode == 1
    assert "Traceback" not in signed.stderr
    assert str(private) in signed.stderr and "Ed25519" in signed.stderr
    assert feed.read_bytes() == before


def test_an_asset_entry_is_a_feed_asset(tmp_path):
    import hashlib

    from lantide.update.release_tool import FeedAsset, describe_asset
    from tests.query.shape_check import assert_shape

    build = tmp_path / "lantide.tar.gz"
    build.write_bytes(b"a build")
    entry = describe_asset(build, "https://example.invalid/lantide.tar.gz")
    assert entry == {
        "url": "https://example.invalid/lantide.tar.gz",
        "sha256": hashlib.sha256(b"a build").hexdigest(),
        "size": 7,
    }
    assert_shape(entry, FeedAsset)
