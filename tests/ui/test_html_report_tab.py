"""The HTML Report in the app: Publish HTML in the Report tab writes report.html and opens
its tab (preview and source); the agent sees it as the active HTML Report; the source is
editable and saved atomically; an invalid hand edit is saved as written and named; Open in
browser hands the file to the system browser. Real files, the real main window
(offscreen)."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from lantide.docs.html_markup import parse_report_html
from tests.ui.conftest import open_document_tab, write_externally

REPORT = (
    "# Report: Q3 churn\n\n## Customers\n\nThe base is stable.\n\n"
    "## Revenue\n\nRevenue grew; see [the method](#lt-s-customers).\n"
)


def _publish_from_report_tab(qtbot, main_window, sample_workspace):
    (sample_workspace / "projects/q3-churn/report.md").write_text(REPORT)
    tab = open_document_tab(qtbot, main_window, "report")
    bar = tab.evidence
    assert not bar.publish_button.isHidden()
    bar.publish_button.click()
    qtbot.waitUntil(
        lambda: type(main_window.tabs.currentWidget()).__name__ == "HtmlReportTabWidget",
        timeout=15_000,
    )
    html_tab = main_window.tabs.currentWidget()
    qtbot.waitUntil(lambda: "chunks" in html_tab.status.text(), timeout=15_000)
    return html_tab


def test_publish_html_opens_the_html_report_tab(main_window, qtbot, sample_workspace):
    html_tab = _publish_from_report_tab(qtbot, main_window, sample_workspace)
    path = sample_workspace / "projects/q3-churn/report.html"
    text = path.read_text(encoding="utf-8")
    assert [c.id for c in parse_report_html(text)] == [
        "header",
        "s-report-q3-churn",
        "s-customers",
        "s-revenue",
        "appendix",
    ]
    assert html_tab.title() == "report.html" and not html_tab.is_dirty()
    assert "The base is stable." in html_tab.preview.toPlainText()
    assert "<script" not in html_tab.preview.toHtml()
    assert "color-scheme" not in html_tab.preview.toPlainText()  # the page's CSS is not text
    assert html_tab.source.toPlainText() == text
    assert "5 chunks" in html_tab.status.text()
    # the agent's view: the active tab is the HTML Report
    from lantide.agent.app_state import is_html_report
    from lantide.ui.chat.chat_bridge import UiAppState

    state = UiAppState(main_window.services).capture()
    assert is_html_report(state.active)
    assert state.active.path == "projects/q3-churn/report.html"


def test_source_edits_save_and_invalid_markup_is_named(main_window, qtbot, sample_workspace):
    html_tab = _publish_from_report_tab(qtbot, main_window, sample_workspace)
    path = sample_workspace / "projects/q3-churn/report.html"
    html_tab.views.setCurrentWidget(html_tab.source)
    edited = html_tab.source.toPlainText().replace("The base is stable.", "The base held.")
    html_tab.source.setPlainText(edited)
    assert html_tab.is_dirty() and html_tab.unsaved_text() == edited
    assert main_window.tabs.save_current()
    qtbot.waitUntil(lambda: path.read_text(encoding="utf-8") == edited, timeout=10_000)
    qtbot.waitUntil(lambda: "1 edited since published" in html_tab.status.text(), timeout=10_000)
    assert not html_tab.is_dirty()

    broken = edited.replace("The base held.</p>", "The base held.")
    line = broken[: broken.index("The base held.")].count("\n") + 1
    html_tab.source.setPlainText(broken)
    main_window.tabs.save_current()
    qtbot.waitUntil(lambda: path.read_text(encoding="utf-8") == broken, timeout=10_000)
    qtbot.waitUntil(lambda: "invalid HTML" in html_tab.status.text(), timeout=10_000)
    assert f"opened on line {line}" in html_tab.status.text()

    # publishing refuses the broken file and leaves it as written
    html_tab.publish_button.click()
    qtbot.waitUntil(lambda: html_tab.publish_button.isEnabled(), timeout=10_000)
    qtbot.waitUntil(lambda: "report.html: invalid HTML" in html_tab.status.text(), timeout=10_000)
    assert path.read_text(encoding="utf-8") == broken


def test_a_change_on_disk_reloads_a_clean_tab_and_keeps_unsaved_edits(
    main_window, qtbot, sample_workspace
):
    html_tab = _publish_from_report_tab(qtbot, main_window, sample_workspace)
    path = sample_workspace / "projects/q3-churn/report.html"
    changed = path.read_text(encoding="utf-8").replace("Revenue grew", "Revenue rose")
    write_externally(path, changed)
    qtbot.waitUntil(lambda: "Revenue rose" in html_tab.source.toPlainText(), timeout=15_000)

    mine = changed.replace("Revenue rose", "Revenue jumped")
    html_tab.source.setPlainText(mine)
    write_externally(path, changed.replace("Revenue rose", "Revenue soared"))
    qtbot.waitUntil(lambda: "changed on disk" in html_tab.status.text(), timeout=15_000)
    assert html_tab.source.toPlainText() == mine and html_tab.is_dirty()


def test_open_in_browser_hands_the_file_to_the_system_browser(
    main_window, qtbot, sample_workspace, monkeypatch
):
    html_tab = _publish_from_report_tab(qtbot, main_window, sample_workspace)
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    html_tab.browser_button.click()
    assert [u.toLocalFile() for u in opened] == [
        str(sample_workspace / "projects/q3-churn/report.html")
    ]


def test_publish_that_would_overwrite_edits_offers_to_overwrite(
    main_window, qtbot, sample_workspace
):
    html_tab = _publish_from_report_tab(qtbot, main_window, sample_workspace)
    path = sample_workspace / "projects/q3-churn/report.html"
    write_externally(
        path, path.read_text(encoding="utf-8").replace("The base is stable.", "Hand edit.")
    )
    qtbot.waitUntil(lambda: "1 edited" in html_tab.status.text(), timeout=15_000)
    (sample_workspace / "projects/q3-churn/report.md").write_text(
        REPORT.replace("The base is stable.", "The base grew.")
    )
    before = path.read_bytes()
    html_tab.publish_button.click()
    qtbot.waitUntil(
        lambda: html_tab.publish_button.text() == "Publish, overwriting edits", timeout=10_000
    )
    assert "s-customers" in html_tab.status.text() and path.read_bytes() == before
    html_tab.publish_button.click()
    qtbot.waitUntil(lambda: "The base grew." in path.read_text(encoding="utf-8"), timeout=10_000)
    assert "Hand edit." not in path.read_text(encoding="utf-8")


def test_publish_with_a_chart_uses_the_apps_query_service(main_window, qtbot, sample_workspace):
    from lantide import charts

    project = main_window.services.workspace.project("q3-churn")
    charts.write_chart(
        project,
        "by_category",
        {
            "data": {"table": "products"},
            "mark": "bar",
            "encoding": {
                "x": {"field": "category", "type": "nominal"},
                "y": {"aggregate": "count", "type": "quantitative"},
            },
        },
        by="agent",
    )
    (sample_workspace / "projects/q3-churn/report.md").write_text(
        REPORT + "\n![Products by category](charts/by_category.vl.json)\n"
    )
    tab = open_document_tab(qtbot, main_window, "report")
    tab.evidence.publish_button.click()
    qtbot.waitUntil(
        lambda: type(main_window.tabs.currentWidget()).__name__ == "HtmlReportTabWidget",
        timeout=30_000,
    )
    html_tab = main_window.tabs.currentWidget()
    qtbot.waitUntil(lambda: "chunks" in html_tab.status.text(), timeout=15_000)
    page = (sample_workspace / "projects/q3-churn/report.html").read_text(encoding="utf-8")
    assert 'id="chart-by_category"' in page and "<svg" in page
    # the chart is drawn in the preview: its SVG painted into an image in a worker
    qtbot.waitUntil(lambda: len(html_tab.preview.images) == 1, timeout=15_000)
    assert "[chart: shown in the browser" not in html_tab.preview.toPlainText()
    assert 'src="lantide-chart-0"' in html_tab.preview.toHtml()
    image = html_tab.preview.loadResource(2, QUrl("lantide-chart-0"))  # 2: an image
    assert not image.isNull() and image.width() > 100
