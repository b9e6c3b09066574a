"""What "started" means for the desktop app, whatever order the start-up work runs in.

The window reports ``sig_idle`` (the point the start-up benchmark measures as "usable")
only once the database is open, every data file is registered and the explorer lists
the cached tables; by then the docks exist and the previous session's tabs come back.
"""

from __future__ import annotations

import json

from PySide6.QtWidgets import QApplication

_OFFSCREEN = {"QT_QPA_PLATFORM": "offscreen"}  # whatever platform the session runs on


def _tree_labels(window) -> dict[str, list[str]]:
    tree = window.explorer.tree
    out = {}
    for i in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(i)
        out[group.text(0)] = [group.child(j).text(0) for j in range(group.childCount())]
    return out


def _make_cached_table(workspace_root) -> None:
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace

    ws = Workspace.open(workspace_root)
    try:
        with QueryService(ws) as service:
            assert service.run_sql_tab("q3-churn", "clean_orders")["status"] == "ok"
    finally:
        ws.close()


def test_idle_means_database_open_and_the_explorer_lists_the_cached_tables(qtbot, sample_workspace):
    from lantide.ui.app import AppController
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings

    _make_cached_table(sample_workspace)
    controller = AppController(QApplication.instance(), load_settings())
    controller.show_workspace(Workspace.open(sample_workspace, lock=True))
    window = controller.window
    at_idle = {}

    def note() -> None:  # what the window shows at the moment it says it is usable
        at_idle["labels"] = _tree_labels(window)
        at_idle["tables"] = window.explorer.tables()
        at_idle["query"] = controller.services.query

    window.sig_idle.connect(note)
    try:
        qtbot.waitUntil(lambda: "labels" in at_idle, timeout=30_000)
        assert at_idle["query"] is not None
        assert at_idle["tables"] is not None
        assert at_idle["labels"]["Cached tables"] == ["clean_orders"]
        names = {t["name"] for t in at_idle["tables"]}
        assert {"customers", "orders", "products", "clean_orders"} <= names
        # every data file registered, the workbook with its sheets
        assert {t["source"] for t in at_idle["tables"] if t["kind"] in ("data", "sheet")} == {
            "data/customers.csv",
            "data/orders.parquet",
            "data/products.csv",
            "data/targets.xlsx",
        }
    finally:
        controller.close()
        controller.window.close()  # not left on screen over a later test's widgets
        controller.window.deleteLater()


def test_after_start_the_docks_exist_and_the_last_session_is_back(qtbot, sample_workspace):
    from lantide.ui.app import AppController
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings

    session = sample_workspace / ".lantide" / "session.json"
    state = json.loads(session.read_text()) if session.exists() else {}
    state.update(
        {
            "focused_project": "q3-churn",
            "open_tabs": [
                {"kind": "report", "project": "q3-churn", "name": "report.md"},
                {"kind": "sql", "project": "q3-churn", "name": "clean_orders"},
            ],
            "active_tab": {"kind": "sql", "project": "q3-churn", "name": "clean_orders"},
        }
    )
    session.write_text(json.dumps(state))
    controller = AppController(QApplication.instance(), load_settings())
    controller.show_workspace(Workspace.open(sample_workspace, lock=True))
    window = controller.window
    try:
        qtbot.waitUntil(window.is_idle, timeout=30_000)
        qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=10_000)
        # the docks' panels are made once the window is usable, nothing else asked for
        qtbot.waitUntil(
            lambda: all(window.panel_made(n) for n in ("chat", "ledger", "knowledge")),
            timeout=10_000,
        )
        assert [window.tabs.tabText(i) for i in range(2)] == ["report.md", "clean_orders"]
        assert window.tabs.currentIndex() == 1
        for dock in (window.explorer_dock, window.chat_dock, window.ledger_dock):
            assert dock.widget() is not None
        assert window.knowledge_dock.widget() is window.knowledge
        assert window.chat_dock.widget() is window.chat
        assert window.ledger_dock.widget() is window.ledger
        assert window.chat.isVisibleTo(window)
        assert "Projects" in _tree_labels(window)
    finally:
        controller.close()
        controller.window.close()  # not left on screen over a later test's widgets
        controller.window.deleteLater()


