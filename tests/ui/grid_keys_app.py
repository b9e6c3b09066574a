"""A SQL tab in a real window for ``tests/ui/test_grid_keys_on_x.py``: a workspace with one
tab of 1,000 rows, run, the grid focused on a cell of the ``name`` column. It writes
``OUT/ready``, then ``OUT/state.json`` every 0.1 s (the grid's filters, rows, the
clipboard, the selection's summary) until ``OUT/stop`` appears.

Run as ``python -m tests.ui.grid_keys_app OUT`` with DISPLAY set and QT_QPA_PLATFORM=xcb.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

SQL = "SELECT i AS id, 'name ' || i AS name FROM range(1000) r(i)\n"


def main(argv: list[str]) -> int:
    from PySide6.QtWidgets import QApplication

    from lantide.ui.services import AppServices
    from lantide.ui.sql.sql_tab import SqlTabWidget
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import Settings

    out = Path(argv[0])
    app = QApplication.instance() or QApplication(sys.argv[:1])
    ws = Workspace.create(out / "ws", name="keys")
    ws.create_project("p")
    (ws.projects_dir / "p" / "sql" / "t.sql").write_text(SQL, encoding="utf-8")
    services = AppServices(ws, Settings())
    services.start(watcher=False)

    def pump(condition, seconds: float = 60) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not condition():
            app.processEvents()
            time.sleep(0.01)

    pump(lambda: services.query is not None)
    tab = SqlTabWidget(services, "p", "t")
    tab.setWindowTitle("grid keys")
    tab.resize(900, 600)
    tab.show()
    pump(lambda: not tab.editor.isReadOnly())
    done: list = []
    tab.sig_run_finished.connect(done.append)
    tab.run()
    pump(lambda: bool(done))
    grid, model = tab.result.grid, tab.result.model
    grid.activateWindow()
    grid.setFocus()
    grid.setCurrentIndex(model.index(0, 1))
    (out / "ready").write_text("1", encoding="utf-8")
    end = time.monotonic() + 120
    while time.monotonic() < end and not (out / "stop").exists():
        state = {
            "filters": model.filters,
            "rows": model.rowCount(),
            "counting": model.counting,
            "clipboard": QApplication.clipboard().text(),
            "selection": tab.result.selection_summary.text(),
        }
        (out / "state.tmp").write_text(json.dumps(state), encoding="utf-8")
        (out / "state.tmp").replace(out / "state.json")  # read whole, never half written
        for _ in range(10):
            app.processEvents()
            time.sleep(0.01)
    services.close()
    ws.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
