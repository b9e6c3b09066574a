"""Help > Check for updates against a loopback release server: the notes, the download
with progress, the hand-off, and what the analyst sees when a step fails or is cancelled.
Also the Updates page of the settings and the weekly check on start."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from lantide.ui.update_dialog import AVAILABLE, DONE, DOWNLOADING, FAILED, UP_TO_DATE, UpdateDialog
from lantide.ui.workers import WorkerPool
from lantide.update.fetch import CHUNK
from lantide.update.install import CURRENT, NEXT, apply_pending_switch
from lantide.update.keys import DEV_KEY_ENV
from tests.update.bundles import make_bundle, make_tarball
from tests.update.feed_server import FeedServer, Release, Route

VERSION = "9.1.0"


@pytest.fixture
def server():
    s = FeedServer()
    yield s
    s.close()


@pytest.fixture
def pool():
    workers = WorkerPool()
    yield workers
    workers.cancel_all()
    workers.wait(10_000)


@pytest.fixture
def tar_release(server, tmp_path) -> Release:
    body = make_tarball(tmp_path / "build.tar.gz", VERSION).read_bytes()
    return Release(
        server,
        version=VERSION,
        asset_body=body,
        notes="## What's new\n- Source Run is **twice as fast**.\n- Fixes.",
    )


def open_dialog(qtbot, pool, release, tmp_path, **kw) -> UpdateDialog:
    root = tmp_path / "apps"
    if not root.exists():
        make_bundle(root, "9.0.0")
    kw.setdefault("keys", release.keys)
    dialog = UpdateDialog(
        pool,
        release.feed_url,
        current="9.0.0",
        kind="linux-tar",
        asset_key=release.asset_key,
        install_root=root,
        download_dir=tmp_path / "downloads",
        **kw,
    )
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def wait_state(qtbot, dialog, *states):
    qtbot.waitUntil(lambda: dialog.state in states, timeout=15_000)


def test_a_good_update_shows_the_notes_downloads_verifies_and_unpacks(
    qtbot, pool, tar_release, tmp_path
):
    dialog = open_dialog(qtbot, pool, tar_release, tmp_path)
    wait_state(qtbot, dialog, AVAILABLE)
    assert dialog.headline.text() == f"Lantide {VERSION} is available (you have 9.0.0)."
    assert "twice as fast" in dialog.notes.toPlainText()
    assert dialog.notes.isVisible() and dialog.install_button.isVisible()
    assert dialog.install_button.isDefault()
    progress = []
    dialog.progress.valueChanged.connect(progress.append)
    dialog.install_button.click()
    wait_state(qtbot, dialog, DONE, FAILED)
    assert dialog.state == DONE, dialog.error.text()
    assert progress and progress[-1] == 1000
    root = tmp_path / "apps"
    assert (root / f"lantide-{VERSION}" / "lantide").is_file()
    assert dialog.headline.text() == f"Lantide {VERSION} is ready"
    assert "restart" in dialog.detail.text()
    assert apply_pending_switch(root) == root / f"lantide-{VERSION}"
    assert os.readlink(root / CURRENT) == f"lantide-{VERSION}"
    assert dialog.close_button.isVisible() and not dialog.cancel_button.isVisible()


def test_a_badly_signed_feed_is_refused_with_a_clear_message(
    qtbot, pool, tar_release, tmp_path, server
):
    signed = json.loads(server.routes["/version_meta.json"].body)
    signed["version"] = "99.0"  # changed after signing
    server.routes["/version_meta.json"] = Route(json.dumps(signed).encode())
    dialog = open_dialog(qtbot, pool, tar_release, tmp_path)
    wait_state(qtbot, dialog, FAILED)
    assert dialog.headline.text() == "Lantide could not check for updates"
    assert "does not carry a valid signature" in dialog.error.text()
    assert dialog.error.isVisible() and dialog.retry_button.isVisible()
    assert not dialog.install_button.isVisible() and not dialog.notes.isVisible()
    assert server.requests == ["/version_meta.json"]


def test_a_download_with_the_wrong_hash_installs_nothing(
    qtbot, pool, tar_release, tmp_path, server
):
    other = make_tarball(
        tmp_path / "other.tar.gz", VERSION, {f"lantide-{VERSION}/evil": b"x"}
    ).read_bytes()
    tar_release.payload["assets"][tar_release.asset_key]["size"] = len(other)
    tar_release.publish()
    server.routes["/dl/lantide-update.tar.gz"] = Route(other)
    assert (
        hashlib.sha256(other).hexdigest()
        != tar_release.payload["assets"][tar_release.asset_key]["sha256"]
    )
    dialog = open_dialog(qtbot, pool, tar_release, tmp_path)
    wait_state(qtbot, dialog, AVAILABLE)
    dialog.install_button.click()
    wait_state(qtbot, dialog, FAILED)
    assert dialog.headline.text() == f"Lantide {VERSION} was not installed"
    assert "is not the one the signed feed describes" in dialog.error.text()
    assert dialog.install_button.text() == "Try again"
    assert list((tmp_path / "downloads").iterdir()) == []
    assert sorted(p.name for p in (tmp_path / "apps").iterdir()) == ["lantide-9.0.0"]


def test_cancel_mid_download_stops_it_and_offers_to_download_again(qtbot, pool, server, tmp_path):
    release = Release(server, version=VERSION, asset_body=b"\1" * (8 * CHUNK))
    route = Route(release.asset_body, stall_after=2 * CHUNK)
    server.routes["/dl/lantide-update.tar.gz"] = route
    dialog = open_dialog(qtbot, pool, release, tmp_path)
    wait_state(qtbot, dialog, AVAILABLE)
    dialog.install_button.click()
    qtbot.waitUntil(lambda: dialog.progress.value() > 0, timeout=15_000)
    assert dialog.state == DOWNLOADING and dialog.cancel_button.isVisible()
    assert dialog.progress_label.text().endswith(" of 524 KB")
    dialog.cancel_button.click()
    wait_state(qtbot, dialog, FAILED)
    assert not route.finished.is_set()  # the UI did not wait for the stalled server
    assert dialog.headline.text() == "Download cancelled"
    assert not dialog.error.isVisible()
    assert dialog.install_button.text() == "Download again" and dialog.install_button.isVisible()
    assert list((tmp_path / "downloads").iterdir()) == []
    assert sorted(p.name for p in (tmp_path / "apps").iterdir()) == ["lantide-9.0.0"]


@pytest.mark.parametrize(
    "current, headline",
    [
        (VERSION, f"You have the latest version, Lantide {VERSION}."),
        ("10.0", "older than this version (10.0)"),
    ],
)
def test_the_same_or_an_older_release_is_not_offered(
    qtbot, pool, tar_release, tmp_path, current, headline
):
    root = tmp_path / "apps"
    make_bundle(root, "9.0.0")
    dialog = UpdateDialog(
        pool,
        tar_release.feed_url,
        keys=tar_release.keys,
        current=current,
        kind="linux-tar",
        asset_key=tar_release.asset_key,
        install_root=root,
    )
    qtbot.addWidget(dialog)
    wait_state(qtbot, dialog, UP_TO_DATE)
    assert headline in dialog.headline.text()
    assert dialog.install_button.isHidden() and dialog.notes.isHidden()
    assert tar_release.server.requests == ["/version_meta.json"]  # nothing downloaded


def test_help_menu_opens_the_dialog_on_the_feed_of_the_settings(
    qtbot, main_window, server, monkeypatch
):
    release = Release(server, version="99.0")
    monkeypatch.setenv(DEV_KEY_ENV, release.public_text)  # a run from source: dev key allowed
    main_window.services.settings.updates.feed_url = release.feed_url
    help_menu = next(a.menu() for a in main_window.menuBar().actions() if a.text() == "&Help")
    action = next(a for a in help_menu.actions() if a.text() == "Check for updates…")
    action.trigger()
    dialog = main_window.update_dialog
    wait_state(qtbot, dialog, UP_TO_DATE, FAILED)
    # from source there is no installer to run: the notes, and how to update
    assert dialog.headline.text() == "Lantide 99.0 is available (you have 0.1.0)."
    assert "update it with pip" in dialog.detail.text()
    assert "Faster." in dialog.notes.toPlainText()
    dialog.close()


def test_without_a_feed_the_dialog_says_where_to_set_one(qtbot, pool):
    dialog = UpdateDialog(pool, "")
    qtbot.addWidget(dialog)
    wait_state(qtbot, dialog, FAILED)
    # the build has none: said as such, not as a setting the analyst forgot
    assert "This build of Lantide has no release feed" in dialog.error.text()
    assert "the way it was installed" in dialog.error.text()
    assert (
        "Settings &gt; Updates" in dialog.error.text()
        or "Settings > Updates" in dialog.error.text()
    )


def test_the_updates_page_of_the_settings_saves_and_checks_the_url(qtbot, shell_services):
    from lantide.ui.settings.settings_dialog import SettingsDialog
    from lantide.workspace.settings import load_settings

    services = shell_services(query=False, watcher=False)
    dialog = SettingsDialog(services)
    qtbot.addWidget(dialog)
    assert dialog.show_page("Updates")
    page = dialog.updates_page
    assert page.weekly_check.isChecked()
    page.feed_edit.setText("ftp://releases.example.invalid/feed.json")
    dialog.save()
    assert "must start with https://" in dialog.error_label.text()
    page.feed_edit.setText(" https://releases.example.invalid/version_meta.json ")
    page.weekly_check.setChecked(False)
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    saved = load_settings().updates
    assert saved.feed_url == "https://releases.example.invalid/version_meta.json"
    assert saved.check_weekly is False


# -- the weekly check on start -------------------------------------------------------------


@pytest.fixture
def installed_tar(monkeypatch, tmp_path):
    from lantide.update import install

    root = tmp_path / "apps"
    make_bundle(root, "0.1.0")
    monkeypatch.setattr(install, "install_kind", lambda: "linux-tar")
    monkeypatch.setattr(install, "tar_install_root", lambda: root)
    return root


def _weekly(updates):
    from lantide.ui.update_check import weekly_check

    return weekly_check(None, updates)


def test_the_weekly_check_offers_a_newer_version_when_due(installed_tar, server, monkeypatch):
    from lantide.update.install import machine
    from lantide.update.schedule import last_check
    from lantide.workspace.settings import UpdateSettings

    release = Release(server, version="99.0", asset_key=f"linux-tar-{machine()}")
    monkeypatch.setenv(DEV_KEY_ENV, release.public_text)
    found = _weekly(UpdateSettings(feed_url=release.feed_url))
    assert found is not None and found.feed.version == "99.0"
    assert last_check() is not None
    assert _weekly(UpdateSettings(feed_url=release.feed_url)) is None  # not due again
    assert server.requests == ["/version_meta.json"]


def test_the_weekly_check_turned_off_or_without_a_feed_sends_nothing(
    installed_tar, server, monkeypatch
):
    from lantide.update.schedule import last_check
    from lantide.workspace.settings import UpdateSettings

    release = Release(server, version="99.0")
    monkeypatch.setenv(DEV_KEY_ENV, release.public_text)
    assert _weekly(UpdateSettings(feed_url=release.feed_url, check_weekly=False)) is None
    assert _weekly(UpdateSettings(feed_url="")) is None
    assert server.requests == [] and last_check() is None


def test_the_start_switches_a_tarball_install_to_the_staged_version(installed_tar):
    from lantide.update.install import stage_tarball
    from lantide.workspace.settings import UpdateSettings

    stage_tarball(make_tarball(installed_tar / ".." / "u.tgz", "0.2.0"), installed_tar, "0.2.0")
    assert _weekly(UpdateSettings(check_weekly=False)) is None
    assert os.readlink(installed_tar / CURRENT) == "lantide-0.2.0"
    assert not (installed_tar / NEXT).is_symlink()


def test_restart_now_switches_a_tarball_install_and_starts_the_new_version(
    qtbot, pool, tar_release, tmp_path
):
    from PySide6.QtWidgets import QWidget

    host = QWidget()  # stands in for the main window the dialog closes
    qtbot.addWidget(host)
    host.show()
    launched = []
    dialog = open_dialog(qtbot, pool, tar_release, tmp_path, launcher=launched.append, parent=host)
    wait_state(qtbot, dialog, AVAILABLE)
    dialog.install_button.click()
    wait_state(qtbot, dialog, DONE, FAILED)
    assert dialog.restart_button.isVisible() and dialog.restart_button.isDefault()
    root = tmp_path / "apps"
    dialog.restart_button.click()
    assert launched == [[str(root / CURRENT / "lantide")]]
    assert os.readlink(root / CURRENT) == f"lantide-{VERSION}"
    assert not host.isVisible()  # the running version closes


def test_the_weekly_check_on_start_offers_the_update_in_the_message_bar(
    qtbot, main_window, installed_tar, server, monkeypatch
):
    from lantide.ui.update_check import check_on_start
    from lantide.update.install import machine

    release = Release(server, version="99.0", asset_key=f"linux-tar-{machine()}")
    monkeypatch.setenv(DEV_KEY_ENV, release.public_text)
    main_window.services.settings.updates.feed_url = release.feed_url
    check_on_start(main_window)
    bar = main_window.message_bar
    qtbot.waitUntil(lambda: "Lantide 99.0 is available" in bar.text(), timeout=15_000)
    assert bar.action_button.text() == "What's new…"
    bar.action_button.click()
    dialog = main_window.update_dialog
    wait_state(qtbot, dialog, AVAILABLE, FAILED)
    assert dialog.state == AVAILABLE, dialog.error.text()
    assert "Faster." in dialog.notes.toPlainText()
    dialog.close()
