"""Issue 28, item 6: a corrupt start-up cache broke every later start (a few flipped bytes
in the marshalled code cache made the app's import fail in 3 of 30 tries, and the bad file
was kept). The caches are gone (issue 31): the app reads nothing from its cache directory
at start-up, so whatever lies there, broken or hostile, cannot stop it. This starts the
real app, as a user would, over three kinds of broken file where the caches used to be,
and checks that each start reaches an idle window and leaves the files as they were."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env

pytestmark = [pytest.mark.security, pytest.mark.slow]


def _old_cache_files(cache_dir: Path, case: str) -> list[Path]:
    """The two files the removed caches wrote, made broken in the way ``case`` names."""
    code = compile("import os\nos._exit(3)\n", "shibokensupport/feature.py", "exec")
    payload = marshal.dumps({"shibokensupport/feature.py": (b"x", 0, code)})
    if case == "flipped":
        payload = bytes(b ^ 0x5A if i % 7 == 3 else b for i, b in enumerate(payload))
    elif case == "truncated":
        payload = payload[: len(payload) // 2]
    # "hostile": a well-formed cache whose code would end the process if it were run
    names = [
        f"qt-support-{importlib.util.MAGIC_NUMBER.hex()}.marshal",
        f"qt-regex-{sys.hexversion:x}.marshal",
    ]
    cache_dir.mkdir(parents=True, exist_ok=True)
    paths = [cache_dir / name for name in names]
    for path in paths:
        path.write_bytes(payload)
    return paths


@pytest.mark.parametrize("case", ["flipped", "truncated", "hostile"])
def test_the_app_starts_whatever_lies_in_its_cache_directory(tmp_path, sample_workspace, case):
    cache_dir = tmp_path / "cache"
    files = _old_cache_files(cache_dir, case)
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    ready = tmp_path / "ready.json"
    env = cli_env(
        {
            "LANTIDE_CACHE_DIR": str(cache_dir),
            "LANTIDE_READY_FILE": str(ready),
            "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        }
    )
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lantide", "gui", str(sample_workspace)],
            env=env,
            cwd=str(REPO),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            deadline = time.monotonic() + 120
            while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert proc.poll() is None, errors.read_text(errors="replace")[-3000:]
            assert json.loads(ready.read_text())["pid"] == proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files} == before
