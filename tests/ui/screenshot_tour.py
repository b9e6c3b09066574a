"""The screenshot tour: the desktop app on a real X server, walked through its main states
at two window sizes in light and dark, one PNG per (state, size, theme).

Run as a program (``python -m tests.ui.screenshot_tour WORKSPACE OUTDIR``) with DISPLAY
set and ``QT_QPA_PLATFORM=xcb``; ``tests/ui/test_screenshot_tour.py`` starts it on its own
Xvfb. It writes ``OUTDIR/tour.json``: per shot the file and what the cheap checks found
(texts that do not fit their widget, a window that resized itself). The chat turn talks
to the loopback OpenAI-compatible server of ``tests/fakes``, started in this process.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from lantide.workspace import layout

SIZES = ((1024, 700), (1440, 900))
THEMES = ("light", "dark")
STATES = (
    "welcome",
    "plan",
    "sql",
    "source-run",
    "sql-format",
    "plan-tree",
    "grid-filter",
    "grid-summary",
    "grid-format",
    "explorer-columns",
    "lineage-graph",
    "chat",
    "settings",
    "settings-problem",
    "connections",
    "knowledge",
    "palette",
    "agent-edit",
    "approve-question",
    "plan-approved",
    "long-status",
    "chat-question",
    "quick-chart",
    "html-report",
    "check-badges",
    "tab-renamed",
)
FAN_OUT_SQL = (
    "SELECT c.segment, count(*) AS customers FROM customers c "
    "JOIN orders o USING (customer_id) GROUP BY 1"
)
LONG_MESSAGE = (
    "Registered /home/analyst/data/" + "nested_folder/" * 25 + "orders.parquet (120,000 rows)"
)
MESSY_SQL = (
    "-- customers per region and how many placed no Q3 order (the Plan's first question)\n"
    "select c.region, count(*) as customers, sum(case when o.customer_id is null then 1 "
    "else 0 end) as without_q3_order from customers c left join orders o on o.customer_id = "
    "c.customer_id and o.order_date >= date '2025-07-01' -- Q3 only\n"
    "group by c.region order by without_q3_order desc\n"
)
CHAT_SQL = "SELECT region, count(*) AS customers\nFROM customers\nGROUP BY region\nORDER BY 2 DESC"


def _wait(app, condition, timeout: float = 30.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the tour waited {timeout:.0f} s for {what or condition}")
        app.processEvents()
        time.sleep(0.01)


def _settle(app, seconds: float = 0.25) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def clipped_texts(root) -> list[str]:
    """Visible buttons and labels under ``root`` whose text does not fit their size."""
    from tests.ui.text_fit import clipped_widgets

    return clipped_widgets(root)


class Tour:
    def __init__(self, workspace: Path, out: Path, server):
        from PySide6.QtWidgets import QApplication

        from lantide.ui.main_window import MainWindow
        from lantide.ui.services import AppServices
        from lantide.ui.theme import install_theme
        from lantide.workspace.model import Workspace
        from lantide.workspace.settings import load_settings

        self.app = QApplication.instance() or QApplication(sys.argv[:1])
        self.out = out
        self.server = server
        self.theme = install_theme(self.app, "light")
        self.workspace = Workspace.open(workspace, lock=True)
        self.services = AppServices(self.workspace, load_settings())
        self.window = MainWindow(self.services, restore=False)
        self.window.move(0, 0)
        self.window.resize(*SIZES[-1])
        self.window.show()
        self.services.start()
        _wait(self.app, self.window.is_idle, what="the window to become idle")
        self.records: list[dict] = []
        self.dialog = None
        self.popups: list = []
        self.place_popups = None  # placed again at each window size (menus)
        self.before_shot = None  # what to show again after each resize (a tooltip)

    # -- states --------------------------------------------------------------------------
    def enter(self, state: str) -> None:
        w = self.window
        for popup in self.popups:  # the grid's filter popup and header menu close
            popup.close()
        self.popups = []
        self.place_popups = None
        if self.records and self.records[-1]["state"] == "grid-format":
            panel = self.sql.result  # the later states show the tab as it was
            panel.apply_filters([])
            panel.set_column_format("q2_revenue_lost", {})
            panel.set_first_column_frozen(False)
            _wait(self.app, lambda: not panel.model.filters, what="the filter cleared")
        if state.startswith("grid-"):
            self._grid_state(state)
        elif state == "plan":
            tab = w.open_tab("plan", "q3-churn")
            _wait(self.app, lambda: tab.snapshot is not None, what="the Plan")
        elif state == "sql":  # its upstream tabs are not cached yet: a Source Run
            self.sql = w.open_tab("sql", "q3-churn", "q3_churn_by_region")
            _wait(self.app, lambda: not self.sql.editor.isReadOnly(), what="the SQL tab")
            done = []
            self.sql.sig_run_finished.connect(done.append)
            self.sql.source_run()
            _wait(self.app, lambda: bool(done), 60, "the Source Run")
            if not isinstance(done[0], dict):
                raise RuntimeError(f"the Source Run of the sample tab failed: {done[0]!r}")
            self.sql.bottom.setCurrentWidget(self.sql.result)
        elif state == "source-run":
            self.sql.bottom.setCurrentWidget(self.sql.source_run_view)
        elif state == "sql-format":  # one line of SQL, formatted by the tab's Format
            sql_dir = self.workspace.root / "projects" / "q3-churn" / "sql"
            (sql_dir / "regions_without_q3.sql").write_text(MESSY_SQL, encoding="utf-8")
            self.services.notify_listing_changed()  # the explorer lists the new file
            tab = w.open_tab("sql", "q3-churn", "regions_without_q3")
            _wait(self.app, lambda: not tab.editor.isReadOnly(), what="the SQL tab to format")
            formatted = []
            tab.sig_format_finished.connect(formatted.append)
            tab.format_action.trigger()
            _wait(self.app, lambda: bool(formatted), what="the Format")
            if not tab.save():
                raise RuntimeError("the formatted tab could not be saved")
        elif state == "plan-tree":  # Explain Analyze of the sample tab: the plan with timings
            w.tabs.setCurrentWidget(self.sql)
            plans = []
            self.sql.sig_plan_finished.connect(plans.append)
            self.sql.explain_analyze_action.trigger()
            _wait(self.app, lambda: bool(plans), 60, "Explain Analyze")
            if isinstance(plans[0], BaseException):
                raise RuntimeError(f"Explain Analyze of the sample tab failed: {plans[0]!r}")
        elif state == "explorer-columns":  # a data file open to its columns, a profile
            self._explorer_columns()
        elif state == "lineage-graph":  # the project's tabs as a picture
            self.before_shot = None
            self._lineage_graph()
        elif state == "chat":
            self._chat_turn()
        elif state == "settings":
            from lantide.ui.settings.settings_dialog import SettingsDialog

            self.dialog = SettingsDialog(self.services, w)
            self.dialog.show()
        elif state == "settings-problem":  # a profile with a problem; the rest was saved
            d = self.dialog
            d.add_profile()
            d.name_edit.setText("work")
            d.name_edit.editingFinished.emit()
            d.base_url.setCurrentText("llm.example.test/v1")
            d.model_edit.setCurrentText("gpt-4o")
            d.save()
            _wait(self.app, lambda: d.profile_error.isVisible(), what="the profile's error")
        elif state == "connections":
            self.dialog.show_page("Connections")
            page = self.dialog.connections_page
            _wait(self.app, lambda: "ODBC" in page.drivers_label.text(), what="the drivers")
            page.fields.driver_combo.setCurrentText("PostgreSQL Unicode")
            page.fields.host_edit.setText("db.example.org")
            page.fields.database_edit.setText("sales")
            page.fields._build()
        elif state == "knowledge":
            self.dialog.close()
            self.dialog = None
            w._show_dock(w.knowledge_dock)
        elif state == "palette":
            self.dialog = w.show_command_palette()
            self.dialog.search.setText("run")
        elif state == "agent-edit":
            self.dialog.close()
            self.dialog = None
            self._agent_edits_the_plan()
        elif state == "approve-question":  # open annotations: Approve Plan asks first
            self._reject_the_pending_edit()
            from lantide.ui.documents.plan_approval import approval_question
            from lantide.workspace.lifecycle import approval_concerns

            plan = w.open_tab("plan", "q3-churn")
            self.dialog = approval_question(
                plan, "q3-churn", approval_concerns(plan.open_count(), False), False
            )
            self.dialog.show()
        elif state == "plan-approved":  # Withdraw approval beside the approval
            self.dialog.close()
            self.dialog = None
            plan = w.open_tab("plan", "q3-churn")
            self.workspace.project("q3-churn").approve_plan()
            plan.evidence.refresh()
            _wait(self.app, plan.evidence.withdraw_button.isVisible, what="Withdraw approval")
        elif state == "long-status":  # elided in the status bar; the window keeps its size
            self.services.post_message(LONG_MESSAGE)
        elif state == "chat-question":  # long choices and a reflection wrap in the chat
            transcript = w.chat.transcript
            transcript.add_question(
                "Which denominator do you want for the churn rate?",
                ["All customers active in Q2 2025 (including trials)", "Only paying customers"],
            )
            transcript.add_reflection(
                {"verdict": "problems", "problems": [{"code": "JOIN_FANOUT", "message": "3x"}]}
            )
            w.act_focus_chat.trigger()
            _settle(self.app, 0.3)
            bar = transcript.verticalScrollBar()
            bar.setValue(bar.maximum())
        elif state == "quick-chart":  # 11 regions on 33 rows: grouped bars, slanted labels
            tab = w.open_tab("sql", "q3-churn", "q3_churn_by_region")
            chart = tab.result.chart
            columns = [
                {"name": "region", "type": "VARCHAR"},
                {"name": "quarter", "type": "VARCHAR"},
                {"name": "revenue", "type": "DOUBLE"},
            ]
            rows = [
                (f"DE-{code}", q, 1000.0 * (i + 1) + 250 * n)
                for i, code in enumerate(("BE", "BY", "HH", "HE", "NI", "NW", "RP", "SL", "SN"))
                for n, q in enumerate(("2025-Q1", "2025-Q2", "2025-Q3"))
            ]
            chart.set_result(columns, rows, len(rows), table="q3_churn_by_region")
            tab.bottom.setCurrentWidget(tab.result)
            tab.result.views.setCurrentWidget(chart)
        elif state == "html-report":  # the HTML Report tab draws its chart
            self._html_report_with_a_chart()
        elif state == "check-badges":  # the tool card's check badge names it in words
            result = self.services.query.run_query(FAN_OUT_SQL, purpose="segments")
            card = w.chat.transcript.add_card("tour_fan_out", "run_query", {"sql": FAN_OUT_SQL})
            card.set_result(True, result, 45)
            w.act_focus_chat.trigger()
            _settle(self.app, 0.3)
            bar = w.chat.transcript.verticalScrollBar()  # the card (and its badge) is last
            bar.setValue(bar.maximum())
        elif state == "tab-renamed":  # renamed from the tab's menu: the open tab follows
            from lantide.ui.tab_menu import rename_tab

            tab = w.open_tab("sql", "q3-churn", "q3_churn_by_region")
            _wait(self.app, lambda: not tab.editor.isReadOnly(), what="the SQL tab")
            rename_tab(w.tabs, "q3-churn", "q3_churn_by_region", "churn by region")
            _wait(self.app, lambda: tab.tab_name == "churn by region", what="the rename")

    def _grid_state(self, state: str) -> None:
        """The result grid of the SQL tab: filtered with the filter popup open, a column's
        summary below it, the header's Format menu over a frozen first column."""
        panel = self.sql.result
        self.sql.bottom.setCurrentWidget(panel)
        panel.views.setCurrentWidget(panel.grid)
        model = panel.model
        names = [c["name"] for c in model.columns]
        if state == "grid-filter":
            panel.apply_filters([{"column": "q2_customers", "op": "range", "low": "2"}])
            _wait(self.app, lambda: bool(model.filters) and not model.counting, what="filter")
            panel.edit_filter(names.index("region"))
            popup = panel.filter_popup
            popup.value.setText("DE")
            self.popups.append(popup)

            def under_header() -> None:  # at each window size
                header = panel.grid.horizontalHeader()
                popup.show_at(header.viewport().mapToGlobal(header.rect().bottomLeft()))

            self.place_popups = under_header
        elif state == "grid-summary":
            panel.grid.selectColumn(names.index("q2_revenue_lost"))
            _wait(
                self.app,
                lambda: panel.selection_summary.text().startswith("Count"),
                what="the selection's summary",
            )
        elif state == "grid-format":
            panel.grid.clearSelection()
            panel.set_column_format("q2_revenue_lost", {"decimals": 0, "thousands": True})
            panel.set_first_column_frozen(True)
            column = names.index("churn_rate")
            menu = panel.grid.build_header_menu(column)
            formats = next(a.menu() for a in menu.actions() if a.text() == "Format churn_rate")
            self.popups += [formats, menu]

            def place() -> None:  # under the column's header, at each window size
                header = panel.grid.horizontalHeader()
                where = header.viewport().mapToGlobal(header.rect().bottomLeft())
                where.setX(where.x() + header.sectionViewportPosition(column) + 20)
                menu.popup(where)
                _settle(self.app, 0.2)
                menu.setActiveAction(formats.menuAction())
                side = menu.geometry().topRight()  # as Qt places a submenu: left if no room
                if side.x() + formats.sizeHint().width() > self.window.geometry().right():
                    side.setX(menu.geometry().left() - formats.sizeHint().width())
                formats.popup(side)

            self.place_popups = place

    def _explorer_columns(self) -> None:
        columns = self.window.explorer.columns
        table = '"customers"'
        columns.table_item(table).setExpanded(True)
        _wait(self.app, lambda: columns.column_item(table, "region") is not None, what="columns")
        tree = self.window.explorer.tree
        tree.setCurrentItem(columns.column_item(table, "region"))
        tree.scrollToItem(columns.column_item(table, "region"))
        columns.hover(columns.column_item(table, "region"))
        _wait(
            self.app,
            lambda: columns.summary_of(table, "region") is not None,
            what="the column's profile",
        )
        self.before_shot = lambda: columns.show_tip(table, "region")

    def _lineage_graph(self) -> None:
        root = self.workspace.root / "projects" / "q3-churn"
        # a tab that reads a table not there yet, and an upstream tab edited since its run
        layout.sql_tab_path(root, "churn_targets").write_text(
            "SELECT r.region, r.churn_rate, t.target\nFROM q3_churn_by_region AS r\n"
            "JOIN churn_targets_2026 AS t USING (region)\n",
            encoding="utf-8",
        )
        edited = layout.sql_tab_path(root, "customer_quarters")
        edited.write_text(edited.read_text(encoding="utf-8") + "-- per quarter\n", "utf-8")
        tab = self.sql
        self.window.tabs.setCurrentWidget(tab)
        tab.bottom.setCurrentWidget(tab.lineage)
        tab.lineage.show_graph_mode()
        view = tab.lineage.graph_view

        def drawn() -> bool:
            tab.refresh_lineage()  # no-op while one is under way
            return 'missing:"churn_targets_2026"' in view.nodes

        _wait(self.app, drawn, what="the lineage graph")

    def _chat_turn(self) -> None:
        from tests.fakes.openai_server import ToolCall, Turn

        self.server.script(
            Turn(
                text="Let me look at the customers first.",
                tool_calls=[
                    ToolCall("run_query", {"sql": CHAT_SQL, "purpose": "customers per region"})
                ],
            ),
            Turn(
                text="Customers per region:\n\n| region | customers |\n|---|---|\n"
                "| north | 12 |\n| south | 9 |\n\n**North** has the most customers.\n\n"
                # one line naming no step, one landing on the step: each says which
                "[[QUERY_STEP]] ffffffffffff: churn by region — churn rates\n"
                "[[QUERY_STEP]] customers per region — north has the most"
            ),
        )
        chat = self.window.chat
        running = []
        chat.bridge.sig_turn_running.connect(running.append)
        self.window._show_dock(self.window.chat_dock)
        chat.ask("Which region has the most customers?")
        _wait(self.app, lambda: running and running[-1] is False, 60, "the chat turn")
        self.window._show_dock(self.window.ledger_dock)  # the steps' ids, as the chat's

    def _agent_edits_the_plan(self) -> None:
        from tests.fakes.openai_server import ToolCall, Turn

        w = self.window
        plan = w.open_tab("plan", "q3-churn")
        path = self.workspace.root / "projects" / "q3-churn" / "plan.md"
        text = path.read_text(encoding="utf-8").replace(
            "## Definitions",
            "## Segments\n\nCompare churn by plan tier and by region.\n\n## Definitions",
            1,
        )
        text += "\nReview the segments with the team lead before the Report.\n"
        self.server.script(
            Turn(tool_calls=[ToolCall("update_plan", {"content": text})]),
            Turn(text="I added a Segments section to the Plan."),
        )
        running = []
        w.chat.bridge.sig_turn_running.connect(running.append)
        w.chat.ask("Add a segments section to the plan.")
        _wait(self.app, lambda: running and running[-1] is False, 60, "the agent's edit")
        bar = plan.edit_review.bar
        _wait(self.app, bar.isVisible, 30, "the agent's pending edit")
        bar.show_next()  # the second hunk: the bar says "hunk 2 of 2"
        bar.show_previous()

    def _reject_the_pending_edit(self) -> None:
        """The Plan as the sample has it again for the next states (the edit rejected)."""
        plan = self.window.open_tab("plan", "q3-churn")
        if plan.edit_review.has_pending:
            plan.edit_review.bar.decide_all("reject")
            _wait(self.app, lambda: not plan.edit_review.has_pending, 30, "the rejection")

    def _html_report_with_a_chart(self) -> None:
        from lantide import charts
        from lantide.agent.report_html import publish_html

        w = self.window
        project = self.workspace.project("q3-churn")
        spec = {
            "title": "Customers by region",
            "data": {"table": "customers"},
            "mark": "bar",
            "encoding": {
                "x": {"field": "region", "type": "nominal"},
                "y": {"aggregate": "count", "type": "quantitative"},
            },
        }
        charts.write_chart(project, "customers by region", spec)
        report = project.report_path
        report.write_text(
            "# Report: Q3 churn\n\n## Customers\n\nWhere the customers are.\n\n"
            f"![Customers by region]({layout.chart_link('customers by region')})\n",
            encoding="utf-8",
        )
        publish_html(self.workspace, project, overwrite=True, query=lambda: self.services.query)
        tab = w.open_tab("report", "q3-churn", "report.html")
        _wait(self.app, lambda: len(tab.preview.images) == 1, 60, "the HTML Report's chart")

    # -- shots ---------------------------------------------------------------------------
    def shoot(self, state: str) -> None:
        for theme in THEMES:
            self.theme.apply(theme)
            for width, height in SIZES:
                self.window.resize(width, height)
                if self.dialog is not None:
                    self.dialog.move(self.window.x() + 40, self.window.y() + 40)
                self._settle_layout()
                if self.place_popups is not None:
                    self.place_popups()
                    _settle(self.app, 0.2)
                if self.before_shot is not None:
                    self.before_shot()
                    _settle(self.app, 0.3)
                size = self.window.size()
                name = f"{state}-{width}x{height}-{theme}.png"
                shot = self.window.screen().grabWindow(0, 0, 0, width, height)
                shot.save(str(self.out / name))
                roots = [self.window] + ([self.dialog] if self.dialog is not None else [])
                self.records.append(
                    {
                        "state": state,
                        "theme": theme,
                        "size": [width, height],
                        "file": name,
                        "window_size": [size.width(), size.height()],
                        "clipped": [c for r in roots for c in clipped_texts(r)],
                    }
                )

    def _settle_layout(self) -> None:
        """Wait until the layout stops moving (the docks adapt after the window's own
        layout; a busy worker can delay the UI thread), at most a few seconds."""
        last = None
        for _ in range(30):
            _settle(self.app, 0.1)
            now = (
                self.window.size(),
                self.window.centralWidget().geometry(),
                self.window.chat_dock.geometry(),
            )
            if now == last:
                break
            last = now
        _settle(self.app, 0.1)

    def run(self) -> None:
        for state in STATES:
            self.enter(state)
            self.shoot(state)
        (self.out / "tour.json").write_text(json.dumps(self.records, indent=1), encoding="utf-8")
        self.window.shutdown()
        self.window.close()
        self.workspace.close()


def main(argv: list[str]) -> int:
    from tests.fakes.fixtures import background_answer
    from tests.fakes.openai_server import FakeOpenAIServer

    workspace, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with FakeOpenAIServer(background_reply=background_answer) as server:
        os.environ.update(server.env())
        tour = Tour(workspace, out, server)
        tour.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
