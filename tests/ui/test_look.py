"""What the analyst sees at a glance, offscreen: the chat dock gets its width next to the
welcome page, code blocks in answers sit on a tinted background, the SQL tab's purpose
field shows its whole hint, and the settings' number fields are not stretched across the
dialog."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget

from lantide.ui.chat.chat_markdown import render_markdown
from tests.ui.conftest import open_main_window


def test_the_chat_dock_is_wide_enough_to_read_on_first_start(qtbot, shell_services):
    window = open_main_window(qtbot, shell_services(), restore=False)  # no saved layout
    assert window.stack.currentWidget() is window.welcome
    qtbot.waitUntil(lambda: window.chat_dock.width() >= 400, timeout=5000)
    assert window.explorer_dock.width() >= 250
    # the welcome page scrolls instead of claiming its full width
    assert window.welcome.minimumSizeHint().width() < 300


def test_code_blocks_in_answers_have_a_tinted_background():
    html = render_markdown(
        "Run:\n\n```sql\nSELECT 1\n```\n\n```\nplain\n```\n", code_background="#123456"
    )
    assert html.count("background-color:#123456") == 2
    assert "SELECT" in html and "plain" in html


def test_the_purpose_field_shows_its_whole_hint(qtbot, shell_services):
    window = open_main_window(qtbot, shell_services(), restore=False)
    tab = window.open_tab("sql", "q3-churn", "clean_orders")
    qtbot.waitUntil(lambda: tab.isVisible(), timeout=5000)
    edit = tab.purpose_edit
    assert edit.width() >= edit.fontMetrics().horizontalAdvance(edit.placeholderText()) + 16
    assert tab.status_label.isVisible()  # not pushed into the toolbar's overflow menu


def test_settings_number_fields_are_not_stretched(qtbot, shell_services):
    from lantide.ui.settings.settings_dialog import SettingsDialog

    dialog = SettingsDialog(shell_services(query=False, watcher=False))
    qtbot.addWidget(dialog)
    dialog.resize(760, 560)
    dialog.show()
    tabs = dialog.findChild(QTabWidget)
    for field in (dialog.timeout_spin, dialog.remote_spin, dialog.iterations_spin):
        page = next(i for i in range(tabs.count()) if tabs.widget(i).isAncestorOf(field))
        tabs.setCurrentIndex(page)
        qtbot.waitUntil(field.isVisible, timeout=5000)
        assert 150 <= field.width() < 380  # the dialog is 760 wide
    dialog.remote_spin.setValue(1_000_000)
    assert dialog.remote_spin.text() == "1,000,000"
