"""A new SQL tab from the app (Ctrl+T, the toolbar, the welcome page, the explorer): the name
is checked first, the tab opens empty and ready to type, and its file is written on the
first save or run."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QInputDialog

from lantide.ui.services import TAB_SQL, TabRef
from lantide.ui.sql.sql_tab import SqlTabWidget


def _answer_names(monkeypatch, *names):
    """The name dialog answers ``names`` in turn, then Cancel; returns the prompts it got."""
    queue = list(names)
    asked = []

    def get_text(_parent, _title, label, *_a, **kw):
        asked.append({"label": label, "text": kw.get("text", "")})
        return (queue.pop(0), True) if queue else ("", False)

    monkeypatch.setattr(QInputDialog, "getText", get_text)
    return asked


def _new_tab(window, qtbot, name: str) -> SqlTabWidget:
    qtbot.waitUntil(
        lambda: window.tabs.find_tab(TabRef(TAB_SQL, "q3-churn", name)) is not None, timeout=10_000
    )
    tab = window.tabs.find_tab(TabRef(TAB_SQL, "q3-churn", name))
    qtbot.waitUntil(lambda: not tab.editor.isReadOnly(), timeout=10_000)
    return tab


def test_ctrl_t_opens_an_empty_tab_that_is_written_on_first_save(
    main_window, qtbot, monkeypatch, sample_workspace
):
    main_window.services.focus_project("q3-churn")
    _answer_names(monkeypatch, "revenue_by_day")
    errors = []
    main_window.services.sig_message_posted.connect(
        lambda text, level: errors.append(text) if level == "error" else None
    )
    main_window.act_new_sql.trigger()
    tab = _new_tab(main_window, qtbot, "revenue_by_day")
    path = sample_workspace / "projects" / "q3-churn" / "sql" / "revenue_by_day.sql"
    assert errors == []
    assert tab.editor.toPlainText() == "" and not path.exists()
    assert main_window.tabs.currentWidget() is tab and tab.editor.hasFocus()
    tab.editor.insertPlainText("SELECT 1 AS one")
    assert tab.save()
    assert path.read_text(encoding="utf-8") == "SELECT 1 AS one"


def test_a_new_tab_is_written_and_cached_on_its_first_run(
    main_window, qtbot, monkeypatch, sample_workspace
):
    main_window.services.focus_project("q3-churn")
    _answer_names(monkeypatch, "big_orders")
    main_window.welcome.sig_action_requested.emit("new_sql_tab")  # the welcome page's link
    tab = _new_tab(main_window, qtbot, "big_orders")
    tab.editor.insertPlainText("SELECT 42 AS answer")
    with qtbot.waitSignal(tab.sig_run_finished, timeout=60_000) as blocker:
        tab.run()
    assert isinstance(blocker.args[0], dict), blocker.args[0]
    assert blocker.args[0]["cached_table_name"] == "big_orders"
    path = sample_workspace / "projects" / "q3-churn" / "sql" / "big_orders.sql"
    assert path.read_text(encoding="utf-8") == "SELECT 42 AS answer"


@pytest.mark.parametrize(
    "bad, problem",
    [
        ("clean_orders", "already has a SQL tab"),  # a tab file of the project
        ("orders", "data file"),  # a data file's table
        ("no/slash", "Invalid SQL tab name"),
    ],
)
def test_the_name_is_checked_before_the_tab_opens(
    main_window, qtbot, monkeypatch, sample_workspace, bad, problem
):
    main_window.services.focus_project("q3-churn")
    asked = _answer_names(monkeypatch, bad, "fresh_name")
    count = main_window.tabs.count()
    main_window.new_sql_tab()
    # the dialog comes back with the name and what is wrong with it; the next name works
    tab = _new_tab(main_window, qtbot, "fresh_name")
    assert len(asked) == 2 and asked[1]["text"] == bad and problem in asked[1]["label"]
    assert main_window.tabs.count() == count + 1 and tab.tab_name == "fresh_name"
    sql_dir = sample_workspace / "projects" / "q3-churn" / "sql"
    assert sorted(p.name for p in sql_dir.iterdir()) == [
        "clean_orders.sql",
        "customer_quarters.sql",
        "q3_churn_by_region.sql",
    ]


def test_a_name_clashing_with_an_open_unsaved_tab_is_refused(main_window, qtbot, monkeypatch):
    main_window.services.focus_project("q3-churn")
    asked = _answer_names(monkeypatch, "draft", "Draft", "draft2")
    main_window.new_sql_tab()
    first = _new_tab(main_window, qtbot, "draft")
    first.editor.insertPlainText("SELECT 1")
    main_window.new_sql_tab()
    _new_tab(main_window, qtbot, "draft2")
    assert "already open" in asked[2]["label"] and asked[2]["text"] == "Draft"
    assert first.editor.toPlainText() == "SELECT 1"  # the unsaved text is untouched


def test_a_new_tab_is_clean_until_typed_in_and_says_it_is_new(main_window, qtbot, monkeypatch):
    main_window.services.focus_project("q3-churn")
    _answer_names(monkeypatch, "fresh")
    main_window.new_sql_tab()
    tab = _new_tab(main_window, qtbot, "fresh")
    assert not tab.is_dirty()
    index = main_window.tabs.indexOf(tab)
    assert main_window.tabs.tabText(index) == "fresh"
    assert "new" in tab.banner.text() and "does not exist" not in tab.banner.text()
    tab.editor.insertPlainText("SELECT 1")
    assert tab.is_dirty() and main_window.tabs.tabText(index) != "fresh"


def test_new_tab_and_rename_follow_the_one_rule_for_names(
    main_window, qtbot, monkeypatch, sample_workspace
):
    main_window.services.focus_project("q3-churn")
    asked = _answer_names(monkeypatch, "orders.v2", "orders by region")
    main_window.act_new_sql.trigger()
    tab = _new_tab(main_window, qtbot, "orders by region")
    assert "'.' is not allowed in a name" in asked[1]["label"]
    assert "orders_v2" in asked[1]["label"]  # a name that passes is suggested
    tab.editor.insertPlainText("SELECT 1 AS one")
    assert tab.save()
    query = main_window.services.query
    query.rename_sql_tab("q3-churn", "orders by region", "orders per region")
    assert (sample_workspace / "projects/q3-churn/sql/orders per region.sql").is_file()
    with pytest.raises(Exception, match="'#' is not allowed in a name"):
        query.rename_sql_tab("q3-churn", "orders per region", "orders #2")
