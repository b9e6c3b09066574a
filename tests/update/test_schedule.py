"""The weekly check on start: due after a week, not before, never when turned off or when
no feed is known; its state lives in the user's config folder."""

from datetime import UTC, datetime, timedelta

from lantide.update.schedule import is_check_due, last_check, record_check, state_path

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
FEED = "https://example.invalid/version_meta.json"


def test_never_checked_is_due():
    assert is_check_due(True, FEED, NOW)


def test_checked_two_days_ago_is_not_due():
    record_check(NOW - timedelta(days=2))
    assert not is_check_due(True, FEED, NOW)


def test_checked_a_week_ago_is_due():
    record_check(NOW - timedelta(days=7, minutes=1))
    assert is_check_due(True, FEED, NOW)


def test_turned_off_or_without_a_feed_it_is_never_due():
    assert not is_check_due(False, FEED, NOW)
    assert not is_check_due(True, "", NOW)


def test_a_check_in_the_future_means_the_clock_went_back_and_is_due():
    record_check(NOW + timedelta(days=30))
    assert is_check_due(True, FEED, NOW)


def test_the_state_is_in_the_user_config_dir_and_survives_garbage(isolated_user_dirs):
    record_check(NOW)
    assert state_path() == isolated_user_dirs / "config" / "update-check.json"
    assert last_check() == NOW
    state_path().write_text("{broken")
    assert last_check() is None and is_check_due(True, FEED, NOW)
