"""Agent Integration in the desktop app: Settings > Agent Integration pairs a client and
shows its configuration; the app's own MCP server answers an outside agent while the app
runs (no lock error), and the ledger and Activity panels show what it did."""

from __future__ import annotations

import asyncio
import json
import threading

from lantide.ui.settings.settings_dialog import SettingsDialog
from tests.ui.conftest import open_main_window


def _sdk_call(url: str, token: str, tool: str, arguments: dict) -> dict:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def run():
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            result = await client.call_tool(tool, arguments)
            return {"is_error": result.is_error, **(result.structured_content or {})}

    return asyncio.run(run())


def test_connect_a_client_shows_its_configuration_and_revoke_ends_it(
    qtbot, shell_services, memory_keyring
):
    from PySide6.QtGui import QGuiApplication

    from lantide.mcp.clients import ClientStore

    services = shell_services(query=False, watcher=False)
    dialog = SettingsDialog(services)
    qtbot.addWidget(dialog)
    assert dialog.show_page("Agent Integration")
    page = dialog.integration_page
    page.client_box.setCurrentIndex(page.client_box.findData("cursor"))
    page.mode_box.setCurrentIndex(page.mode_box.findData("execute"))
    page.connect_button.click()
    qtbot.waitUntil(lambda: page.copy_button.isEnabled(), timeout=10_000)
    config = json.loads(page.config_view.toPlainText())
    header = config["mcpServers"]["lantide"]["headers"]["Authorization"]
    token = header.removeprefix("Bearer ")
    assert config["mcpServers"]["lantide"]["url"].startswith("http://127.0.0.1:")
    assert "cursor/mcp.json" in page.where_label.text()
    client, why = ClientStore().verify(token)
    assert why == "ok" and client.mode == "execute" and client.kind == "cursor"
    assert client.scope == str(services.workspace.root)
    assert memory_keyring.get_password("lantide", f"mcp:{client.id}") == token
    page.copy_button.click()
    assert QGuiApplication.clipboard().text() == page.config_view.toPlainText()

    qtbot.waitUntil(lambda: page.tree.topLevelItemCount() == 1, timeout=10_000)
    item = page.tree.topLevelItem(0)
    assert (item.text(0), item.text(1), item.text(3)) == ("Cursor", "Execute", "active")
    page.tree.setCurrentItem(item)
    assert page.revoke_button.isEnabled()
    page.revoke_button.click()
    qtbot.waitUntil(
        lambda: (
            page.tree.topLevelItemCount() == 1 and page.tree.topLevelItem(0).text(3) == "revoked"
        ),
        timeout=10_000,
    )
    assert ClientStore().verify(token) == (None, "token revoked")


def test_an_outside_agent_queries_the_running_app(
    qtbot, shell_services, sample_workspace, monkeypatch
):
    from lantide.mcp.clients import ClientStore
    from lantide.workspace.model import Project

    monkeypatch.setenv("LANTIDE_MCP_PORT", "0")
    Project.load(sample_workspace, "q3-churn").approve_plan()
    paired = ClientStore().pair(
        "Claude Code", kind="claude-code", scope=str(sample_workspace), mode="execute"
    )
    services = shell_services()
    window = open_main_window(qtbot, services)
    host = window.mcp_host
    qtbot.waitUntil(lambda: bool(host.url), timeout=20_000)
    window.ledger.load_ledger("mcp-claude-code")  # the analyst looks at the client's ledger

    answer: dict = {}

    def agent():
        answer.update(
            _sdk_call(
                host.url,
                paired.token,
                "run_query",
                {"sql": "SELECT count(*) AS n FROM orders", "purpose": "orders in total"},
            )
        )

    thread = threading.Thread(target=agent)
    thread.start()
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=60_000)
    assert answer.get("is_error") is False, answer  # the app's engine: no lock error
    assert answer["preview"] == [[120000]]
    # the ledger panel shows the step live; the Activity panel shows the call
    qtbot.waitUntil(
        lambda: [s.get("purpose") for s in window.ledger.steps] == ["orders in total"],
        timeout=10_000,
    )
    step_row = window.ledger.step_tree.topLevelItem(0)
    assert step_row.text(4) == "(run by an outside agent: no summary line)"
    qtbot.waitUntil(lambda: window.activity.tree.topLevelItemCount() == 1, timeout=10_000)
    row = window.activity.tree.topLevelItem(0)
    assert (row.text(1), row.text(3), row.text(4), row.text(5)) == (
        "Claude Code",
        "run_query",
        "ok",
        answer["step_id"],
    )
    assert window.ledger.conversation_box.findData("mcp-claude-code") >= 0
    window.shutdown()
    assert host.server is None


def test_without_a_paired_client_the_app_serves_nothing(qtbot, shell_services, monkeypatch):
    monkeypatch.setenv("LANTIDE_MCP_PORT", "0")
    window = open_main_window(qtbot, shell_services())
    qtbot.waitUntil(lambda: window.mcp_host.paired_clients is not None, timeout=10_000)
    assert window.mcp_host.paired_clients == 0
    assert window.mcp_host.server is None and window.mcp_host.url == ""
    assert "No outside agent" in window.activity.status.text()


def test_connecting_the_first_client_starts_the_server(
    qtbot, shell_services, monkeypatch, memory_keyring
):
    monkeypatch.setenv("LANTIDE_MCP_PORT", "0")
    window = open_main_window(qtbot, shell_services())
    host = window.mcp_host
    qtbot.waitUntil(lambda: host.paired_clients == 0, timeout=10_000)
    assert host.server is None
    dialog = SettingsDialog(window.services, window)
    qtbot.addWidget(dialog)
    dialog.show_page("Agent Integration")
    page = dialog.integration_page
    page.connect_button.click()
    qtbot.waitUntil(lambda: bool(host.url), timeout=20_000)
    qtbot.waitUntil(lambda: host.url in page.state_label.text(), timeout=10_000)
    window.shutdown()


def test_an_unreadable_client_entry_is_reported_and_the_others_listed(
    qtbot, shell_services, memory_keyring
):
    from lantide.mcp.clients import ClientStore

    store = ClientStore()
    store.pair("Good", scope="all", mode="observe")
    store.pair("Bad", scope="all", mode="observe")
    data = json.loads(store.path.read_text())
    data["clients"][1]["expires_at"] = 5
    store.path.write_text(json.dumps(data))
    services = shell_services(query=False, watcher=False)
    dialog = SettingsDialog(services)
    qtbot.addWidget(dialog)
    assert dialog.show_page("Agent Integration")
    page = dialog.integration_page
    page.refresh()
    qtbot.waitUntil(lambda: page.tree.topLevelItemCount() == 1, timeout=10_000)
    assert page.tree.topLevelItem(0).text(0) == "Good"
    qtbot.waitUntil(lambda: "'expires_at'" in page.error_label.text(), timeout=10_000)
    assert "mcp_clients.json" in page.error_label.text()
