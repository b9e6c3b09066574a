"""The main window on the real sample workspace: explorer, tabs, session and layout
restored on the next start, focus, closing with unsaved work, the status bar's running
query and its cancel button, switching workspace, help dialogs and appearance."""

from __future__ import annotations

import json

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QMessageBox

from lantide.ui import tab_area
from lantide.ui.explorer.explorer import ROLE_NODE
from lantide.ui.services import TabRef
from lantide.ui.sql.query_jobs import submit_query
from tests.ui.conftest import open_document_tab, open_main_window


def _tree_labels(window) -> dict[str, list[str]]:
    tree = window.explorer.tree
    out = {}
    for i in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(i)
        out[group.text(0)] = [group.child(j).text(0) for j in range(group.childCount())]
    return out


def _find_child(item, label):
    return next(item.child(j) for j in range(item.childCount()) if item.child(j).text(0) == label)


def test_window_opens_the_workspace_and_lists_it(main_window, qtbot):
    w = main_window
    assert w.windowTitle() == "Sample workspace — Lantide"
    assert w.stack.currentWidget() is w.welcome  # no tab yet
    labels = _tree_labels(w)
    assert labels["Projects"] == ["Q3 churn"]
    assert labels["Data files"] == [
        "customers.csv",
        "orders.parquet",
        "products.csv",
        "targets.xlsx",
    ]
    project = w.explorer.tree.topLevelItem(0).child(0)
    children = [project.child(i).text(0) for i in range(project.childCount())]
    assert children == [
        "Plan",
        "Report",
        "clean_orders.sql",
        "customer_quarters.sql",
        "q3_churn_by_region.sql",
        "Knowledge",
    ]
    qtbot.waitUntil(lambda: w.explorer.tables() is not None, timeout=20_000)
    targets = _find_child(w.explorer.tree.topLevelItem(1), "targets.xlsx")
    assert sorted(targets.child(i).text(0) for i in range(targets.childCount())) == [
        '"targets"."Regional"',
        '"targets"."Segments"',
    ]
    # the toolbar shows the focused project and its status
    assert w.project_combo.currentText() == "Q3 churn"
    assert w.status_combo.currentText() == "planning"
    assert w.status.model_button.text() == "No model configured"


def test_cached_tables_appear_with_row_counts_after_a_run(main_window, qtbot):
    w = main_window
    service = w.services.query
    with qtbot.waitSignal(w.explorer.sig_tree_refreshed, timeout=30_000):
        w.services.workers.submit(
            lambda _c: service.run_sql_tab("q3-churn", "clean_orders"),
            on_result=lambda _r: w.services.notify_tables_changed(),
        )
    qtbot.waitUntil(lambda: "clean_orders" in _tree_labels(w)["Cached tables"], timeout=30_000)
    cached = _find_child(w.explorer.tree.topLevelItem(2), "clean_orders")
    assert cached.text(1).endswith("rows") and cached.text(1) != "0 rows"
    assert "SQL tab clean_orders (q3-churn)" in cached.toolTip(0)


def test_explorer_opens_tabs_and_the_session_is_restored_on_the_next_start(
    qtbot, shell_services, sample_workspace
):
    services = shell_services()
    w = open_main_window(qtbot, services)
    project = w.explorer.tree.topLevelItem(0).child(0)
    w.explorer._activated(_find_child(project, "Report"))  # as a double-click does
    plan = open_document_tab(qtbot, w, "plan")
    assert [w.tabs.tabText(i) for i in range(w.tabs.count())] == ["report.md", "plan.md"]
    assert w.windowTitle() == "plan.md — q3-churn — Sample workspace — Lantide"
    w.tabs.setCurrentIndex(0)
    session_path = sample_workspace / ".lantide" / "session.json"

    def session():
        return json.loads(session_path.read_text()) if session_path.exists() else {}

    # written in a worker shortly after the tabs settle
    qtbot.waitUntil(
        lambda: (session().get("active_tab") or {}).get("kind") == "report", timeout=5_000
    )
    session = session()
    assert [(t["kind"], t["project"], t["name"]) for t in session["open_tabs"]] == [
        ("report", "q3-churn", "report.md"),
        ("plan", "q3-churn", "plan.md"),
    ]
    assert session["focused_project"] == "q3-churn"
    assert plan.title() == "plan.md"

    w.explorer_dock.hide()  # a layout change that must survive the restart
    w.close()
    assert not w.isVisible()
    services.workspace.close()

    again = open_main_window(qtbot, shell_services())
    qtbot.waitUntil(lambda: again.tabs.count() == 2, timeout=10_000)
    assert [again.tabs.tabText(i) for i in range(2)] == ["report.md", "plan.md"]
    assert again.tabs.currentIndex() == 0
    assert again.explorer_dock.isHidden()
    again.shutdown()


