"""The settings dialog: model profiles with keys in the keyring (never in a file), Test
connection against a real OpenAI-compatible loopback server, roles, limits, appearance,
and refusals that keep what was typed."""

from __future__ import annotations

import json
import socket

from PySide6.QtWidgets import QDialog

from lantide.ui.settings.settings_dialog import SettingsDialog
from lantide.workspace import paths, secrets
from lantide.workspace.settings import ModelProfile, load_settings, save_settings


def _dialog(qtbot, services) -> SettingsDialog:
    dialog = SettingsDialog(services)
    qtbot.addWidget(dialog)
    return dialog


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fill_profile(dialog, name: str, base_url: str, model: str, key: str = "") -> None:
    dialog.add_profile()
    dialog.name_edit.setText(name)
    dialog.name_edit.editingFinished.emit()
    dialog.base_url.setCurrentText(base_url)
    dialog.model_edit.setCurrentText(model)
    if key:
        dialog.key_edit.setText(key)
        dialog.key_edit.editingFinished.emit()


def test_profile_key_goes_to_the_keyring_and_never_to_the_file(
    qtbot, shell_services, memory_keyring
):
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    assert "No model profile yet" in dialog.test_result.text()
    _fill_profile(
        dialog, "work", "https://llm.example.test/v1", "gpt-4o-mini", key="sk-secret-123456"
    )
    dialog.secondary_combo.setCurrentText("work")
    dialog.timeout_spin.setValue(42)
    assert dialog.workers_spin.text() == "automatic"
    dialog.workers_spin.setValue(2)
    dialog.iterations_spin.setValue(7)
    assert dialog.continue_spin.text() == "off: ask me"  # off by default
    dialog.continue_spin.setValue(2)
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    assert memory_keyring.store[("lantide", "profile:work")] == "sk-secret-123456"
    raw = paths.settings_path().read_text(encoding="utf-8")
    assert "sk-secret" not in raw
    saved = json.loads(raw)
    assert saved["primary_profile"] == "work" and saved["secondary_profile"] == "work"
    assert saved["profiles"] == [
        {
            "name": "work",
            "base_url": "https://llm.example.test/v1",
            "model": "gpt-4o-mini",
            "context_window": None,
        }
    ]
    assert saved["query"]["timeout_seconds"] == 42 and saved["agent"]["max_iterations"] == 7
    assert saved["agent"]["auto_continue_rounds"] == 2
    assert saved["query"]["source_run_workers"] == 2
    assert services.settings.primary_profile == "work"  # the app sees it at once


def test_renaming_and_removing_profiles_moves_and_forgets_keys(
    qtbot, shell_services, memory_keyring
):
    settings = load_settings()
    settings.upsert_profile(ModelProfile("old", "http://localhost:1234/v1", "qwen2.5"))
    save_settings(settings)
    secrets.set_api_key("old", "sk-old")
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    qtbot.waitUntil(lambda: dialog.stored.get("old") is True, timeout=5_000)
    assert "stored in the system keyring" in dialog.key_edit.placeholderText()
    dialog.name_edit.setText("renamed")
    dialog.name_edit.editingFinished.emit()
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    assert secrets.get_api_key("renamed") == "sk-old" and secrets.get_api_key("old") is None
    assert load_settings().primary_profile == "renamed"

    dialog = _dialog(qtbot, services)
    dialog.remove_profile()
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    assert load_settings().profiles == [] and secrets.get_api_key("renamed") is None


def test_test_connection_reports_models_and_context_window(qtbot, shell_services, fake_openai):
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    _fill_profile(dialog, "local", fake_openai.base_url, "fake-model", key="sk-typed-key")
    dialog.test_connection()
    qtbot.waitUntil(lambda: dialog.test_button.isEnabled(), timeout=20_000)
    text = dialog.test_result.text()
    assert "Connected: 1 model available" in text, text
    assert "fake-model" in text
    assert "32,768 tokens (reported by the endpoint)" in text
    assert dialog.model_edit.findText("fake-model") >= 0
    auth = [
        r.headers.get("Authorization") or r.headers.get("authorization")
        for r in fake_openai.requests
        if r.path.startswith("/v1/models")
    ]
    assert auth and all(a == "Bearer sk-typed-key" for a in auth)
    assert load_settings().profiles == []  # testing saves nothing


