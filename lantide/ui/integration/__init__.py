"""Agent Integration in the desktop app: the MCP server running inside the app
(:mod:`.host`), Settings > Agent Integration (:mod:`.page`) and the Activity panel beside
the ledger (:mod:`.activity_panel`). The rules are in :mod:`lantide.mcp`."""

from __future__ import annotations


def install(window) -> None:
    """Give ``window`` (the main window) its MCP host and an Activity dock tabbed with the
    ledger; the host starts serving if a client is paired."""
    from PySide6.QtCore import Qt

    from lantide.ui.integration.activity_panel import ActivityPanel
    from lantide.ui.integration.host import McpHost

    services = window.services
    host = McpHost(services, parent=window)
    services.mcp_host = host  # the settings page finds it here
    window.mcp_host = host
    window.activity = ActivityPanel(services, host, window)
    window.activity_dock = window._dock(
        "Agent activity",
        "ActivityDock",
        window.activity,
        Qt.DockWidgetArea.BottomDockWidgetArea,
        "history",
    )
    window.tabifyDockWidget(window.ledger_dock, window.activity_dock)
    window.ledger_dock.raise_()
    host.start_if_paired()


def settings_page(services, parent):
    """The Settings tab (None without a workspace)."""
    if getattr(services, "workspace", None) is None:
        return None
    from lantide.ui.integration.page import IntegrationPage

    return IntegrationPage(services, parent)
