"""Switching to dark while the app runs: the status bar's text, an expanded tool card and the
View → Appearance menu follow."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from lantide.ui.settings.settings_dialog import SettingsDialog
from lantide.ui.theme import install_theme


@pytest.fixture
def back_to_light():
    yield
    install_theme(QApplication.instance(), "light")


def _lightness_of_text(widget) -> int:
    return widget.palette().color(QPalette.ColorRole.WindowText).lightness()


def _background_lightness(widget) -> int:
    """The painted background near the widget's bottom right corner, as seen inside its
    parent (a transparent text box shows what is behind it)."""
    parent = widget.parentWidget()
    image = parent.grab().toImage()
    corner = widget.geometry().bottomRight()
    return image.pixelColor(corner.x() - 3, corner.y() - 3).lightness()


def test_the_status_bar_and_an_expanded_card_turn_dark(main_window, qtbot, back_to_light):
    window = main_window
    window.set_appearance("light")
    window.services.post_message("Saved plan.md")
    card = window.chat.transcript.add_card("c1", "run_query", {"sql": "SELECT 1 AS one"})
    card.set_result(
        True,
        {"status": "ok", "row_count": 1, "columns": [{"name": "one"}], "preview": [{"one": 1}]},
        12,
    )
    card.set_expanded(True)
    window.chat_dock.show()
    qtbot.waitUntil(lambda: card.body.isVisible(), timeout=5_000)
    assert _background_lightness(card.body) > 200
    window.set_appearance("dark")
    status = window.statusBar()
    qtbot.waitUntil(lambda: _background_lightness(status) < 100, timeout=5_000)
    message = status.message_label
    assert message.text() == "Saved plan.md"
    # light text on a dark bar
    assert _lightness_of_text(message) > 150
    assert _background_lightness(status) < 100
    for label in (status.tokens_label, status.model_button):
        assert (
            _lightness_of_text(label) > 150
            or label.palette().color(QPalette.ColorRole.ButtonText).lightness() > 150
        )
    # the expanded card's body is dark too, its text light
    assert _background_lightness(card.body) < 100
    assert card.body.palette().color(QPalette.ColorRole.Text).lightness() > 150


def test_the_appearance_menu_follows_the_settings_dialog(main_window, qtbot, back_to_light):
    window = main_window
    window.set_appearance("system")
    dialog = SettingsDialog(window.services, window)
    qtbot.addWidget(dialog)
    dark = next(b for b in dialog.appearance_group.buttons() if b.property("appearance") == "dark")
    dark.setChecked(True)
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    checked = [a.text() for a in window.appearance_actions if a.isChecked()]
    assert checked == ["Dark"]