def test_test_connection_explains_a_failure(qtbot, shell_services):
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    _fill_profile(
        dialog, "down", f"http://127.0.0.1:{_free_port()}/v1", "m", key="sk-should-not-show"
    )
    dialog.test_connection()
    qtbot.waitUntil(lambda: dialog.test_button.isEnabled(), timeout=30_000)
    text = dialog.test_result.text()
    assert "✗" in text and "could not be reached" in text
    assert "sk-should-not-show" not in text


def test_invalid_input_is_refused_and_kept(qtbot, shell_services):
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    _fill_profile(dialog, "bad", "llm.example.test", "m")
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    # the error is the profile's, shown at it on the Models page
    assert not dialog.profile_error.isHidden() and dialog.error_label.isHidden()
    assert "must start with http:// or https://" in dialog.profile_error.text()
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Models"
    assert dialog.result() == 0
    assert "bad" not in [
        p["name"] for p in json.loads(paths.settings_path().read_text(encoding="utf-8"))["profiles"]
    ]
    assert dialog.base_url.currentText() == "llm.example.test"


def test_a_profile_with_a_problem_does_not_hold_back_the_other_pages(qtbot, shell_services):
    settings = load_settings()
    settings.upsert_profile(ModelProfile("work", "https://llm.example.test/v1", "gpt-4o"))
    save_settings(settings)
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    dialog.show()
    dialog.base_url.setCurrentText("llm.example.test/v1")  # "work": the scheme forgotten
    dialog.model_edit.setCurrentText("gpt-4.1")
    dialog.show_page("Appearance")
    next(
        b for b in dialog.appearance_group.buttons() if b.property("appearance") == "light"
    ).setChecked(True)
    dialog.timeout_spin.setValue(42)
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    saved = json.loads(paths.settings_path().read_text(encoding="utf-8"))
    assert saved["appearance"] == "light" and saved["query"]["timeout_seconds"] == 42
    # the profile as it was last saved, not the half-edited one
    assert saved["profiles"] == [
        {
            "name": "work",
            "base_url": "https://llm.example.test/v1",
            "model": "gpt-4o",
            "context_window": None,
        }
    ]
    assert services.settings.appearance == "light"
    # the dialog stays open at the profile, with what was typed and where the error is
    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Models"
    assert dialog.profile_list.currentItem().text() == "work"
    assert dialog.base_url.currentText() == "llm.example.test/v1"
    assert dialog.model_edit.currentText() == "gpt-4.1"
    error = dialog.profile_error.text()
    assert "'work'" in error and "http://" in error and "Everything else was saved" in error
    assert not dialog.error_label.isVisible()
    # fixed, OK saves it and closes
    dialog.base_url.setCurrentText("https://llm.example.test/v1")
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert load_settings().profile("work").model == "gpt-4.1"
    assert load_settings().appearance == "light"


def test_a_renamed_profile_with_a_problem_keeps_its_old_name_and_key(qtbot, shell_services):
    settings = load_settings()
    settings.upsert_profile(ModelProfile("old", "http://localhost:1234/v1", "qwen2.5"))
    save_settings(settings)
    secrets.set_api_key("old", "sk-old-key")
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    dialog.name_edit.setText("new")
    dialog.name_edit.editingFinished.emit()
    dialog.model_edit.setCurrentText("")
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    assert [p.name for p in load_settings().profiles] == ["old"]
    assert load_settings().primary_profile == "old"
    assert secrets.get_api_key("old") == "sk-old-key" and not secrets.get_api_key("new")
    assert "enter a model name" in dialog.profile_error.text()
    assert dialog.name_edit.text() == "new"
    dialog.model_edit.setCurrentText("qwen3")
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    assert [p.name for p in load_settings().profiles] == ["new"]
    assert secrets.get_api_key("new") == "sk-old-key" and not secrets.get_api_key("old")


def test_appearance_choice_is_saved(qtbot, shell_services):
    services = shell_services(query=False, watcher=False)
    dialog = _dialog(qtbot, services)
    dark = next(b for b in dialog.appearance_group.buttons() if b.property("appearance") == "dark")
    dark.setChecked(True)
    with qtbot.waitSignal(dialog.sig_settings_saved, timeout=10_000):
        dialog.save()
    assert load_settings().appearance == "dark"
    from PySide6.QtWidgets import QApplication

    from lantide.ui.theme import install_theme

    install_theme(QApplication.instance(), "light")  # leave the app as other tests expect
