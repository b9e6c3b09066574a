"""The release keys: shipped in the app; a development key only outside installed builds;
a build without a key refuses to check. And `packaging` is the library, not our folder."""

import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from lantide.update import keys
from lantide.update.errors import NoReleaseKeyError, UpdateError
from lantide.update.keys import DEV_KEY_ENV, public_key_text, read_keys_file, trusted_keys
from tests.conftest import REPO


def test_this_source_tree_ships_no_release_key_and_says_so(monkeypatch):
    monkeypatch.delenv(DEV_KEY_ENV, raising=False)
    assert read_keys_file(keys.shipped_keys_path()) == []
    with pytest.raises(NoReleaseKeyError) as err:
        trusted_keys()
    assert "no release key" in err.value.message


def test_the_shipped_keys_file_is_read(monkeypatch, tmp_path):
    key = Ed25519PrivateKey.generate().public_key()
    listed = tmp_path / "release-keys.txt"
    listed.write_text(f"# comment\n\n{public_key_text(key)}  # the 2026 key\n")
    monkeypatch.setattr(keys, "shipped_keys_path", lambda: listed)
    monkeypatch.delenv(DEV_KEY_ENV, raising=False)
    assert [public_key_text(k) for k in trusted_keys()] == [public_key_text(key)]
    listed.write_text("not-a-key\n")
    with pytest.raises(UpdateError, match="line 1"):
        trusted_keys()


def test_the_development_key_counts_from_source_but_not_in_an_installed_build(monkeypatch):
    key = Ed25519PrivateKey.generate().public_key()
    monkeypatch.setenv(DEV_KEY_ENV, public_key_text(key))
    assert [public_key_text(k) for k in trusted_keys()] == [public_key_text(key)]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    with pytest.raises(NoReleaseKeyError):  # an installed build ignores the variable
        trusted_keys()


def test_packaging_is_the_library_even_from_the_repository_root():
    # the repository has a packaging/ folder (no __init__.py) and tests run from its root
    code = "import packaging.version, sys; print(packaging.version.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "PATH": ""},
    )
    library = out.stdout.strip()
    assert library.endswith("packaging/version.py")
    assert not library.startswith(str(REPO / "packaging"))
    import packaging.version

    assert packaging.version.Version("1.10") > packaging.version.Version("1.9")
    assert not packaging.version.__file__.startswith(str(REPO / "packaging"))
