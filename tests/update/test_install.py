"""Handing the verified download to the installer: the tarball unpacked beside the old
version and switched to at the next start; the .deb, .exe and .dmg to the platform."""

import os
import sys
import tarfile
from pathlib import Path

import pytest

from lantide.update import install
from lantide.update.errors import InstallError
from lantide.update.install import (
    CURRENT,
    NEXT,
    apply_pending_switch,
    install_update,
    stage_tarball,
)
from tests.update.bundles import make_bundle, make_tarball


def test_the_tarball_is_unpacked_beside_the_old_version_and_switched_on_restart(tmp_path):
    root = tmp_path / "apps"
    old = make_bundle(root, "0.1.0")
    (root / CURRENT).symlink_to(old.name)
    archive = make_tarball(tmp_path / "update.tar.gz", "0.2.0")

    outcome = install_update(archive, "0.2.0", kind="linux-tar", install_root=root)
    new = root / "lantide-0.2.0"
    assert (new / "lantide").read_text() == "#!/bin/sh\necho 0.2.0\n"
    assert (new / "lantide").stat().st_mode & 0o100
    assert (old / "lantide").read_text() == "#!/bin/sh\necho 0.1.0\n"  # untouched
    assert os.readlink(root / CURRENT) == "lantide-0.1.0"  # not switched while running
    assert outcome.restart_to_finish and str(new) in outcome.message
    assert sorted(p.name for p in root.iterdir()) == sorted(
        [NEXT, CURRENT, "lantide-0.1.0", "lantide-0.2.0"]
    )  # no temporary folder left

    assert apply_pending_switch(root) == new  # the next start
    assert os.readlink(root / CURRENT) == "lantide-0.2.0"
    assert not (root / NEXT).is_symlink()
    assert (root / CURRENT / "lantide").read_text().endswith("0.2.0\n")
    assert apply_pending_switch(root) is None  # once


def test_the_first_switch_creates_current(tmp_path):
    root = tmp_path / "apps"
    make_bundle(root, "0.1.0")  # unpacked by hand: no current link yet
    stage_tarball(make_tarball(tmp_path / "u.tgz", "0.2.0"), root, "0.2.0")
    assert apply_pending_switch(root) == root / "lantide-0.2.0"
    assert os.readlink(root / CURRENT) == "lantide-0.2.0"


def test_a_folder_of_the_user_named_current_is_left_alone(tmp_path):
    root = tmp_path / "apps"
    (root / CURRENT).mkdir(parents=True)
    (root / CURRENT / "notes.txt").write_text("mine")
    stage_tarball(make_tarball(tmp_path / "u.tgz", "0.2.0"), root, "0.2.0")
    assert apply_pending_switch(root) is None
    assert (root / CURRENT / "notes.txt").read_text() == "mine"


def test_an_existing_version_folder_is_not_unpacked_over(tmp_path):
    root = tmp_path / "apps"
    existing = make_bundle(root, "0.2.0")
    (existing / "mine.txt").write_text("kept")
    with pytest.raises(InstallError, match="already exists"):
        stage_tarball(make_tarball(tmp_path / "u.tgz", "0.2.0"), root, "0.2.0")
    assert (existing / "mine.txt").read_text() == "kept"
    assert not (root / NEXT).is_symlink()


@pytest.mark.parametrize(
    "extra, why",
    [
        ({"../escaped.txt": b"x"}, "could not be unpacked"),
        ({"/tmp/absolute-lantide-test.txt": b"x"}, "not a Lantide bundle"),  # made relative
        ({"second-folder/x": b"x"}, "not a Lantide bundle"),
    ],
)
def test_a_hostile_or_wrong_tarball_changes_nothing(tmp_path, extra, why):
    root = tmp_path / "apps"
    make_bundle(root, "0.1.0")
    archive = make_tarball(tmp_path / "u.tgz", "0.2.0", extra)
    with pytest.raises(InstallError, match=why):
        stage_tarball(archive, root, "0.2.0")
    assert sorted(p.name for p in root.iterdir()) == ["lantide-0.1.0"]
    assert not (tmp_path / "escaped.txt").exists()
    assert not Path("/tmp/absolute-lantide-test.txt").exists()


