"""Opening the update dialog from the Help menu, and the weekly check on start.

The weekly check runs in a worker once the window is idle: when it is due (on, a feed URL
known, a week since the last check) it reads the feed and, if a newer version has a build
for this system, offers it in the window's message bar. It says nothing when offline or
when the feed is wrong (the check by hand shows why); a tarball install also switches to
a version staged by the last update (:func:`lantide.update.install.apply_pending_switch`).
"""

from __future__ import annotations

import copy
import logging

from lantide.errors import LantideError
from lantide.workspace.settings import UpdateSettings

log = logging.getLogger(__name__)


def open_update_dialog(window):
    from lantide.ui.update_dialog import UpdateDialog
    from lantide.update.check import effective_feed_url

    services = window.services
    dialog = UpdateDialog(
        services.workers, effective_feed_url(services.settings.updates.feed_url), window
    )
    dialog.open()
    return dialog


def weekly_check(context, updates: UpdateSettings):
    """The weekly check (in a worker): the UpdateCheck to offer, or None."""
    from lantide.update.check import check_for_update, effective_feed_url
    from lantide.update.install import apply_pending_switch, install_kind, tar_install_root
    from lantide.update.schedule import is_check_due, record_check

    if install_kind() == "linux-tar":
        try:
            apply_pending_switch(tar_install_root())
        except OSError as exc:
            log.warning("switching to the staged update: %s", exc)
    url = effective_feed_url(updates.feed_url)
    if not is_check_due(updates.check_weekly, url):
        return None
    record_check()
    try:
        check = check_for_update(url)
    except LantideError as exc:
        log.info("weekly update check: %s", exc.message)
        return None
    return check if check.newer and check.asset is not None else None


def check_on_start(window):
    services = window.services
    return services.workers.submit(
        weekly_check,
        copy.deepcopy(services.settings.updates),
        on_result=lambda found: offer(window, found),
        name="weekly update check",
    )


def offer(window, check) -> None:
    if check is None:
        return
    window.message_bar.show_message(
        check.message, "warning", action=("What's new…", window.check_for_updates)
    )