def test_focusing_a_project_is_remembered(main_window, qtbot, sample_workspace):
    w = main_window
    w.services.workspace.create_project("Second")
    w.explorer.refresh()
    # another refresh (e.g. row counts arriving) may finish first: wait for the project
    qtbot.waitUntil(lambda: w.project_combo.findText("Second") >= 0, timeout=10_000)
    index = w.project_combo.findText("Second")
    with qtbot.waitSignal(w.services.sig_project_focused, timeout=5_000) as blocker:
        w.project_combo.setCurrentIndex(index)
        w.project_combo.activated.emit(index)
    assert blocker.args == ["Second"]
    session_path = sample_workspace / ".lantide" / "session.json"
    qtbot.waitUntil(
        lambda: (
            session_path.exists()
            and json.loads(session_path.read_text()).get("focused_project") == "Second"
        ),
        timeout=5_000,
    )
    assert w.services.focused_project().name == "Second"
    # the explorer shows the focused project in bold
    qtbot.waitUntil(
        lambda: (
            w.explorer.find_item("project", "Second") is not None
            and w.explorer.find_item("project", "Second").font(0).bold()
        )
    )


def test_project_status_is_set_from_the_toolbar(main_window, qtbot, sample_workspace):
    w = main_window
    project_json = sample_workspace / "projects" / "q3-churn" / "project.json"

    def choose(status):
        index = w.status_combo.findText(status)
        w.status_combo.setCurrentIndex(index)
        w.status_combo.activated.emit(index)

    choose("plan_review")
    qtbot.waitUntil(
        lambda: json.loads(project_json.read_text())["status"] == "plan_review", timeout=10_000
    )
    # executing needs the approved Plan (issue 16): refused, and the combo shows the truth
    choose("executing")
    qtbot.waitUntil(lambda: w.status_combo.currentText() == "plan_review", timeout=10_000)
    assert json.loads(project_json.read_text())["status"] == "plan_review"


@pytest.mark.parametrize("answer", ["cancel", "discard", "save"])
def test_closing_a_dirty_tab_asks(main_window, qtbot, monkeypatch, sample_workspace, answer):
    buttons = {
        "cancel": QMessageBox.StandardButton.Cancel,
        "discard": QMessageBox.StandardButton.Discard,
        "save": QMessageBox.StandardButton.Save,
    }
    asked = []
    monkeypatch.setattr(
        tab_area, "ask_save_changes", lambda parent, names: asked.append(names) or buttons[answer]
    )
    tab = open_document_tab(qtbot, main_window, "report")
    tab.editor.moveCursor(tab.editor.textCursor().MoveOperation.End)
    tab.editor.insertPlainText("\nA new finding.\n")
    assert tab.is_dirty()
    assert main_window.tabs.tabText(0) == "report.md ●"
    closed = main_window.tabs.close_tab(0)
    assert asked == [["report.md"]]
    on_disk = (sample_workspace / "projects" / "q3-churn" / "report.md").read_text()
    if answer == "cancel":
        assert not closed and main_window.tabs.count() == 1
        assert "A new finding." not in on_disk
    elif answer == "discard":
        assert closed and main_window.tabs.count() == 0
        assert "A new finding." not in on_disk
    else:
        assert closed and main_window.tabs.count() == 0
        assert on_disk.endswith("A new finding.\n")