_BUILD_ONLY = r"""
import json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
from lantide.ui.main_window import MainWindow
from lantide.ui.services import AppServices
from lantide.workspace.model import Workspace
from lantide.workspace.settings import load_settings

app = QApplication(sys.argv[:1])
services = AppServices(Workspace.open(Path(sys.argv[1])), load_settings())
services.workers.hold()  # as the app does until the first paint
window = MainWindow(services)
heavy = ("lantide.query.history", "lantide.query.sourcerun", "lantide.query.lineage",
         "lantide.query.guard", "lantide.agent.conversation", "duckdb", "sqlglot")
print(json.dumps(sorted(name for name in heavy if name in sys.modules)))
"""


def test_building_the_window_leaves_the_engine_modules_to_the_workers(sample_workspace):
    """What the window's panels read at start-up (query history, conversations) is
    imported in the worker that reads it, not on the UI thread before the first paint."""
    from tests.conftest import run_script_json

    assert run_script_json(_BUILD_ONLY, str(sample_workspace), env=_OFFSCREEN) == []


_PANELS_AT_BUILD = r"""
import json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
from lantide.ui.main_window import MainWindow
from lantide.ui.services import AppServices
from lantide.workspace.model import Workspace
from lantide.workspace.settings import load_settings

app = QApplication(sys.argv[:1])
services = AppServices(Workspace.open(Path(sys.argv[1])), load_settings())
services.workers.hold()  # as the app does until the first paint
window = MainWindow(services)
panels = ("lantide.ui.chat.chat_panel", "lantide.ui.chat.ledger_panel",
          "lantide.ui.explorer.knowledge_panel")
print(json.dumps(sorted(name for name in panels if name in sys.modules)))
"""


