"""Fixtures every test shares.

- The user's real config, data, cache and keyring are never touched: each test gets its own
  config and data directories and an in-memory keyring; the run has one cache directory.
- The network is closed: a socket may only connect to loopback (the test servers).
- ``sample_workspace`` is a fresh copy of the sample workspace (generated once per run).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

# Offscreen Qt with a desktop-sized screen (the plugin's own is 800x800, smaller than the
# 1400x900 the window tests use: the main window fits itself to its screen).
OFFSCREEN = f"offscreen:configfile={REPO / 'tests' / 'fakes' / 'offscreen_screen.json'}"
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = OFFSCREEN
# Lantide's cache directory (files it can make again) is one for the whole run: never the
# user's, and shared by the app's subprocesses.
_CACHE_DIR = tempfile.mkdtemp(prefix="lantide-test-cache-")
os.environ["LANTIDE_CACHE_DIR"] = _CACHE_DIR
atexit.register(shutil.rmtree, _CACHE_DIR, True)
# The command line's subprocesses share one bytecode cache for the run, outside the source
# tree: each compiles Lantide's modules once instead of every time when the developer's
# shell sets PYTHONDONTWRITEBYTECODE (cli_env; 0.30 -> 0.23 s a `lantide sql`).
_PYCACHE_DIR = tempfile.mkdtemp(prefix="lantide-test-pycache-")
atexit.register(shutil.rmtree, _PYCACHE_DIR, True)
for _var in (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "LANTIDE_MODEL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
):
    os.environ.pop(_var, None)

# -- network: loopback only ------------------------------------------------------------

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0]
    if isinstance(host, bytes):
        host = host.decode()
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or str(host).startswith("127.")


class NetworkBlocked(RuntimeError):
    pass


def _guarded_connect(self, address):
    if not _is_loopback(address):
        raise NetworkBlocked(f"tests may not reach the network: connect to {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    if not _is_loopback(address):
        raise NetworkBlocked(f"tests may not reach the network: connect to {address!r}")
    return _real_connect_ex(self, address)


_real_getaddrinfo = socket.getaddrinfo


def _guarded_getaddrinfo(host, *args, **kwargs):
    if host is not None and not _is_loopback((host,)):
        raise NetworkBlocked(f"tests may not reach the network: lookup of {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex
socket.getaddrinfo = _guarded_getaddrinfo


# -- keyring: in memory ------------------------------------------------------------------

import keyring  # noqa: E402
from keyring.backend import KeyringBackend  # noqa: E402


class MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self):
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        self.store.pop((service, username), None)


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("LANTIDE_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("LANTIDE_DATA_DIR", str(base / "data"))
    yield base


@pytest.fixture(autouse=True)
def memory_keyring():
    backend = MemoryKeyring()
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


# -- workspaces --------------------------------------------------------------------------


@pytest.fixture
def duckdb_connect_threads(monkeypatch) -> list[str]:
    """The names of the threads ``duckdb.connect`` (DuckDB's core) ran on, in order."""
    import threading

    from lantide.query.duckdb_import import duckdb_core

    core = duckdb_core()
    real = core.connect
    threads: list[str] = []

    def connect(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(core, "connect", connect)
    return threads


@pytest.fixture(scope="session")
def _sample_template(tmp_path_factory) -> Path:
    from lantide.workspace.sample import create_sample

    root = tmp_path_factory.mktemp("sample-template") / "ws"
    create_sample(root)
    return root


@pytest.fixture
def sample_workspace(_sample_template, tmp_path) -> Path:
    """A fresh copy of the sample workspace: a path, not opened."""
    target = tmp_path / "sample"
    shutil.copytree(_sample_template, target)
    return target


def set_agent_edits(root: Path, mode: str) -> None:
    """The workspace setting ``agent_edits`` (``review``, the default, or ``apply``)."""
    import json

    from lantide.workspace import layout
    from lantide.workspace.atomic import atomic_write_json

    path = layout.settings_path(root)
    atomic_write_json(path, {**json.loads(path.read_text(encoding="utf-8")), "agent_edits": mode})


@pytest.fixture
def agent_edits_apply(sample_workspace) -> Path:
    """The sample workspace with ``agent_edits: apply``: the agent's edits are written at
    once, for tests of what an edit does to the files rather than of its review."""
    set_agent_edits(sample_workspace, "apply")
    return sample_workspace


@pytest.fixture
def empty_workspace(tmp_path) -> Path:
    from lantide.workspace.model import Workspace

    root = tmp_path / "ws"
    Workspace.create(root)
    return root


# -- the command line as a user runs it ----------------------------------------------------


def cli_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    # the repository first (test the source), then the network block for subprocesses
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), str(REPO / "tests" / "_netblock"), env.get("PYTHONPATH", "")]
    )
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    # no subprocess may reach the developer's real keyring (the tests' keyring is in memory)
    env.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # safe: the bytecode goes to the run's cache
    env.setdefault("PYTHONPYCACHEPREFIX", _PYCACHE_DIR)
    if extra:
        env.update(extra)
    return env


def run_script_json(script: str, *args: str, env: dict | None = None, timeout: float = 240) -> Any:
    """Run ``python -c script ARGS`` as the command line runs (the repository's source, no
    network) and return the JSON object its last line of output prints."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env=cli_env(env),
        cwd=str(REPO),
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def run_cli():
    """Run ``python -m lantide ARGS`` in a subprocess; returns CompletedProcess."""

    def _run(*args, env: dict | None = None, timeout: float = 120, input: str | None = None):
        return subprocess.run(
            [sys.executable, "-m", "lantide", *map(str, args)],
            capture_output=True,
            text=True,
            env=cli_env(env),
            timeout=timeout,
            input=input,
            cwd=str(REPO),
        )

    return _run


# -- the inner loop -------------------------------------------------------------------------

# The command line run as whole processes costs 1-2 s a test (a Python start, then the
# workspace opened); 255 tests do it. They are `slow`: CI runs them every time, the inner
# loop (`-m "not slow and not packaging and not xvfb"`, CONTRIBUTING.md) leaves them out.
WHOLE_PROCESS_FIXTURES = {"run_cli"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if WHOLE_PROCESS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
