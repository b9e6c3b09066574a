"""Settings > Updates: the release feed's URL and the weekly check on start."""

from __future__ import annotations

from urllib.parse import urlsplit

from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QLineEdit, QWidget

from lantide.ui.theme import colors
from lantide.workspace.settings import UpdateSettings


class UpdateSettingsPage(QWidget):
    def __init__(self, updates: UpdateSettings, parent: QWidget | None = None):
        from lantide.update.check import baked_feed_url

        super().__init__(parent)
        self.setObjectName("UpdateSettingsPage")
        baked = baked_feed_url()
        self.feed_edit = QLineEdit(updates.feed_url, self)
        self.feed_edit.setObjectName("UpdateFeedUrl")
        self.feed_edit.setPlaceholderText(baked or "none: Lantide does not look for updates")
        self.feed_edit.setClearButtonEnabled(True)
        self.feed_edit.setToolTip(
            "The address of the release feed (version_meta.json). "
            "Leave it empty to use the one this build came with."
        )
        self.weekly_check = QCheckBox("Check for updates once a week when Lantide starts", self)
        self.weekly_check.setChecked(updates.check_weekly)
        note = QLabel(
            "Lantide contacts the feed only when a feed is set and the weekly check "
            "is on, or when you choose Help > Check for updates. An update is "
            "installed only when it is signed with Lantide's release key, which "
            "ships with the app and cannot be changed here.",
            self,
        )
        note.setWordWrap(True)
        note.setStyleSheet(f"color: {colors().muted.name()};")
        form = QFormLayout(self)
        form.addRow("Release feed URL", self.feed_edit)
        form.addRow("", self.weekly_check)
        form.addRow(note)

    def apply_to(self, updates: UpdateSettings) -> str | None:
        """Copy the page into ``updates``; an error message when the URL is wrong."""
        url = self.feed_edit.text().strip()
        if url and (urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc):
            return (
                f"The release feed URL {url!r} must start with https:// (or http://) "
                f"and name a server."
            )
        updates.feed_url = url
        updates.check_weekly = self.weekly_check.isChecked()
        return None
