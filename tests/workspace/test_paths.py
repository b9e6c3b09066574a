"""Where Lantide keeps its own files: a test or a portable setup moves all of them with the
environment variables, the cache included."""

from __future__ import annotations

from pathlib import Path

from lantide.workspace import paths


def test_the_cache_follows_the_data_directory_unless_it_has_its_own(monkeypatch, tmp_path):
    monkeypatch.delenv("LANTIDE_CACHE_DIR", raising=False)
    monkeypatch.setenv("LANTIDE_DATA_DIR", str(tmp_path / "data"))
    assert paths.user_cache_dir() == tmp_path / "data" / "cache"

    monkeypatch.setenv("LANTIDE_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert paths.user_cache_dir() == tmp_path / "elsewhere"


def test_without_overrides_the_cache_is_the_platforms_user_cache(monkeypatch):
    import platformdirs

    for var in ("LANTIDE_CACHE_DIR", "LANTIDE_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    expected = Path(platformdirs.user_cache_dir("lantide", appauthor=False))
    assert paths.user_cache_dir() == expected
    assert paths.user_cache_dir() != paths.user_data_dir()