def test_running_query_shows_in_the_status_bar_and_can_be_cancelled(main_window, qtbot):
    w = main_window
    service = w.services.query
    sql = "SELECT count(*) AS n FROM range(50000000000) t(i) WHERE i % 7 = 3"
    outcome = {}
    # as a SQL tab runs it: in its own cancel scope, shown in the status bar
    submit_query(
        w.services,
        lambda _ctx, query: query.run_query(sql),
        label="long count",
        on_result=lambda r: outcome.setdefault("result", r),
        on_error=lambda e: outcome.setdefault("error", e),
    )
    qtbot.waitUntil(lambda: w.status.query_box.isVisible(), timeout=5_000)
    assert w.status.query_label.text().startswith("Running long count ·")
    # the statement itself is under way: the one interrupt the button sends meets it
    qtbot.waitUntil(lambda: sql in service.engine.statements_under_way(), timeout=15_000)
    w.status.cancel_button.click()
    qtbot.waitUntil(lambda: "error" in outcome or "result" in outcome, timeout=15_000)
    assert getattr(outcome.get("error"), "code", None) == "QUERY_CANCELLED"
    qtbot.waitUntil(lambda: not w.status.query_box.isVisible(), timeout=5_000)
    assert w.services.running_queries() == []


def test_switching_workspace_releases_the_old_one(qtbot, sample_workspace, tmp_path):
    from lantide.ui.app import AppController
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings

    other = tmp_path / "other"
    Workspace.create(other, name="Other analysis")
    controller = AppController(QApplication.instance(), load_settings())
    controller.show_workspace(Workspace.open(sample_workspace))
    first = controller.window  # the controller deletes it when switching
    qtbot.waitUntil(first.is_idle, timeout=30_000)
    assert controller.switch_workspace(str(other))
    assert controller.window is not first
    assert controller.window.windowTitle() == "Other analysis — Lantide"
    assert str(other.resolve()) == controller.settings.recent_workspaces[0]
    # the first workspace is free again: another process (or window) can lock it
    Workspace.open(sample_workspace, lock=True).close()
    qtbot.waitUntil(controller.window.is_idle, timeout=30_000)
    controller.close()
    # the controller's window is not a qtbot widget: left shown, it sat over later tests'
    # windows on the offscreen screen and took their mouse (an explorer hover test failed)
    controller.window.hide()
    controller.window.deleteLater()


def test_help_dialogs_list_shortcuts_and_versions(qtbot):
    from lantide.ui.help_dialogs import AboutDialog, ShortcutsDialog

    shortcuts = ShortcutsDialog()
    qtbot.addWidget(shortcuts)
    rows = shortcuts.visible_rows()
    assert ("Annotate the selected text", "Ctrl+Alt+M") in rows
    assert ("Source Run: the tab and everything upstream", "Ctrl+Shift+Return") in rows
    shortcuts.filter.setText("source run")
    assert shortcuts.visible_rows() == [
        ("Source Run: the tab and everything upstream", "Ctrl+Shift+Return")
    ]
    about = AboutDialog()
    qtbot.addWidget(about)
    names = dict(about.versions)
    assert names["Lantide"] and names["Qt"].startswith("6.")
    assert names["duckdb"] != "not installed"
    about.copy_versions()
    assert QApplication.clipboard().text().startswith("Lantide: ")


def test_appearance_switches_palette_and_is_saved(main_window, qtbot):
    from lantide.workspace.settings import load_settings

    app = QApplication.instance()
    main_window.set_appearance("dark")
    assert app.palette().color(QPalette.ColorRole.Window).lightness() < 80
    assert load_settings().appearance == "dark"
    main_window.set_appearance("light")
    assert app.palette().color(QPalette.ColorRole.Window).lightness() > 200


