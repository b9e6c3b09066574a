"""Settings > Connections against a real PostgreSQL server through its ODBC driver: add
(password to the keyring, never the file), test, rename (the password follows), remove;
the explorer lists the connection and opens the page from its context menu."""

from __future__ import annotations

import json

import pytest

from lantide.ui.settings.settings_dialog import SettingsDialog

pytestmark = pytest.mark.postgres


def _settings_text(root) -> str:
    return (root / ".lantide" / "workspace.json").read_text(encoding="utf-8")


def _wait_result(qtbot, page, text: str) -> None:
    qtbot.waitUntil(lambda: text in page.result_label.text(), timeout=20_000)


def test_add_test_rename_and_remove_a_connection(
    qtbot, shell_services, sample_workspace, pg_server, memory_keyring
):
    services = shell_services(query=False, watcher=False)
    changed = []
    services.sig_connections_changed.connect(lambda: changed.append(True))
    dialog = SettingsDialog(services)
    qtbot.addWidget(dialog)
    assert dialog.show_page("Connections")
    page = dialog.connections_page
    qtbot.waitUntil(lambda: "ODBC drivers on this machine" in page.drivers_label.text())
    assert "PostgreSQL Unicode" in page.drivers_label.text()
    assert page.list.count() == 0 and not page.test_button.isEnabled()

    page.name_edit.setText("shop")
    page.string_edit.setText(pg_server.connection_string)
    page.dialect_combo.setCurrentText("postgres")
    page.user_edit.setText(pg_server.user)
    page.password_edit.setText(pg_server.password)
    page.save_button.click()
    _wait_result(qtbot, page, "Saved.")
    qtbot.waitUntil(lambda: page.list.count() == 1)
    assert changed and services.workspace.connections[0]["name"] == "shop"
    assert pg_server.password not in _settings_text(sample_workspace)
    assert memory_keyring.get_password("lantide", "connection:shop") == pg_server.password
    assert page.password_edit.text() == "" and "keyring" in page.password_edit.placeholderText()

    page.test_button.click()
    _wait_result(qtbot, page, "2 tables")
    assert '"shop"."public"."customers"' in page.result_label.text()

    # rename: the stored password follows the connection
    page.name_edit.setText("warehouse")
    page.save_button.click()
    _wait_result(qtbot, page, "Saved.")
    qtbot.waitUntil(
        lambda: (
            page.list.currentItem() is not None and page.list.currentItem().text() == "warehouse"
        )
    )
    assert [c["name"] for c in json.loads(_settings_text(sample_workspace))["connections"]] == [
        "warehouse"
    ]
    assert memory_keyring.get_password("lantide", "connection:warehouse") == pg_server.password
    assert memory_keyring.get_password("lantide", "connection:shop") is None
    page.test_button.click()
    _wait_result(qtbot, page, '"warehouse"."sales"."invoices"')

    # a password typed into the connection string goes to the keyring, never the file
    page.string_edit.setText(pg_server.connection_string + ";PWD=oops")
    page.save_button.click()
    _wait_result(qtbot, page, "Saved.")
    assert "oops" not in _settings_text(sample_workspace)
    assert memory_keyring.get_password("lantide", "connection:warehouse") == "oops"
    qtbot.waitUntil(lambda: "oops" not in page.string_edit.text())

    page.remove_button.click()
    _wait_result(qtbot, page, "Removed 'warehouse'")
    qtbot.waitUntil(lambda: page.list.count() == 0)
    assert json.loads(_settings_text(sample_workspace))["connections"] == []
    assert memory_keyring.get_password("lantide", "connection:warehouse") is None


def test_explorer_lists_connections_and_opens_the_page(
    qtbot,
    main_window,
    sample_workspace,
    pg_server,
    memory_keyring,
    monkeypatch,
):
    from lantide.query.connections import add_connection

    services = main_window.services
    add_connection(
        services.workspace,
        "shop",
        pg_server.connection_string,
        user=pg_server.user,
        password=pg_server.password,
    )
    with qtbot.waitSignal(main_window.explorer.sig_tree_refreshed, timeout=20_000):
        services.notify_connections_changed()
    qtbot.waitUntil(
        lambda: main_window.explorer.find_item("connection", name="shop") is not None,
        timeout=20_000,
    )
    item = main_window.explorer.find_item("connection", name="shop")
    assert item.text(1) == "postgres"
    # the staged tables of the connection appear under it once the query service lists them
    qtbot.waitUntil(
        lambda: main_window.explorer.find_item("connection", name="shop").childCount() == 2,
        timeout=30_000,
    )

    opened = []
    monkeypatch.setattr(
        SettingsDialog,
        "exec",
        lambda self: opened.append(self.tabs.tabText(self.tabs.currentIndex())) or 0,
    )
    main_window.explorer.sig_connections_requested.emit()
    assert opened == ["Connections"]


