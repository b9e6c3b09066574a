"""The tab bar's context menu: close others / to the right / all (a dirty tab still asks),
rename a SQL tab, copy the file's path, show it in the file manager."""

from __future__ import annotations

from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QMessageBox

from lantide.ui import tab_area
from tests.ui.conftest import open_document_tab


def _actions(menu) -> dict:
    return {a.text(): a for a in menu.actions() if a.text()}


def test_the_tab_menu_closes_others_and_reveals_the_file(
    main_window, qtbot, monkeypatch, sample_workspace
):
    tabs = main_window.tabs
    plan = open_document_tab(qtbot, main_window, "plan")
    sql = main_window.open_tab("sql", "q3-churn", "clean_orders")
    qtbot.waitUntil(lambda: not sql.editor.isReadOnly(), timeout=15_000)
    main_window.open_tab("table", None, "customers")
    assert tabs.count() == 3
    bar = tabs.tabBar()
    bar.customContextMenuRequested.emit(bar.tabRect(tabs.indexOf(sql)).center())
    menu = tabs.tab_menu
    actions = _actions(menu)
    assert {"Close", "Close others", "Close tabs to the right", "Close all"} <= set(actions)
    actions["Copy file path"].trigger()
    path = sample_workspace / "projects/q3-churn/sql/clean_orders.sql"
    assert QApplication.clipboard().text() == str(path)
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    actions["Show in file manager"].trigger()
    assert opened[0].toLocalFile() == str(path.parent)
    menu.close()

    # close the others: the dirty Plan asks first; Cancel keeps it (and stops there)
    plan.editor.insertPlainText("x")
    monkeypatch.setattr(
        tab_area, "ask_save_changes", lambda _p, _n: QMessageBox.StandardButton.Cancel
    )
    bar.customContextMenuRequested.emit(bar.tabRect(tabs.indexOf(sql)).center())
    _actions(tabs.tab_menu)["Close others"].trigger()
    assert plan in tabs.widgets() and sql in tabs.widgets()
    tabs.tab_menu.close()  # a menu left shown takes later tests' mouse on the offscreen screen
    monkeypatch.setattr(
        tab_area, "ask_save_changes", lambda _p, _n: QMessageBox.StandardButton.Discard
    )
    bar.customContextMenuRequested.emit(bar.tabRect(tabs.indexOf(sql)).center())
    _actions(tabs.tab_menu)["Close others"].trigger()
    assert tabs.widgets() == [sql]
    tabs.tab_menu.close()


def test_rename_from_the_tab_menu_and_the_open_tab_follows(
    main_window, qtbot, monkeypatch, sample_workspace
):
    # issue 30 item 11: Rename on the tab, by the explorer's engine path; the open tab (with
    # unsaved edits) shows and saves under the new name, and the old file does not return
    from PySide6.QtWidgets import QInputDialog

    tabs = main_window.tabs
    sql = main_window.open_tab("sql", "q3-churn", "q3_churn_by_region")
    qtbot.waitUntil(lambda: not sql.editor.isReadOnly(), timeout=15_000)
    sql.editor.moveCursor(sql.editor.textCursor().MoveOperation.End)
    sql.editor.insertPlainText("\n-- my unsaved note")
    old = sample_workspace / "projects/q3-churn/sql/q3_churn_by_region.sql"
    new = sample_workspace / "projects/q3-churn/sql/churn by region.sql"
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("churn by region", True))
    bar = tabs.tabBar()
    bar.customContextMenuRequested.emit(bar.tabRect(tabs.indexOf(sql)).center())
    _actions(tabs.tab_menu)["Rename…"].trigger()
    qtbot.waitUntil(lambda: sql.tab_name == "churn by region", timeout=15_000)
    assert new.exists() and not old.exists()
    assert tabs.tabText(tabs.indexOf(sql)).startswith("churn by region")
    assert tabs.ref_of(sql).name == "churn by region" and sql.path == new
    assert sql.is_dirty() and "my unsaved note" in sql.editor.toPlainText()
    assert sql.save()
    assert "my unsaved note" in new.read_text(encoding="utf-8") and not old.exists()
    tabs.tab_menu.close()


def test_an_open_tab_follows_a_rename_in_the_explorer(
    main_window, qtbot, monkeypatch, sample_workspace
):
    from PySide6.QtWidgets import QInputDialog

    sql = main_window.open_tab("sql", "q3-churn", "q3_churn_by_region")
    qtbot.waitUntil(lambda: not sql.editor.isReadOnly(), timeout=15_000)
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("churn_regions", True))
    main_window.explorer._rename_sql_tab("q3-churn", "q3_churn_by_region")
    qtbot.waitUntil(lambda: sql.tab_name == "churn_regions", timeout=15_000)
    assert sql.path == sample_workspace / "projects/q3-churn/sql/churn_regions.sql"
    assert sql.path.exists()


def test_a_rename_updates_the_open_tabs_that_read_it(main_window, qtbot, sample_workspace):
    # issue 32 item 3: the readers' SQL is rewritten; an open clean reader reloads, and the
    # message bar says which files changed
    from lantide.ui.sql.tab_rename import rename_sql_tab

    services = main_window.services
    reader = main_window.open_tab("sql", "q3-churn", "customer_quarters")
    qtbot.waitUntil(lambda: not reader.editor.isReadOnly(), timeout=15_000)
    assert "FROM clean_orders" in reader.editor.toPlainText()
    messages: list[str] = []
    services.sig_message_posted.connect(lambda text, *_: messages.append(text))
    assert rename_sql_tab(main_window, services, "q3-churn", "clean_orders", new="valid_orders")
    qtbot.waitUntil(lambda: "FROM valid_orders" in reader.editor.toPlainText(), timeout=15_000)
    assert not reader.is_dirty()
    on_disk = sample_workspace / "projects/q3-churn/sql/customer_quarters.sql"
    assert reader.editor.toPlainText() == on_disk.read_text(encoding="utf-8")
    assert reader.editor.toPlainText().startswith("-- Activity of each customer")
    qtbot.waitUntil(lambda: any("customer_quarters.sql" in m for m in messages), timeout=5000)
