"""The first run of an installed (frozen) build: the sample workspace and every setting go
to the user's platformdirs folders, never into the install folder, even when the app is
started from inside that folder and the folder is read-only.

The install is simulated as PyInstaller lays it out: ``INSTALL/lantide`` (the program) and
``INSTALL/_internal/lantide`` with its ``_data/prompts`` and ``_data/resources``; the app
runs from that copy with ``sys.frozen`` and ``sys._MEIPASS`` set, and with the user's
folders found by platformdirs itself (no ``LANTIDE_*_DIR`` overrides).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

LAUNCHER = """
import os, sys
internal = sys.argv[1]
sys.frozen = True
sys._MEIPASS = internal
sys.executable = os.path.join(os.path.dirname(internal), "lantide")
sys.path.insert(0, internal)
import lantide
print(lantide.__file__, flush=True)
from lantide.cli.main import main
sys.exit(main([]))
"""


def _install(target: Path) -> Path:
    internal = target / "_internal"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "lantide", internal / "lantide", ignore=ignore)
    shutil.copytree(REPO / "prompts", internal / "lantide" / "_data" / "prompts", ignore=ignore)
    shutil.copytree(REPO / "resources", internal / "lantide" / "_data" / "resources", ignore=ignore)
    (target / "lantide").write_text("#!/bin/sh\n# the frozen program (not run here)\n")
    return internal


def _snapshot(root: Path) -> dict[str, tuple]:
    return {
        str(p.relative_to(root)): (
            p.is_dir(),
            p.stat().st_size if p.is_file() else 0,
            p.stat().st_mtime_ns,
        )
        for p in [root, *root.rglob("*")]
    }


def _read_only(root: Path, writable: bool) -> None:
    for p in [root, *root.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(
            mode | stat.S_IWUSR
            if writable
            else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        )


@pytest.mark.slow
def test_a_frozen_first_run_writes_only_to_the_user_folders(tmp_path):
    install = tmp_path / "opt" / "lantide"
    internal = _install(install)
    home = tmp_path / "home"
    launcher = tmp_path / "launch_frozen.py"
    launcher.write_text(LAUNCHER)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANTIDE_", "XDG_", "PYTHON"))}
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "TMPDIR": str(tmp_path / "tmp"),
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHONPATH": str(REPO / "tests" / "_netblock"),  # the network stays closed
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
    )
    (tmp_path / "tmp").mkdir()
    sample = home / ".local" / "share" / "lantide" / "sample-workspace"
    settings_file = home / ".config" / "lantide" / "settings.json"
    _read_only(install, writable=False)
    before = _snapshot(install)
    try:
        # started from inside the install folder: a relative write would land there
        app = subprocess.Popen(
            [sys.executable, "-B", str(launcher), str(internal)],
            cwd=install,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lock = sample / ".lantide" / "lock"
        try:
            deadline = time.monotonic() + 90
            while not (
                lock.exists()
                and lock.read_text().strip() == str(app.pid)
                and settings_file.exists()
            ):
                assert app.poll() is None, app.stderr.read()
                assert time.monotonic() < deadline, (
                    "the app did not open the sample in the user data folder; new in the "
                    f"install folder: {sorted(set(_snapshot(install)) - set(before))}"
                )
                time.sleep(0.2)
        finally:
            app.terminate()
            out, err = app.communicate(timeout=30)
        after = _snapshot(install)
    finally:
        _read_only(install, writable=True)
    assert out.splitlines()[0] == str(internal / "lantide" / "__init__.py")  # the installed copy
    assert after == before, "the first run changed the install folder: " + ", ".join(
        sorted(set(after) ^ set(before)) or [k for k in after if after[k] != before[k]]
    )
    assert (sample / "projects" / "q3-churn" / "plan.md").is_file()
    assert json.loads(settings_file.read_text())["recent_workspaces"][0] == str(sample.resolve())
    assert f"creating the sample workspace in {sample}" in err
