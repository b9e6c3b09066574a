"""A cancelled Source Run is its own state: neutral, "cancelled by you", with what had
finished before it, and the query history records it as cancelled with no cached table."""

from __future__ import annotations

from PySide6.QtGui import QBrush

from lantide.query.history import read_history
from lantide.ui.notice_banner import ERROR
from lantide.ui.theme import colors
from tests.ui.conftest_data import write_tab
from tests.ui.test_sql_tab import make_tab

SLOW = (
    "SELECT count(*) AS n FROM big a, big b, fast_first f "
    "WHERE (a.id * 7 + b.id * 13 + f.x) % 1000003 = 17\n"
)


def test_a_cancelled_source_run_is_not_a_failure(qtbot, app_services):
    root = app_services.workspace.root
    write_tab(root, "p", "fast_first", "SELECT 1 AS x\n")
    write_tab(root, "p", "slow_up", SLOW)
    write_tab(root, "p", "after_slow", "SELECT n + 1 AS m FROM slow_up\n")
    tab = make_tab(qtbot, app_services, "after_slow")
    tab.source_run()
    qtbot.waitUntil(
        lambda: tab.source_run_view.statuses.get("slow_up") == "running", timeout=15_000
    )
    # slow_up's statement itself is under way, so the Stop meets it inside DuckDB
    engine = app_services.query.engine
    qtbot.waitUntil(
        lambda: any("1000003" in s for s in engine.statements_under_way()), timeout=15_000
    )
    with qtbot.waitSignal(tab.sig_run_finished, timeout=15_000) as blocker:
        tab.stop_action.trigger()
    report = blocker.args[0]
    assert isinstance(report, dict) and report["cancelled"] is True
    view = tab.source_run_view
    assert view.statuses == {"fast_first": "ran", "slow_up": "cancelled", "after_slow": "not_run"}
    items = {
        view.tree.topLevelItem(i).text(0): view.tree.topLevelItem(i)
        for i in range(view.tree.topLevelItemCount())
    }
    assert items["slow_up"].text(1) == "cancelled by you"
    danger = QBrush(colors().danger).color().name()
    assert all(item.foreground(1).color().name() != danger for item in items.values())
    assert "cancelled by you" in view.headline.text() and "fast_first ran" in view.headline.text()
    # the banner: neutral, says what finished, and has room for its text
    assert tab.banner.level != ERROR
    assert "cancelled by you" in tab.banner.text() and "fast_first ran" in tab.banner.text()
    assert tab.banner.title_label.width() > tab.banner.width() // 2
    assert tab.status_label.text() == "Source Run cancelled"
    # the history says cancelled, and names no cached table that does not exist
    qtbot.waitUntil(
        lambda: any(e.get("source") == "source_run" for e in read_history(app_services.workspace)),
        timeout=10_000,
    )
    entry = [e for e in read_history(app_services.workspace) if e["source"] == "source_run"][-1]
    assert entry["status"] == "cancelled" and entry["cached_table_name"] is None
    assert entry["error"] == "QUERY_CANCELLED" and "fast_first ran" in entry["message"]
    # the history panel says it in words, not as a code
    from lantide.ui.sql.query_history_view import QueryHistoryView

    view = QueryHistoryView(app_services)
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: view.history_tree.topLevelItemCount() > 0, timeout=10_000)
    newest = view.history_tree.topLevelItem(0)
    assert newest.text(2) == "cancelled by you" and "QUERY_CANCELLED" not in newest.text(2)


def test_a_source_run_that_ran_is_ok_in_the_history(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "fast_first", "SELECT 1 AS x\n")
    write_tab(app_services.workspace.root, "p", "second", "SELECT x + 1 AS y FROM fast_first\n")
    tab = make_tab(qtbot, app_services, "second")
    with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000):
        tab.source_run()
    qtbot.waitUntil(
        lambda: any(e.get("source") == "source_run" for e in read_history(app_services.workspace)),
        timeout=10_000,
    )
    entry = [e for e in read_history(app_services.workspace) if e["source"] == "source_run"][-1]
    assert entry["status"] == "ok" and entry["cached_table_name"] == "second"
    assert entry["row_count"] == 1
