"""The annotation thread pane shows the newest reply without the analyst scrolling: on
selecting an annotation with a long thread, and after replying to it."""

from __future__ import annotations

import json

from tests.ui.conftest import open_document_tab

SIDECAR = "projects/q3-churn/plan.annotations.json"


def _long_thread(workspace, replies: int = 25) -> None:
    path = workspace / SIDECAR
    data = json.loads(path.read_text(encoding="utf-8"))
    first = data["annotations"][0]
    first["history"] += [
        {
            "at": f"2026-11-30T10:{i:02d}:00Z",
            "by": "analyst",
            "action": "replied",
            "text": f"reply number {i}",
        }
        for i in range(replies)
    ]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _at_bottom(thread) -> bool:
    bar = thread.verticalScrollBar()
    return bar.maximum() > 0 and bar.value() == bar.maximum()


def test_a_long_thread_opens_at_its_newest_reply(qtbot, sample_workspace, shell_services):
    from tests.ui.conftest import open_main_window

    _long_thread(sample_workspace)
    window = open_main_window(qtbot, shell_services())
    tab = open_document_tab(qtbot, window)
    al = tab.annotation_list
    al.select("3f9a1c")
    qtbot.waitUntil(lambda: "reply number 24" in al.thread_view.toPlainText(), timeout=5000)
    qtbot.waitUntil(lambda: _at_bottom(al.thread_view), timeout=3000)

    with qtbot.waitSignal(tab.sig_snapshot_applied, timeout=15_000):
        tab.run_operation("reply", id="3f9a1c", text="the newest word")
    qtbot.waitUntil(lambda: "the newest word" in al.thread_view.toPlainText(), timeout=5000)
    qtbot.waitUntil(lambda: _at_bottom(al.thread_view), timeout=3000)
    window.shutdown()
