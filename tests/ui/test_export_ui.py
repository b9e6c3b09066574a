"""Export from the result grid follows the grid's sort and starts in the folder of the
last export (the file dialog itself is the platform's; it is stood in for here)."""

from __future__ import annotations

import duckdb
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from tests.ui.test_sql_tab import make_tab, run_and_wait


def test_export_follows_the_grids_sort(qtbot, app_services, tmp_path):
    tab = make_tab(qtbot, app_services, "by_bucket")
    run_and_wait(qtbot, tab, tab.source_run, ok=True)
    model = tab.result.model
    total = [c["name"] for c in model.columns].index("total")
    model.sort(total, Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: model.order_by == [("total", "desc")], timeout=5000)
    target = tmp_path / "sorted.csv"
    with qtbot.waitSignal(tab.result.sig_export_finished, timeout=30_000):
        tab.result.export_to(target)
    totals = [r[0] for r in duckdb.sql(f"SELECT total FROM '{target}'").fetchall()]
    assert len(totals) == 8 and totals == sorted(totals, reverse=True)


def test_export_dialog_starts_in_the_last_folder(qtbot, app_services, tmp_path, monkeypatch):
    tab = make_tab(qtbot, app_services, "by_bucket")
    run_and_wait(qtbot, tab, tab.source_run, ok=True)
    starts = []
    answers = iter([str(tmp_path / "exports" / "first.csv"), ""])

    def save_file_name(_parent, _title, start, _filters):
        starts.append(start)
        return next(answers), "CSV (*.csv)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_file_name))
    (tmp_path / "exports").mkdir()
    with qtbot.waitSignal(tab.result.sig_export_finished, timeout=30_000):
        tab.result.export_dialog()
    assert (tmp_path / "exports" / "first.csv").is_file()
    tab2 = make_tab(qtbot, app_services, "all_big")  # another tab, another result
    tab2.result.relation = "by_bucket"
    tab2.result.export_dialog()  # cancelled: the second answer is ""
    assert starts[1].startswith(str(tmp_path / "exports"))