def test_open_requests_and_agent_questions_reach_the_right_place(main_window, qtbot, monkeypatch):
    w = main_window
    asked = []
    monkeypatch.setattr(w.chat, "ask", asked.append)
    w.services.ask_agent("Resolve them")
    assert asked == ["Resolve them"] and w.chat_dock.isVisible()
    w.services.request_open("knowledge", "q3-churn")
    assert w.knowledge_dock.isVisible()
    w.services.request_open("plan", "q3-churn", "plan.md")
    qtbot.waitUntil(lambda: w.tabs.count() == 1)
    assert (
        w.tabs.ref_of(w.tabs.currentWidget()).key() == TabRef("plan", "q3-churn", "plan.md").key()
    )
    node = w.explorer.find_item("plan", "q3-churn").data(0, ROLE_NODE)
    assert node["name"] == "plan.md"


def test_status_bar_shows_tokens_and_the_model_profile(main_window, qtbot, monkeypatch):
    from lantide.workspace.settings import ModelProfile

    status = main_window.status
    assert not status.tokens_label.isVisible()
    main_window.services.report_tokens(12_345)
    assert status.tokens_label.text() == "12.3k tokens" and status.tokens_label.isVisible()
    settings = main_window.services.settings
    settings.upsert_profile(
        ModelProfile("local", "http://localhost:11434/v1", "qwen2.5", context_window=32_768)
    )
    main_window.services.save_settings(settings)
    assert status.model_button.text() == "local: qwen2.5"
    assert "32,768 tokens" in status.model_button.toolTip()
    monkeypatch.setenv("LANTIDE_MODEL", "llama3.1")
    status.update_profile()
    assert status.model_button.text() == "local: llama3.1"
    assert "(environment)" in status.model_button.toolTip()


