"""Renaming a SQL tab from the app: the explorer's Rename and the tab bar's context menu ask
the same question and go through the same engine path (``QueryService.rename_sql_tab``: the
file, its cached table, and the references to it in the tabs that read it). When it is
done, ``sig_sql_tab_renamed`` tells an open tab of it to follow (its title and the file it
saves to), so a save never brings the old file back; the rewritten tabs are reported as
changed on disk (``notify_paths_changed``), so an open one reloads (or, with unsaved
edits, asks), and the message bar says which files changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QInputDialog, QWidget


def rename_sql_tab(
    parent: QWidget,
    services,
    project: str,
    tab: str,
    *,
    new: str | None = None,
    then: Callable[[dict[str, Any]], None] | None = None,
) -> bool:
    """Ask for the new name (unless ``new`` is given) and rename in a worker; False when
    nothing was started (cancelled, unchanged, or no query service)."""
    if new is None:
        new, ok = QInputDialog.getText(parent, "Rename SQL tab", "New name:", text=tab)
        if not ok:
            return False
    new = (new or "").strip()
    if not new or new == tab or services.query is None:
        return False
    service = services.query

    def done(result: dict[str, Any]) -> None:
        services.sig_sql_tab_renamed.emit(
            str(result.get("project") or project), str(result["old"]), str(result["new"])
        )
        services.notify_listing_changed()
        rewritten = [str(r["path"]) for r in result.get("rewritten") or []]
        if rewritten:
            services.notify_paths_changed(rewritten)
        if result.get("message"):
            services.post_message(str(result["message"]), "info")
        if result.get("hint"):
            services.post_message(str(result["hint"]), "warning")
        if then is not None:
            then(result)

    services.workers.submit(
        lambda _ctx: service.rename_sql_tab(project, tab, new),
        on_result=done,
        on_error=lambda e: services.report_error(e, "Renaming the SQL tab"),
        name="Renaming the SQL tab",
    )
    return True
