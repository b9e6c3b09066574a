"""User-level directories (platformdirs), overridable for tests and portable setups.

``LANTIDE_CONFIG_DIR`` and ``LANTIDE_DATA_DIR`` replace the platform's user config and
user data directories. ``LANTIDE_CACHE_DIR`` replaces the cache directory; without it, a
``LANTIDE_DATA_DIR`` keeps the cache too (in ``cache/``), so one variable moves everything
a portable setup or a test writes.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "lantide"


def user_config_dir() -> Path:
    override = os.environ.get("LANTIDE_CONFIG_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    override = os.environ.get("LANTIDE_DATA_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_cache_dir() -> Path:
    """Files Lantide can make again (deleting them costs only time)."""
    override = os.environ.get("LANTIDE_CACHE_DIR")
    if override:
        return Path(override)
    data = os.environ.get("LANTIDE_DATA_DIR")
    if data:
        return Path(data) / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def settings_path() -> Path:
    return user_config_dir() / "settings.json"


def user_knowledge_path() -> Path:
    return user_config_dir() / "knowledge.md"


def sample_workspace_dir() -> Path:
    return user_data_dir() / "sample-workspace"