def test_a_garbage_tarball_changes_nothing(tmp_path):
    root = tmp_path / "apps"
    make_bundle(root, "0.1.0")
    archive = tmp_path / "u.tgz"
    archive.write_bytes(b"not a tarball at all")
    with pytest.raises(InstallError, match="could not be unpacked"):
        stage_tarball(archive, root, "0.2.0")
    assert sorted(p.name for p in root.iterdir()) == ["lantide-0.1.0"]


@pytest.mark.parametrize(
    "kind, command",
    [
        ("linux-deb", ["xdg-open", "{path}"]),
        ("windows", ["{path}"]),
        ("macos", ["open", "{path}"]),
    ],
)
def test_packages_go_to_the_platform_s_installer(tmp_path, kind, command):
    path = tmp_path / "lantide-0.2.0.pkg"
    path.write_bytes(b"x")
    launched = []
    outcome = install_update(path, "0.2.0", kind=kind, launcher=launched.append)
    assert launched == [[c.format(path=path) for c in command]]
    assert outcome.quit_to_finish == (kind == "windows")


def test_a_missing_system_installer_gives_the_command_to_run(tmp_path):
    path = tmp_path / "lantide_0.2.0_amd64.deb"
    path.write_bytes(b"x")

    def no_xdg_open(command):
        raise FileNotFoundError(2, "No such file or directory")

    with pytest.raises(InstallError) as err:
        install_update(path, "0.2.0", kind="linux-deb", launcher=no_xdg_open)
    assert f"sudo apt install {path}" in err.value.hint
    assert path.exists()  # kept for installing by hand


def test_a_copy_run_from_python_is_not_installed_over(tmp_path):
    path = tmp_path / "x.tar.gz"
    path.write_bytes(b"x")
    with pytest.raises(InstallError, match="runs from Python"):
        install_update(path, "0.2.0", kind="source")


def test_the_kind_of_installation(monkeypatch, tmp_path):
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert install.install_kind() == "source"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(sys, "executable", "/opt/lantide/lantide")
    assert install.install_kind() == "linux-deb"
    exe = make_bundle(tmp_path / "apps", "0.1.0") / "lantide"
    monkeypatch.setattr(sys, "executable", str(exe))
    assert install.install_kind() == "linux-tar"
    assert install.tar_install_root() == (tmp_path / "apps").resolve()
    assert install.asset_key("linux-tar", "x86_64") == "linux-tar-x86_64"


def test_a_version_folder_appearing_mid_unpack_is_not_replaced(tmp_path, monkeypatch):
    root = tmp_path / "apps"
    make_bundle(root, "0.1.0")
    archive = make_tarball(tmp_path / "u.tgz", "0.2.0")
    real_open = tarfile.open

    def open_then_race(*args, **kwargs):  # a second Lantide finishes first
        other = make_bundle(root, "0.2.0")
        (other / "theirs.txt").write_text("kept")
        return real_open(*args, **kwargs)

    monkeypatch.setattr(tarfile, "open", open_then_race)
    with pytest.raises(InstallError, match="appeared while the update was unpacked"):
        stage_tarball(archive, root, "0.2.0")
    assert (root / "lantide-0.2.0" / "theirs.txt").read_text() == "kept"
    assert sorted(p.name for p in root.iterdir()) == ["lantide-0.1.0", "lantide-0.2.0"]


def test_an_install_folder_lantide_cannot_write_to_is_a_clear_error(tmp_path):
    root = tmp_path / "apps"
    root.write_text("not a folder")  # as root the tests cannot make a folder read-only
    archive = make_tarball(tmp_path / "u.tgz", "0.2.0")
    with pytest.raises(InstallError) as err:
        stage_tarball(archive, root, "0.2.0")
    assert "cannot write beside itself" in err.value.message
    assert f"tar -xzf {archive} -C {root}" in err.value.hint
    assert root.read_text() == "not a folder" and archive.exists()