def test_an_unreadable_cache_database_is_set_aside_on_request(
    qtbot, shell_services, sample_workspace
):
    from tests.ui.conftest import open_main_window

    cache = sample_workspace / ".lantide" / "cache.duckdb"
    cache.parent.mkdir(exist_ok=True)
    garbage = bytes(range(256)) * 64
    cache.write_bytes(garbage)
    services = shell_services(query=False)
    services.open_query_service()
    qtbot.waitUntil(lambda: services.query_error is not None, timeout=30_000)
    window = open_main_window(qtbot, services, restore=False)
    bar = window.message_bar
    qtbot.waitUntil(lambda: "cannot be opened" in bar.text(), timeout=10_000)
    assert window.status.database_label.text() == "Database unavailable"
    assert bar.action_button.isVisible() and cache.read_bytes() == garbage  # untouched
    with qtbot.waitSignal(services.sig_query_ready, timeout=30_000):
        bar.action_button.click()
    kept = list(cache.parent.glob("cache.duckdb.unreadable-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == garbage  # renamed, never deleted
    assert services.query.run_query("SELECT count(*) FROM orders")["preview"] == [[120000]]
    assert not window.status.database_label.isVisible() and not bar.isVisible()
    window.shutdown()


def test_a_folder_of_data_files_is_listed_as_one_table(qtbot, shell_services, sample_workspace):
    parts = sample_workspace / "data" / "events" / "year=2025"
    parts.mkdir(parents=True)
    (parts / "a.csv").write_text("kind,n\nclick,3\nview,5\n")
    (sample_workspace / "data" / "notes").mkdir()  # no data in it: not listed
    (sample_workspace / "data" / "notes" / "readme.md").write_text("hi")
    window = open_main_window(qtbot, shell_services(), restore=False)
    assert "events/" in _tree_labels(window)["Data files"]
    assert "notes/" not in _tree_labels(window)["Data files"]
    qtbot.waitUntil(lambda: window.explorer.tables() is not None, timeout=20_000)
    item = _find_child(window.explorer.tree.topLevelItem(1), "events/")
    assert item.text(1) == "2 rows"
    window.shutdown()


_WINDOW_ON_A_SCREEN = r"""
import json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
from lantide.ui.layout_state import save_window_layout
from lantide.ui.main_window import MainWindow
from lantide.ui.services import AppServices
from lantide.workspace.model import Workspace
from lantide.workspace.settings import load_settings

app = QApplication(sys.argv[:1])
services = AppServices(Workspace.open(Path(sys.argv[1])), load_settings())
window = MainWindow(services, restore=sys.argv[2] == "restore")
window.show()
from PySide6.QtCore import QDeadlineTimer
deadline = QDeadlineTimer(3000)
while not window._painted and not deadline.hasExpired():
    app.processEvents()
for _ in range(5):
    app.processEvents()
frame, area = window.frameGeometry(), window.screen().availableGeometry()
print(json.dumps({"frame": frame.getRect(), "area": area.getRect()}))
if sys.argv[2] == "save-wide":  # the analyst had it on a big monitor, far to the right
    window.setGeometry(area.width() - 300, 20, area.width() + 400, area.height() + 200)
    save_window_layout(window)
services.close()
"""


def _window_on_a_screen(workspace, tmp_path, width: int, height: int, mode: str) -> dict:
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import cli_env

    screen = tmp_path / f"screen-{width}x{height}.json"
    screen.write_text(
        json.dumps({"screens": [{"name": "S", "x": 0, "y": 0, "width": width, "height": height}]})
    )
    done = subprocess.run(
        [sys.executable, "-c", _WINDOW_ON_A_SCREEN, str(workspace), mode],
        capture_output=True,
        text=True,
        env=cli_env(
            {
                "QT_QPA_PLATFORM": f"offscreen:configfile={screen}",
                "LANTIDE_CONFIG_DIR": str(tmp_path / "config"),
            }
        ),
        cwd=str(Path(__file__).resolve().parents[2]),
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_window_fits_a_screen_smaller_than_its_default_or_its_saved_layout(
    sample_workspace, tmp_path
):
    """First start on a 1024x700 laptop, and a layout saved on a larger monitor then
    restored on that laptop: the window (its right-hand docks, its buttons) stays inside
    the screen's available area."""

    def inside(shown: dict) -> bool:
        x, y, w, h = shown["frame"]
        ax, ay, aw, ah = shown["area"]
        return ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah

    first = _window_on_a_screen(sample_workspace, tmp_path, 1024, 700, "first")
    assert inside(first), first
    _window_on_a_screen(sample_workspace, tmp_path, 1920, 1080, "save-wide")
    restored = _window_on_a_screen(sample_workspace, tmp_path, 1024, 700, "restore")
    assert inside(restored), restored


def test_a_window_deleted_as_it_becomes_idle_sends_nothing_late(qtbot, shell_services):
    """The idle signal is sent from a zero timer; a window deleted before the timer fires
    (a test closing it at once, a workspace switch) must not raise "Signal source has been
    deleted" in whatever runs next (it failed the setup of the next test in a worker)."""
    import shiboken6
    from PySide6.QtWidgets import QApplication

    from lantide.ui.main_window import MainWindow

    window = MainWindow(shell_services(), restore=False)
    for part in list(window._waiting_for):
        window._ready(part)
    assert window.is_idle()
    window.shutdown()
    shiboken6.delete(window)
    QApplication.processEvents()  # the zero timer's turn: pytest-qt fails on its exception
    QApplication.processEvents()


def test_a_hand_edited_session_whose_tabs_are_no_list_still_opens(
    qtbot, shell_services, sample_workspace
):
    # "open_tabs": 5 made restoring the last session fail (an int is not iterable)
    session_path = sample_workspace / ".lantide" / "session.json"
    state = json.loads(session_path.read_text()) if session_path.exists() else {}
    state.update(
        {
            "open_tabs": 5,
            "active_tab": {"kind": "sql", "project": "q3-churn", "name": "clean_orders"},
        }
    )
    session_path.write_text(json.dumps(state))
    window = open_main_window(qtbot, shell_services())
    try:
        assert window.tabs.count() == 0
    finally:
        window.shutdown()
