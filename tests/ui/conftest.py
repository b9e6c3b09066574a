"""Fixtures of the desktop-app shell tests (main window, documents, settings, knowledge).

- ``shell_services(root=None, query=True, watcher=True)``: a factory opening
  :class:`AppServices` on a workspace (the sample workspace by default) and waiting until
  the query service is open; everything it opened is closed at the end of the test.
- ``main_window``: a :class:`MainWindow` on a fresh copy of the sample workspace, shown and
  idle (database open, explorer filled).
- ``fake_openai``: the scripted OpenAI-compatible loopback server (tests/fakes).
- ``write_externally(path, text)``: change a file the way another program does (a plain
  write, not Lantide's atomic write), so the watcher reports it.

The data-side UI tests have their own fixtures in ``tests/ui/conftest_data.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# Fixtures shared by the UI tests, imported here so every test module below sees them.
from tests.fakes.fixtures import fake_openai  # noqa: F401
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.xvfb import xvfb  # noqa: F401
from tests.query.conftest import pg_server  # noqa: F401
from tests.ui.conftest_data import app_services, big_parquet, data_workspace  # noqa: F401


@pytest.fixture
def model_server(monkeypatch):
    with FakeOpenAIServer(background_reply="Revenue by region") as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


def write_externally(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:  # another program
        fh.write(text)


@pytest.fixture
def shell_services(qtbot, sample_workspace):
    from lantide.ui.services import AppServices
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings

    opened = []

    def make(root: Path | None = None, *, query: bool = True, watcher: bool = True):
        ws = Workspace.open(root or sample_workspace)
        services = AppServices(ws, load_settings())
        opened.append(services)
        services.start(query=query, watcher=watcher)
        if query:
            qtbot.waitUntil(
                lambda: services.query is not None or services.query_error is not None,
                timeout=30_000,
            )
            assert services.query_error is None, services.query_error
        if watcher:  # the watches are set up in a worker
            qtbot.waitUntil(lambda: services.watching, timeout=30_000)
        return services

    yield make
    for services in opened:
        services.close()
        services.workspace.close()


def open_main_window(qtbot, services, *, restore: bool = True):
    from lantide.ui.main_window import MainWindow

    window = MainWindow(services, restore=restore)
    # Shut down before pytest-qt closes the window, so unsaved test edits never prompt.
    qtbot.addWidget(window, before_close_func=lambda w: w.shutdown())
    window.resize(1400, 900)
    window.show()
    qtbot.waitUntil(window.is_idle, timeout=30_000)
    return window


@pytest.fixture
def main_window(qtbot, shell_services):
    services = shell_services()
    window = open_main_window(qtbot, services)
    yield window
    window.shutdown()


def open_document_tab(qtbot, window, kind: str = "plan", project: str = "q3-churn"):
    tab = window.open_tab(kind, project)
    assert tab is not None
    qtbot.waitUntil(lambda: tab.snapshot is not None, timeout=15_000)
    return tab
