"""SQL that reads, in the SQL tab: Format (one undoable edit, refusals leave the text),
Explain / Explain Analyze as a plan tree, go to the definition of a table, and renaming
a tab that others read."""

from __future__ import annotations

from lantide.ui.sql.sql_tab import SqlTabWidget
from tests.ui.conftest_data import *  # noqa: F403
from tests.ui.conftest_data import write_tab


def make_tab(qtbot, services, name: str, project: str = "p") -> SqlTabWidget:
    tab = SqlTabWidget(services, project, name)
    qtbot.addWidget(tab)
    tab.resize(1000, 700)
    with qtbot.waitSignal(tab.sig_loaded, timeout=10_000):
        pass
    tab.show()
    return tab


def test_format_is_one_undoable_edit(qtbot, app_services, data_workspace):
    write_tab(data_workspace, "p", "fmt", "select region, revenue from small -- all regions\n")
    tab = make_tab(qtbot, app_services, "fmt")
    original = tab.editor.toPlainText()
    tab.editor.setFocus()
    tab.format_action.trigger()
    assert tab.editor.toPlainText() == ("SELECT\n  region,\n  revenue\nFROM small -- all regions\n")
    assert tab.is_dirty()
    tab.editor.undo()  # one Ctrl+Z brings the whole text back
    assert tab.editor.toPlainText() == original


def test_format_refuses_and_leaves_the_text(qtbot, app_services, data_workspace):
    text = "select region from small where revenue between -- low\n 1 and 2\n"
    write_tab(data_workspace, "p", "keep", text)
    tab = make_tab(qtbot, app_services, "keep")
    tab.format_action.trigger()
    assert tab.editor.toPlainText() == text
    assert not tab.is_dirty()
    assert tab.banner.isVisible() and "low" in tab.banner.text()

    tab.editor.setPlainText("select region,\nfrom where")
    tab.format_action.trigger()
    assert tab.editor.toPlainText() == "select region,\nfrom where"
    assert tab.editor.error_position is not None and tab.editor.error_position[0] == 2
