"""Settings > Connections against a real MariaDB server through its ODBC driver: the form
adds the connection (password to the keyring, never the file), suggests the dialect from
the driver, and Test lists the server's databases as schemas."""

from __future__ import annotations

import pytest

from lantide.ui.settings.settings_dialog import SettingsDialog
from tests.fakes.mariadb_server import maria_server  # noqa: F401

pytestmark = pytest.mark.mariadb


def test_add_and_test_a_mariadb_connection(
    qtbot,
    shell_services,
    sample_workspace,
    maria_server,  # noqa: F811
    memory_keyring,
):
    services = shell_services(query=False, watcher=False)
    dialog = SettingsDialog(services)
    qtbot.addWidget(dialog)
    assert dialog.show_page("Connections")
    page = dialog.connections_page
    qtbot.waitUntil(lambda: "ODBC drivers on this machine" in page.drivers_label.text())
    assert "MariaDB Unicode" in page.drivers_label.text()

    page.name_edit.setText("maria")
    # the fields build the string and the driver's family suggests the dialect
    page.fields.host_edit.setText("127.0.0.1")
    page.fields.driver_combo.setCurrentText("MariaDB Unicode")
    page.fields.port_edit.setText(str(maria_server.port))
    page.fields.port_edit.textEdited.emit(str(maria_server.port))
    qtbot.waitUntil(lambda: f"Port={maria_server.port}" in page.string_edit.text())
    assert page.string_edit.text().startswith("Driver={MariaDB Unicode};Server=127.0.0.1")
    assert page.dialect_combo.currentText() == "mysql"
    page.user_edit.setText(maria_server.user)
    page.password_edit.setText(maria_server.password)
    page.save_button.click()
    qtbot.waitUntil(lambda: "Saved." in page.result_label.text(), timeout=20_000)
    settings = (sample_workspace / ".lantide" / "workspace.json").read_text(encoding="utf-8")
    assert maria_server.password not in settings and '"dialect": "mysql"' in settings
    assert memory_keyring.get_password("lantide", "connection:maria") == maria_server.password

    page.test_button.click()
    qtbot.waitUntil(lambda: "2 tables" in page.result_label.text(), timeout=20_000)
    assert '"maria"."shop"."customers"' in page.result_label.text()
