"""SQL tabs against the real query service: run, page a 1.5-million-row result, cancel,
refusals with the guard's advice and the error position, purpose, selection runs, copy,
export, Source Run, lineage and external edits."""

from __future__ import annotations

import csv
import io

import duckdb
import pytest
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from lantide.query.history import read_history
from lantide.ui.sql.query_jobs import submit_query
from lantide.ui.sql.result_model import PagedResultModel
from lantide.ui.sql.sql_tab import SqlTabWidget
from tests.fakes.gated_query import GatedQuery, wait_until_no_thread
from tests.ui.conftest_data import BIG_ROWS, make_tab, write_tab


def run_and_wait(
    qtbot, tab: SqlTabWidget, action=None, timeout: int = 60_000, *, ok: bool | None = None
):
    """Run (or ``action``) and return the result dict or the exception; with ``ok`` set,
    check which of the two it is."""
    with qtbot.waitSignal(tab.sig_run_finished, timeout=timeout) as blocker:
        (action or tab.run)()
    outcome = blocker.args[0]
    if ok is True:
        assert isinstance(outcome, dict), f"the run failed: {outcome!r}"
    elif ok is False:
        assert isinstance(outcome, BaseException), f"the run did not fail: {outcome!r}"
    return outcome


def test_run_pages_a_million_rows_from_duckdb(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    result = run_and_wait(qtbot, tab, ok=True)
    assert result["row_count"] == BIG_ROWS and result["cached_table_name"] == "all_big"
    assert not tab.banner.isVisible()  # the QEM's "preview is cut" note: the grid pages all
    model = tab.result.model
    assert isinstance(model, PagedResultModel)
    assert model.rowCount() == BIG_ROWS
    assert [c["name"] for c in model.columns] == ["id", "name", "amount", "day", "bucket"]
    header = [
        model.headerData(i, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole).splitlines()[0]
        for i in range(model.columnCount())
    ]
    assert header[0] == "id  BIGINT" and header[3] == "day  DATE"
    # the first page came with the run; nothing more is held than what was shown
    assert model.index(0, 0).data() == "0"
    assert len(model.loaded_blocks) <= 2

    grid = tab.result.grid
    for target in (BIG_ROWS - 1, 1_000_003, 737_777):
        grid.scrollTo(model.index(target, 0))
        qtbot.waitUntil(lambda t=target: model.is_loaded(t), timeout=10_000)
        assert model.index(target, 0).data() == str(target)
        assert model.index(target, 1).data() == f"customer {target % 5000}"
        bucket = model.index(target, 4)
        assert bucket.data() == ("NULL" if target % 10 == 0 else str(target % 7))
    # a bounded cache, whatever was scrolled through
    assert len(model.loaded_blocks) <= 96

    qtbot.waitUntil(lambda: len(read_history(app_services.workspace)) == 1, timeout=5000)
    history = read_history(app_services.workspace)
    assert history[-1]["tab"] == "all_big" and history[-1]["row_count"] == BIG_ROWS


def test_copy_selection_as_csv_and_tsv(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "regions", "SELECT * FROM small ORDER BY region\n")
    tab = make_tab(qtbot, app_services, "regions")
    run_and_wait(qtbot, tab, ok=True)
    grid = tab.result.grid
    model = tab.result.model
    selection = grid.selectionModel()
    for row in (0, 1):
        for col in (0, 1):
            selection.select(model.index(row, col), QItemSelectionModel.SelectionFlag.Select)
    grid.copy_selection(",")
    text = QApplication.clipboard().text()
    assert list(csv.reader(io.StringIO(text))) == [
        ["region", "revenue"],
        ["east", ""],
        ["north", "120.5"],
    ]
    grid.copy_selection("\t")
    assert QApplication.clipboard().text().splitlines()[2] == "north\t120.5"


def test_copy_of_rows_not_loaded_fetches_them_in_a_worker(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    grid, model = tab.result.grid, tab.result.model
    first = model.index(900_000, 0)
    last = model.index(900_009, 2)
    grid.selectionModel().select(
        QItemSelection(first, last), QItemSelectionModel.SelectionFlag.Select
    )
    QApplication.clipboard().clear()
    with qtbot.waitSignal(grid.sig_copy_finished, timeout=10_000) as blocker:
        grid.copy_selection("\t")
    assert blocker.args == [10]
    lines = QApplication.clipboard().text().splitlines()
    assert lines[0] == "id\tname\tamount"
    assert lines[1].split("\t")[0] == "900000" and lines[-1].split("\t")[0] == "900009"


def test_export_writes_the_whole_result(qtbot, app_services, tmp_path):
    tab = make_tab(qtbot, app_services, "by_bucket")
    run_and_wait(qtbot, tab, tab.source_run, ok=True)
    target = tmp_path / "out" / "buckets.parquet"
    with qtbot.waitSignal(tab.result.sig_export_finished, timeout=30_000) as blocker:
        tab.result.export_to(target)
    assert blocker.args[0]["row_count"] == 8
    rows = duckdb.sql(f"SELECT bucket, n FROM '{target}' ORDER BY bucket NULLS FIRST").fetchall()
    assert rows[0] == (None, BIG_ROWS // 10)
    assert sum(n for _, n in rows) == BIG_ROWS


def test_cancel_stops_only_this_tabs_query(qtbot, app_services):
    # a cross join DuckDB cannot fold away: minutes of work unless interrupted
    slow = "SELECT count(*) AS n FROM big a, big b WHERE (a.id * 7 + b.id * 13) % 1000003 = 17\n"
    write_tab(app_services.workspace.root, "p", "slow_a", slow)
    write_tab(app_services.workspace.root, "p", "slow_b", slow)
    tab_a = make_tab(qtbot, app_services, "slow_a")
    tab_b = make_tab(qtbot, app_services, "slow_b")
    app_services.workers.pool.setMaxThreadCount(3)  # the two tabs and the job below
    # a third caller's statement, held inside DuckDB until tab A's cancel is over
    other, outcome = GatedQuery(), {}
    submit_query(
        app_services,
        lambda _ctx, query: other.run(query.engine),
        label="other",
        on_result=lambda n: outcome.setdefault("result", n),
        on_error=lambda exc: outcome.setdefault("error", exc),
    )
    qtbot.waitUntil(other.entered.is_set, timeout=20_000)
    tab_a.run()
    tab_b.run()
    qtbot.waitUntil(lambda: len(app_services.running_queries()) == 3, timeout=5000)
    # no "No result yet" while it runs: it says it is running, and for how long
    qtbot.waitUntil(lambda: "is running ·" in tab_a.result.summary.text(), timeout=5000)
    assert tab_a.result.summary.text().startswith("The query is running · ")
    assert tab_a.stop_action.isEnabled() and not tab_a.run_action.isEnabled()
    # both tabs' slow statements are under way (not the checks before them), so the
    # cancel below meets tab A's inside DuckDB while tab B's runs beside it
    engine = app_services.query.engine
    qtbot.waitUntil(
        lambda: sum("1000003" in s for s in engine.statements_under_way()) == 2, timeout=15_000
    )
    with qtbot.waitSignal(tab_a.sig_run_finished, timeout=15_000) as blocker:
        tab_a.cancel()
    assert getattr(blocker.args[0], "code", None) == "QUERY_CANCELLED"
    assert "cancelled" in tab_a.banner.text()
    assert tab_a.result.summary.text() == "No result: the run was cancelled (see above)."
    # the cancel and its re-interrupts are over: had one reached another caller's cursor,
    # the held statement would fail once it goes on
    wait_until_no_thread("lantide-cancel")
    assert tab_b.running and not outcome
    other.open()
    qtbot.waitUntil(lambda: bool(outcome), timeout=20_000)
    assert outcome == {"result": GatedQuery.expected}, (
        "cancelling one tab must not cancel another caller's query"
    )
    assert tab_b.running
    # the status bar's cancel goes through services and the same per-worker interrupt
    with qtbot.waitSignal(tab_b.sig_run_finished, timeout=15_000) as blocker:
        app_services.cancel_queries()
    assert getattr(blocker.args[0], "code", None) == "QUERY_CANCELLED"
    qtbot.waitUntil(lambda: not app_services.running_queries(), timeout=5000)
    assert tab_a.run_action.isEnabled()


def test_error_marks_the_position_in_the_editor(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "broken", "SELECT id,\n       amountx\nFROM big\n")
    tab = make_tab(qtbot, app_services, "broken")
    error = run_and_wait(qtbot, tab, ok=False)
    assert error.code == "BIND_ERROR" and error.position == (2, 8)
    assert tab.editor.error_position == (2, 8)
    assert tab.editor.textCursor().blockNumber() == 1
    assert tab.editor.textCursor().positionInBlock() == 7
    from lantide.ui.analyst_words import plain_hint  # the hint in the analyst's words

    assert tab.banner.isVisible() and plain_hint(error.hint) in tab.banner.text()
    assert "read_schema" not in tab.banner.text()
    assert "amountx" in tab.banner.text()
    assert any(b.text() == "Go to line 2" for b in tab.banner.buttons())
    # the marker goes away with the next edit
    tab.editor.insertPlainText(" ")
    assert tab.editor.error_position is None


def test_syntax_error_in_a_selection_is_marked_where_it_is_in_the_tab(qtbot, app_services):
    write_tab(
        app_services.workspace.root,
        "p",
        "scratch2",
        "-- notes\nSELECT 1;\n  SELECT id\n  FROM big\n  WHERE amount >> \n",
    )
    tab = make_tab(qtbot, app_services, "scratch2")
    cursor = tab.editor.textCursor()
    start = tab.editor.document().findBlockByNumber(2).position() + 2
    cursor.setPosition(start)
    cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
    tab.editor.setTextCursor(cursor)
    error = run_and_wait(qtbot, tab, ok=False)
    assert error.code == "SQL_SYNTAX" and error.position is not None
    line_in_selection, column = error.position
    assert line_in_selection == 3
    assert tab.editor.error_position == (2 + line_in_selection, column)
    assert tab.editor.document().findBlockByNumber(4).text().startswith("  WHERE amount")


def test_refusal_shows_the_guards_advice(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "dropper", "DROP TABLE big\n")
    tab = make_tab(qtbot, app_services, "dropper")
    error = run_and_wait(qtbot, tab, ok=False)
    assert error.code.startswith("QUERY_REFUSED")
    assert error.hint and error.hint in tab.banner.text()
    assert error.code in tab.banner.text()
    assert tab.result.model is None  # no stale result under a refusal


def test_the_analysts_tab_runs_without_a_purpose_while_executing(qtbot, app_services):
    """Purpose is the agent's duty: the analyst's run goes through as an exploratory step
    and says how to make it formal; the 40-character limit is shown while typing, and a
    longer purpose is refused with the advice."""
    app_services.workspace.project("p").approve_plan()
    write_tab(app_services.workspace.root, "p", "step1", "SELECT region FROM small\n")
    tab = make_tab(qtbot, app_services, "step1")
    result = run_and_wait(qtbot, tab, ok=True)
    assert result["row_count"] == 4 and not result["step"].get("purpose")
    assert "NO_PURPOSE" in result["warning_codes"]
    assert "exploratory step" in tab.banner.text() and "at most 40" in tab.banner.text()
    # the limit, told before a run: the count shows near it and turns to a warning past it
    assert tab.purpose_count.isHidden()
    tab.purpose_edit.setText("x" * 35)
    assert not tab.purpose_count.isHidden() and tab.purpose_count.text() == "35/40"
    tab.purpose_edit.setText("regions present in the sample, per quarter")  # 42
    assert tab.purpose_count.text() == "42/40"
    assert "2 characters too long" in tab.purpose_count.toolTip()
    error = run_and_wait(qtbot, tab, ok=False)
    assert error.code == "PURPOSE_TOO_LONG"
    tab.purpose_edit.setText("regions present in the sample")
    result = run_and_wait(qtbot, tab, ok=True)
    assert result["step"]["purpose"] == "regions present in the sample"
    assert "NO_PURPOSE" not in (result.get("warning_codes") or [])


def test_the_agents_run_still_needs_a_purpose_while_executing(app_services):
    from lantide.query.errors import QueryRefused

    app_services.workspace.project("p").approve_plan()
    write_tab(app_services.workspace.root, "p", "step2", "SELECT region FROM small\n")
    with pytest.raises(QueryRefused) as err:
        app_services.query.run_sql_tab("p", "step2")  # the tools' call: required
    assert err.value.code == "PURPOSE_REQUIRED" and "at most 40" in err.value.hint


def test_run_selection_runs_only_the_selected_sql(qtbot, app_services):
    write_tab(
        app_services.workspace.root,
        "p",
        "scratch",
        "-- scratch\nSELECT count(*) AS n FROM small;\nSELECT 42 AS answer\n",
    )
    tab = make_tab(qtbot, app_services, "scratch")
    cursor = tab.editor.textCursor()
    block = tab.editor.document().findBlockByNumber(1)
    cursor.setPosition(block.position())
    cursor.setPosition(
        block.position() + len("SELECT count(*) AS n FROM small"), QTextCursor.MoveMode.KeepAnchor
    )
    tab.editor.setTextCursor(cursor)
    result = run_and_wait(qtbot, tab, ok=True)
    assert result["columns"] == [{"name": "n", "type": "BIGINT"}]
    assert tab.result.model.index(0, 0).data() == "4"
    assert not tab.is_dirty()


def test_source_run_reports_each_tab_and_skips_up_to_date_ones(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "by_bucket")
    report = run_and_wait(qtbot, tab, tab.source_run, ok=True)
    assert [e["tab"] for e in report["tabs"]] == ["all_big", "by_bucket"]
    assert tab.source_run_view.statuses == {"all_big": "ran", "by_bucket": "ran"}
    assert tab.result.model.rowCount() == 8
    report = run_and_wait(qtbot, tab, tab.source_run, ok=True)
    assert tab.source_run_view.statuses == {"all_big": "skipped", "by_bucket": "skipped"}
    assert "2 up to date" in tab.source_run_view.headline.text()
    assert tab.result.model.rowCount() == 8


def test_lineage_shows_reads_readers_and_state(qtbot, app_services):
    upstream = make_tab(qtbot, app_services, "all_big")
    qtbot.waitUntil(lambda: upstream.lineage.summary is not None, timeout=10_000)
    summary = upstream.lineage.summary
    assert summary["state"] == "never_run"
    assert summary["read_by"] == ["by_bucket"]
    assert [s.strip('"') for s in summary["reads_sources"]] == ["big"]
    run_and_wait(qtbot, upstream, ok=True)
    qtbot.waitUntil(lambda: upstream.lineage.summary["state"] == "up_to_date", timeout=10_000)
    downstream = make_tab(qtbot, app_services, "by_bucket")
    qtbot.waitUntil(lambda: downstream.lineage.summary is not None, timeout=10_000)
    assert downstream.lineage.summary["reads_tabs"] == [("all_big", "up_to_date")]
    assert downstream.lineage.summary["state"] == "never_run"
    with qtbot.waitSignal(app_services.sig_open_requested, timeout=2000) as blocker:
        reads = downstream.lineage.tree.topLevelItem(0)
        downstream.lineage._activated(reads.child(0))
    assert blocker.args[0] == {"kind": "sql", "project": "p", "name": "all_big"}


def test_external_edit_reloads_a_clean_tab_and_asks_a_dirty_one(qtbot, app_services):
    path = write_tab(app_services.workspace.root, "p", "edited", "SELECT 1 AS a\n")
    tab = make_tab(qtbot, app_services, "edited")
    path.write_text("SELECT 2 AS b\n", encoding="utf-8")
    qtbot.waitUntil(lambda: tab.editor.toPlainText() == "SELECT 2 AS b\n", timeout=10_000)
    assert not tab.is_dirty()
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    tab.editor.insertPlainText("-- mine\n")
    assert tab.is_dirty()
    path.write_text("SELECT 3 AS c\n", encoding="utf-8")
    qtbot.waitUntil(lambda: "changed on disk" in tab.banner.text(), timeout=10_000)
    assert tab.editor.toPlainText() == "SELECT 2 AS b\n-- mine\n"  # nothing lost
    take_theirs = next(b for b in tab.banner.buttons() if b.text() == "Take theirs")
    take_theirs.click()
    qtbot.waitUntil(lambda: tab.editor.toPlainText() == "SELECT 3 AS c\n", timeout=10_000)
    assert not tab.is_dirty()


def test_save_writes_atomically_and_clears_dirty(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    titles = []
    tab.sig_title_changed.connect(titles.append)
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    tab.editor.insertPlainText("LIMIT 10\n")
    assert tab.is_dirty() and titles
    assert tab.save()
    assert not tab.is_dirty()
    assert tab.path.read_text(encoding="utf-8") == "SELECT * FROM big\nLIMIT 10\n"
    assert not list(tab.path.parent.glob("*.lantide-tmp"))


def test_completion_offers_tables_and_columns(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    catalog = tab.editor.catalog
    qtbot.waitUntil(lambda: "big" in catalog.tables, timeout=10_000)
    tab.editor.setPlainText("SELECT am FROM big")
    catalog.columns_of("big")
    qtbot.waitUntil(lambda: catalog.columns_of("big") is not None, timeout=10_000)
    cursor = tab.editor.textCursor()
    cursor.setPosition(len("SELECT am"))
    tab.editor.setTextCursor(cursor)
    start, prefix, words = tab.editor._candidates()
    assert prefix == "am" and words[0] == "amount"
    tab.editor.show_completions()
    assert tab.editor.completer.popup().isVisible()
    tab.editor.insert_completion("amount")
    assert tab.editor.toPlainText() == "SELECT amount FROM big"
    tab.editor.setPlainText("SELECT * FROM sm")
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    assert tab.editor._candidates()[2] == ["small"]


@pytest.mark.parametrize("kind", ["bar", "line"])
def test_quick_chart_of_a_result(qtbot, app_services, kind):
    sql = (
        "SELECT region, revenue FROM small ORDER BY region\n"
        if kind == "bar"
        else "SELECT day, sum(amount) AS total FROM big GROUP BY day ORDER BY day\n"
    )
    write_tab(app_services.workspace.root, "p", f"chart_{kind}", sql)
    tab = make_tab(qtbot, app_services, f"chart_{kind}")
    run_and_wait(qtbot, tab, ok=True)
    chart = tab.result.chart
    tab.result.views.setCurrentWidget(chart)
    data = chart.current_data()
    assert data.kind == kind
    if kind == "bar":
        assert data.x == ["east", "north", "south", "west"]
        assert data.y == [None, 120.5, 80.25, 42.0]
    else:
        assert data.x_is_time and len(data.x) in (256, 365)  # the first page, then...
        qtbot.waitUntil(lambda: len(chart.rows) == 365, timeout=10_000)  # ...all rows
        assert len(chart.current_data().x) == 365
    image = chart.canvas.grab().toImage()
    colours = {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 7)
        for y in range(0, image.height(), 7)
    }
    assert "#3b82f6" in colours  # the series was drawn


def test_comment_toggle_and_run_shortcuts(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "keys", "SELECT region\nFROM small\n")
    tab = make_tab(qtbot, app_services, "keys")
    tab.editor.selectAll()
    qtbot.keyClick(tab.editor, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert tab.editor.toPlainText() == "-- SELECT region\n-- FROM small\n"
    qtbot.keyClick(tab.editor, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert tab.editor.toPlainText() == "SELECT region\nFROM small\n"
    cursor = tab.editor.textCursor()
    cursor.clearSelection()
    tab.editor.setTextCursor(cursor)
    tab.activateWindow()
    qtbot.waitUntil(tab.isActiveWindow, timeout=5000)  # shortcuts go to the active window
    tab.editor.setFocus()
    with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000) as blocker:
        qtbot.keyClick(tab.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert isinstance(blocker.args[0], dict) and blocker.args[0]["row_count"] == 4


def test_qem_hints_show_above_the_result(qtbot, app_services):
    write_tab(
        app_services.workspace.root,
        "p",
        "three_ctes",
        "WITH a AS (SELECT * FROM small), b AS (SELECT * FROM a), c AS (SELECT * FROM b)\n"
        "SELECT count(*) AS n FROM c\n",
    )
    tab = make_tab(qtbot, app_services, "three_ctes")
    result = run_and_wait(qtbot, tab, ok=True)  # a tab runs; the advice is a warning
    codes = [h["code"] for h in result["hints"]]
    assert "COMPLEXITY_SPLIT_RECOMMENDED" in codes
    assert tab.banner.isVisible() and tab.banner.level == "warning"
    assert "COMPLEXITY_SPLIT_RECOMMENDED" in tab.banner.text()
    assert tab.result.model.index(0, 0).data() == "4"


def test_find_and_replace_in_the_sql_editor(qtbot, app_services):
    write_tab(
        app_services.workspace.root,
        "p",
        "findme",
        "SELECT region, revenue\nFROM small\nWHERE revenue > 50 AND region <> 'x'\n",
    )
    tab = make_tab(qtbot, app_services, "findme")
    tab.show_replace()  # the window's Replace (Ctrl+H: test_shortcut_audit.py)
    assert tab.find_bar.isVisible() and tab.find_bar.replace_row.isVisible()
    tab.find_bar.find_edit.setText("revenue")
    assert len(tab.find_bar.matches()) == 2
    # the matches are highlighted beside the current-line highlight
    assert len(tab.editor.extraSelections()) == 1 + 2
    tab.find_bar.replace_edit.setText("amount")
    tab.find_bar.replace_all()
    assert tab.editor.toPlainText().count("amount") == 2 and tab.is_dirty()
    tab.find_bar.close_bar()
    assert len(tab.editor.extraSelections()) == 1


def test_cancel_a_source_run_stops_the_chain(qtbot, app_services):
    root = app_services.workspace.root
    write_tab(
        root,
        "p",
        "slow_up",
        "SELECT count(*) AS n FROM big a, big b WHERE (a.id * 7 + b.id * 13) % 1000003 = 17\n",
    )
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
    assert isinstance(report, dict), report  # the chain reports each tab
    statuses = {e["tab"]: e["status"] for e in report["tabs"]}
    assert statuses == {"slow_up": "failed", "after_slow": "not_run"}  # for the agent
    assert tab.source_run_view.statuses == {"slow_up": "cancelled", "after_slow": "not_run"}
    assert "cancelled by you" in tab.banner.text()
    assert not tab.running and tab.run_action.isEnabled()