def test_the_chat_ledger_and_knowledge_panels_are_not_made_before_the_first_paint(
    sample_workspace,
):
    """Their imports and building came before the window's first paint; now the docks
    are there (the saved layout restores) and the panels come once it is usable."""
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import cli_env

    done = subprocess.run(
        [sys.executable, "-c", _PANELS_AT_BUILD, str(sample_workspace)],
        capture_output=True,
        text=True,
        env=cli_env({"QT_QPA_PLATFORM": "offscreen"}),
        cwd=str(Path(__file__).resolve().parents[2]),
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def _held_window(qtbot, workspace_root):
    """The main window shown with its background work held: the database never opens,
    so the window never becomes usable on its own."""
    from lantide.ui.main_window import MainWindow
    from lantide.ui.services import AppServices
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings

    workspace = Workspace.open(workspace_root)
    services = AppServices(workspace, load_settings())
    services.workers.hold()
    window = MainWindow(services, restore=False)
    with qtbot.waitSignal(window.sig_shown, timeout=10_000):
        window.show()
    return window, workspace


def test_a_dock_brought_up_before_the_panels_are_made_fills_at_once(
    qtbot, sample_workspace, monkeypatch
):
    from lantide.ui.chat.chat_panel import ChatPanel
    from lantide.ui.explorer.knowledge_panel import KnowledgePanel

    asked = []
    monkeypatch.setattr(ChatPanel, "ask", lambda _panel, text: asked.append(text))

    window, workspace = _held_window(qtbot, sample_workspace)
    try:
        assert not window.is_idle()
        assert not window.panel_made("knowledge")  # tabbed behind the explorer
        window.knowledge_dock.raise_()  # the analyst clicks its tab
        QApplication.processEvents()
        assert isinstance(window.knowledge_dock.widget(), KnowledgePanel)
        assert window.knowledge_dock.widget().isVisible()
        assert window.panel_made("knowledge") and not window.panel_made("chat")
        # asking the agent before the panels are made makes the chat and sends it there
        window.services.sig_agent_asked.emit("What is churn?")
        assert asked == ["What is churn?"]
        assert isinstance(window.chat_dock.widget(), ChatPanel)
        assert window.panel_made("chat")
    finally:
        window.shutdown()
        window.close()
        workspace.close()


def test_the_panels_come_even_when_the_database_is_slow_to_open(qtbot, sample_workspace):
    from lantide.ui.chat.chat_panel import ChatPanel
    from lantide.ui.chat.ledger_panel import LedgerPanel

    window, workspace = _held_window(qtbot, sample_workspace)
    try:
        qtbot.waitUntil(
            lambda: all(window.panel_made(n) for n in ("chat", "ledger", "knowledge")),
            timeout=10_000,
        )
        assert not window.is_idle()  # the database has not opened
        assert isinstance(window.chat_dock.widget(), ChatPanel)
        assert isinstance(window.ledger_dock.widget(), LedgerPanel)
        assert window.chat_dock.widget().isVisible()
    finally:
        window.shutdown()
        window.close()
        workspace.close()


def test_the_app_opens_its_database_on_the_connection_started_ahead(
    sample_workspace, duckdb_connect_threads
):
    """The database connects on a thread of its own while the query layer is imported;
    the service gets that connection (no second connect), and afterwards nothing but the
    service holds the file."""
    import subprocess
    import sys

    from lantide.ui.services import _open_query_service
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings

    ws = Workspace.open(sample_workspace, lock=True)
    try:
        service = _open_query_service(None, ws, load_settings())
        try:
            assert duckdb_connect_threads == ["lantide-connect"]
            listed = {t["name"] for t in service.show_tables()["tables"]}
            assert {"customers", "orders", "products"} <= listed
        finally:
            service.close()
    finally:
        ws.close()
    opened = subprocess.run(  # the file is free once the service closed
        [
            sys.executable,
            "-c",
            "import sys, _duckdb; print(_duckdb.connect(sys.argv[1]).execute('SELECT 1')"
            ".fetchone()[0])",
            str(sample_workspace / ".lantide" / "cache.duckdb"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert opened.returncode == 0 and opened.stdout.strip() == "1", opened.stderr[-2000:]


_QT_TYPES_AT_FIRST_PAINT = r"""
import json, sys
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from lantide.ui.main_window import MainWindow
from lantide.ui.services import AppServices
from lantide.workspace.model import Workspace
from lantide.workspace.settings import load_settings

app = QApplication(sys.argv[:1])
services = AppServices(Workspace.open(Path(sys.argv[1])), load_settings())
services.workers.hold()  # as the app does until the first paint
window = MainWindow(services)
window.sig_shown.connect(app.quit)
window.show()
QTimer.singleShot(30_000, app.quit)
app.exec()
import PySide6.QtWidgets as widgets
never = ("QLCDNumber", "QCalendarWidget", "QColorDialog", "QFontDialog", "QFileDialog",
         "QMessageBox", "QInputDialog")
print(json.dumps({"shown": window._painted,
                  "made": sorted(name for name in never if name in vars(widgets))}))
"""


def test_the_first_paint_makes_no_python_type_of_widgets_the_window_does_not_show(
    sample_workspace,
):
    """PySide6 makes a QtWidgets class's Python type (and its enums) on first use. Asking
    for an object of a class it does not wrap (a scroll area's viewport) made it try every
    QtWidgets type, ~70 enum types, 3-17 ms before the first paint; dialogs imported at
    module level cost theirs too. Until the first paint neither happens now."""
    from tests.conftest import run_script_json

    assert run_script_json(_QT_TYPES_AT_FIRST_PAINT, str(sample_workspace), env=_OFFSCREEN) == {
        "shown": True,
        "made": [],
    }
