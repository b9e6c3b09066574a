import json

import pytest

from lantide.errors import CorruptFileError
from lantide.workspace import paths, secrets
from lantide.workspace.settings import (
    ModelProfile,
    Settings,
    SettingsError,
    load_settings,
    resolve_profile,
    save_settings,
)

KEY = "sk-test-5f2c9a1e-never-on-disk"


def _all_files_text(root):
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def test_round_trip_without_any_key_on_disk(isolated_user_dirs, memory_keyring):
    settings = Settings()
    settings.upsert_profile(ModelProfile("work", "https://llm.example/v1", "gpt-4o", 128000))
    settings.upsert_profile(ModelProfile("cheap", "http://localhost:11434/v1", "llama3.1"))
    settings.secondary_profile = "cheap"
    settings.add_recent_workspace("/tmp/a")
    settings.query.timeout_seconds = 30
    secrets.set_api_key("work", KEY)
    save_settings(settings)

    loaded = load_settings()
    assert loaded.primary_profile == "work" and loaded.secondary_profile == "cheap"
    assert loaded.profile("work").context_window == 128000
    assert loaded.query.timeout_seconds == 30
    assert loaded.recent_workspaces[0].endswith("/tmp/a")
    assert secrets.get_api_key("work") == KEY
    assert KEY not in _all_files_text(isolated_user_dirs)
    assert paths.settings_path().is_file()

    resolved = resolve_profile(loaded)
    assert resolved.api_key == KEY and resolved.model == "gpt-4o"
    assert KEY not in repr(resolved) and KEY not in json.dumps(resolved.public_dict())
    secondary = resolve_profile(loaded, "secondary")
    assert secondary.model == "llama3.1" and secondary.api_key is None


def test_environment_overrides_the_active_profile(monkeypatch):
    settings = Settings()
    settings.upsert_profile(ModelProfile("work", "https://llm.example/v1", "gpt-4o", 128000))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9999/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("LANTIDE_MODEL", "qwen2.5")
    resolved = resolve_profile(settings)
    assert (resolved.base_url, resolved.model, resolved.api_key) == (
        "http://127.0.0.1:9999/v1",
        "qwen2.5",
        "env-key",
    )
    assert resolved.context_window is None  # another model: its window is not assumed
    assert set(resolved.overridden) == {"OPENAI_BASE_URL", "LANTIDE_MODEL", "OPENAI_API_KEY"}


def test_environment_alone_configures_a_model(monkeypatch):
    assert resolve_profile(Settings()) is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9999/v1")
    assert resolve_profile(Settings()).base_url == "http://127.0.0.1:9999/v1"


def test_no_keyring_backend_means_env_only_and_nothing_written(isolated_user_dirs, monkeypatch):
    import keyring
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    assert not secrets.keyring_available()
    with pytest.raises(secrets.NoKeyringError) as err:
        secrets.set_api_key("work", KEY)
    assert "OPENAI_API_KEY" in err.value.hint
    assert secrets.get_api_key("work") is None
    assert KEY not in _all_files_text(isolated_user_dirs)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    settings = Settings()
    settings.upsert_profile(ModelProfile("work"))
    assert resolve_profile(settings).api_key == KEY


def test_a_secret_is_never_saved_in_settings(isolated_user_dirs):
    settings = Settings()
    settings.extra["profiles_extra"] = {"api_key": KEY}
    with pytest.raises(SettingsError, match="refusing to write a secret"):
        save_settings(settings)
    assert not paths.settings_path().exists()


def test_unknown_keys_are_kept_and_broken_file_is_not_replaced(isolated_user_dirs):
    path = paths.settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "future_option": [1, 2]}))
    s = load_settings()
    s.appearance = "dark"
    save_settings(s)
    assert json.loads(path.read_text())["future_option"] == [1, 2]
    path.write_text("{not json")
    with pytest.raises(CorruptFileError, match="settings.json"):
        load_settings()
    assert path.read_text() == "{not json"


def test_recent_workspaces_are_unique_and_bounded(tmp_path):
    s = Settings()
    for i in range(15):
        s.add_recent_workspace(tmp_path / f"w{i}")
    s.add_recent_workspace(tmp_path / "w3")
    assert len(s.recent_workspaces) == 10
    assert s.recent_workspaces[0].endswith("w3")
    assert len(set(s.recent_workspaces)) == 10


def test_environment_does_not_redirect_an_explicit_secondary_profile(monkeypatch, memory_keyring):
    settings = Settings()
    settings.upsert_profile(ModelProfile("main", "https://llm.example/v1", "gpt-4o"))
    settings.upsert_profile(ModelProfile("cheap", "http://localhost:11434/v1", "llama3.1", 8192))
    settings.secondary_profile = "cheap"
    secrets.set_api_key("cheap", "cheap-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9999/v1")
    monkeypatch.setenv("LANTIDE_MODEL", "qwen2.5")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    primary = resolve_profile(settings)
    secondary = resolve_profile(settings, "secondary")
    assert (primary.base_url, primary.model, primary.api_key) == (
        "http://127.0.0.1:9999/v1",
        "qwen2.5",
        "env-key",
    )
    assert (secondary.base_url, secondary.model, secondary.api_key, secondary.context_window) == (
        "http://localhost:11434/v1",
        "llama3.1",
        "cheap-key",
        8192,
    )
    # without an explicit secondary, background calls follow the (overridden) primary
    settings.secondary_profile = None
    assert resolve_profile(settings, "secondary").model == "qwen2.5"


def test_a_settings_file_that_cannot_be_read_is_never_overwritten(isolated_user_dirs):
    from lantide.errors import LantideError
    from lantide.workspace import paths
    from lantide.workspace.settings import Settings, load_settings_or_defaults, save_settings

    path = paths.settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{ not json")
    settings, problem = load_settings_or_defaults()
    assert settings == Settings() and str(path) in problem.message
    with pytest.raises(LantideError) as info:
        save_settings(settings)
    assert "not overwritten" in info.value.message and "move it aside" in info.value.hint
    assert path.read_text() == "{ not json"