def test_a_source_run_stops_before_a_large_remote_copy_and_stages_it_when_asked(
    qtbot, shell_services, sample_workspace, pg_server, memory_keyring
):
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings, save_settings
    from tests.ui.conftest import open_main_window

    settings = load_settings()
    settings.query.large_remote_rows = 1000
    save_settings(settings)
    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(
        ws, "shop", pg_server.connection_string, user=pg_server.user, password=pg_server.password
    )
    ws.close()
    (sample_workspace / "projects" / "q3-churn" / "sql" / "pg_invoices.sql").write_text(
        "SELECT * FROM shop.sales.invoices\n"
    )
    window = open_main_window(qtbot, shell_services(), restore=False)
    tab = window.open_tab("sql", "q3-churn", "pg_invoices")
    with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000):
        tab.source_run()
    assert tab.source_run_view.statuses.get("pg_invoices") == "failed"
    assert "5,000 rows from shop" in tab.banner.text()
    stage = next(b for b in tab.banner.buttons() if b.text() == "Stage anyway and Source Run")
    with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000):
        stage.click()
    assert tab.source_run_view.statuses.get("pg_invoices") == "ran"
    assert tab.last_result["ok"] and tab.result.relation == "pg_invoices"
    window.shutdown()


def test_fields_build_the_odbc_string_and_the_dialect_follows_the_driver(
    qtbot, shell_services, sample_workspace, pg_server, memory_keyring
):
    services = shell_services(query=False, watcher=False)
    dialog = SettingsDialog(services)
    qtbot.addWidget(dialog)
    assert dialog.show_page("Connections")
    page = dialog.connections_page
    qtbot.waitUntil(lambda: "ODBC drivers on this machine" in page.drivers_label.text())
    fields = page.fields
    # a new connection starts on a driver this machine has (SQL Server's is not installed)
    assert fields.driver_combo.currentText() == page.installed_drivers[0]
    assert fields.driver_combo.currentText() in page.drivers_label.text()
    assert "SQL Server" not in page.drivers_label.text()

    page.name_edit.setText("shop")
    fields.driver_combo.setCurrentText("PostgreSQL Unicode")
    assert page.dialect_combo.currentText() == "postgres"  # follows the driver
    qtbot.keyClicks(fields.host_edit, "127.0.0.1")
    fields.port_edit.clear()
    qtbot.keyClicks(fields.port_edit, str(pg_server.port))
    qtbot.keyClicks(fields.database_edit, pg_server.database)
    assert page.string_edit.text() == pg_server.connection_string
    page.user_edit.setText(pg_server.user)
    page.password_edit.setText(pg_server.password)
    page.save_button.click()
    _wait_result(qtbot, page, "Saved.")
    saved = json.loads(_settings_text(sample_workspace))["connections"][0]
    assert saved["connection_string"] == pg_server.connection_string
    assert saved["dialect"] == "postgres"
    page.test_button.click()
    _wait_result(qtbot, page, "2 tables")

    # The raw string stays editable, and the fields follow it.
    page.string_edit.selectAll()
    qtbot.keyClicks(
        page.string_edit,
        "Driver={ODBC Driver 18 for SQL Server};Server=sql.corp,1533;Database=finance;Encrypt=yes",
    )
    assert (fields.host_edit.text(), fields.port_edit.text(), fields.database_edit.text()) == (
        "sql.corp",
        "1533",
        "finance",
    )
    assert fields.driver_combo.currentText() == "ODBC Driver 18 for SQL Server"
    # Switching the driver keeps host, port and database in that driver's form.
    fields.driver_combo.setCurrentText("MariaDB ODBC 3.1 Driver")
    assert page.dialect_combo.currentText() == "mysql"
    assert page.string_edit.text() == (
        "Driver={MariaDB ODBC 3.1 Driver};Server=sql.corp;Port=1533;Database=finance"
    )
