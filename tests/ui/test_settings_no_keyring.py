"""Settings on a machine without a keyring: a key that cannot be stored is an error of its
profile, on the Models page; everything else is saved; clearing the key lets OK close; the
hint names the environment variables to use instead."""

from __future__ import annotations

import json

import keyring
from keyring.backends import fail
from PySide6.QtWidgets import QDialog

from lantide.workspace import paths
from lantide.workspace.settings import load_settings
from tests.ui.test_settings_dialog import _dialog, _fill_profile


def test_a_key_without_a_keyring_blocks_only_its_profile(qtbot, shell_services):
    keyring.set_keyring(fail.Keyring())  # the autouse memory keyring is put back afterwards
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    dialog.show()
    _fill_profile(
        dialog, "work", "https://llm.example.test/v1", "gpt-4o-mini", key="sk-secret-123456"
    )
    dialog.show_page("Appearance")
    next(
        b for b in dialog.appearance_group.buttons() if b.property("appearance") == "light"
    ).setChecked(True)
    dialog.timeout_spin.setValue(42)
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    # the other pages were saved, the profile too, but never the key
    raw = paths.settings_path().read_text(encoding="utf-8")
    assert "sk-secret" not in raw
    saved = json.loads(raw)
    assert saved["appearance"] == "light" and saved["query"]["timeout_seconds"] == 42
    assert [p["name"] for p in saved["profiles"]] == ["work"]
    assert services.settings.appearance == "light"
    # the dialog stays, on the Models page, with the error at the profile's key
    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Models"
    assert dialog.profile_list.currentItem().text() == "work"
    error = dialog.profile_error.text()
    assert dialog.profile_error.isVisible() and "work" in error and "keyring" in error
    assert "OPENAI_API_KEY" in error and "OPENAI_BASE_URL" in error
    assert not dialog.error_label.isVisible()
    assert dialog.key_edit.text() == "sk-secret-123456"  # what was typed is kept
    # clearing the field is the way out: OK closes
    dialog.key_edit.clear()
    dialog.key_edit.editingFinished.emit()
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert load_settings().profile("work").model == "gpt-4o-mini"


def test_the_key_field_says_so_before_anything_is_typed(qtbot, shell_services):
    keyring.set_keyring(fail.Keyring())
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    _fill_profile(dialog, "work", "https://llm.example.test/v1", "gpt-4o-mini")
    qtbot.waitUntil(lambda: "no system keyring" in dialog.key_edit.placeholderText(), timeout=5_000)
    assert "OPENAI_API_KEY" in dialog.key_edit.toolTip()
