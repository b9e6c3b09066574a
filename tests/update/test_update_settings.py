"""The update settings: kept in settings.json, edited in the app, hand edits tolerated."""

import json

from lantide.update.check import baked_feed_url, effective_feed_url
from lantide.workspace.settings import Settings, load_settings, save_edited_settings, save_settings


def test_the_update_settings_round_trip_and_default_to_weekly_with_no_feed(isolated_user_dirs):
    fresh = Settings()
    assert fresh.updates.check_weekly is True and fresh.updates.feed_url == ""
    fresh.updates.feed_url = "https://example.invalid/version_meta.json"
    fresh.updates.check_weekly = False
    save_edited_settings(fresh)
    on_disk = json.loads((isolated_user_dirs / "config" / "settings.json").read_text())
    assert on_disk["updates"] == {
        "feed_url": "https://example.invalid/version_meta.json",
        "check_weekly": False,
    }
    loaded = load_settings()
    assert loaded.updates.feed_url == "https://example.invalid/version_meta.json"
    assert loaded.updates.check_weekly is False


def test_hand_edited_update_settings_fall_back_to_defaults(isolated_user_dirs):
    path = isolated_user_dirs / "config" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"updates": {"feed_url": 42, "check_weekly": "no"}}))
    loaded = load_settings()
    assert loaded.updates.feed_url == "" and loaded.updates.check_weekly is True
    save_settings(loaded)  # and it saves


def test_the_source_tree_bakes_no_feed_so_it_never_checks_by_itself():
    assert baked_feed_url() == ""
    assert effective_feed_url("") == ""
    assert effective_feed_url(" https://x.invalid/f.json ") == "https://x.invalid/f.json"
