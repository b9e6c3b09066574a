"""Charts in the Report preview: ``![title](charts/NAME.vl.json)`` shows the drawn chart,
drawn in a worker (the preview shows a "drawing" box meanwhile); a broken chart shows an
error box naming its file; the files are never rewritten. Real files, a real DuckDB, the
real main window (offscreen)."""

from __future__ import annotations

import json

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument

from lantide import charts
from tests.ui.conftest import open_document_tab, write_externally

GOOD = {
    "title": "Products per category",
    "data": {"table": "products"},
    "mark": "bar",
    "encoding": {"x": {"field": "category", "type": "nominal"}, "y": {"aggregate": "count"}},
}


def _image(tab, src: str) -> QImage:
    resource = tab.preview.document().resource(
        QTextDocument.ResourceType.ImageResource.value, QUrl(src)
    )
    assert isinstance(resource, QImage), type(resource)
    return resource


def test_the_report_preview_draws_its_charts_and_names_a_broken_one(
    main_window, qtbot, sample_workspace, tmp_path
):
    project_dir = sample_workspace / "projects/q3-churn"
    (project_dir / "charts").mkdir()
    good = project_dir / "charts/per_category.vl.json"
    good.write_text(json.dumps(GOOD, indent=2))
    broken = project_dir / "charts/broken.vl.json"
    broken_text = json.dumps({**GOOD, "data": {"table": "gone_table"}}, indent=2)
    broken.write_text(broken_text)
    report = project_dir / "report.md"
    write_externally(
        report,
        "# Report\n\nProducts:\n\n![Products per category](charts/per_category.vl.json)\n\n"
        "And a broken one:\n\n![Broken](charts/broken.vl.json)\n",
    )
    tab = open_document_tab(qtbot, main_window, "report")
    images = tab.preview.chart_images
    qtbot.waitUntil(
        lambda: (
            images.state("charts/per_category.vl.json") is not None
            and images.state("charts/broken.vl.json") is not None
        ),
        timeout=60_000,
    )
    drawn = images.state("charts/per_category.vl.json")
    assert drawn.status == "ok", drawn.message
    failed = images.state("charts/broken.vl.json")
    assert failed.status == "error"
    assert failed.message.startswith("projects/q3-churn/charts/broken.vl.json, line 3:")
    assert "gone_table" in failed.message

    # the preview holds the drawn chart, not the "drawing" box: wide enough, it is the very
    # image drawn; narrower than the chart, the chart is scaled to fit (no sideways scroll)
    src = "charts/per_category.vl.json"
    logical_width = drawn.image.width() / drawn.image.devicePixelRatio()
    assert drawn.image.width() > 300 and drawn.image.height() > 150
    tab.preview.setFixedWidth(round(logical_width) + 120)
    qtbot.waitUntil(lambda: _image(tab, src).cacheKey() == drawn.image.cacheKey(), timeout=10_000)
    tab.preview.grab().save(str(tmp_path / "report-preview.png"))
    tab.preview.setFixedWidth(round(logical_width * 0.8))

    def fitted() -> bool:
        shown = _image(tab, src)
        width = shown.width() / shown.devicePixelRatio()
        aspect, drawn_aspect = (
            shown.height() / shown.width(),
            drawn.image.height() / drawn.image.width(),
        )
        return width <= tab.preview.viewport().width() - 16 and abs(aspect - drawn_aspect) < 0.02

    qtbot.waitUntil(fitted, timeout=10_000)
    qtbot.waitUntil(lambda: tab.preview.horizontalScrollBar().maximum() == 0, timeout=5_000)
    tab.preview.setFixedWidth(round(logical_width) + 120)
    qtbot.waitUntil(lambda: _image(tab, src).cacheKey() == drawn.image.cacheKey(), timeout=10_000)
    tab.preview.setMinimumWidth(0)
    tab.preview.setMaximumWidth(16_777_215)
    assert broken.read_text() == broken_text  # an error never rewrites the file

    # an edited chart file is drawn again
    charts_before = drawn.image.cacheKey()
    write_externally(good, json.dumps({**GOOD, "mark": "point"}, indent=2))
    tab.preview._charts_drawn()  # what a change of the Report or a drawn chart does
    qtbot.waitUntil(
        lambda: images.state("charts/per_category.vl.json").image.cacheKey() != charts_before,
        timeout=60_000,
    )

    # a table made again (a tab re-run) redraws the charts of the preview by itself
    before_run = images.state("charts/per_category.vl.json").image.cacheKey()
    main_window.services.sig_tables_changed.emit()
    qtbot.waitUntil(
        lambda: images.state("charts/per_category.vl.json").image.cacheKey() != before_run,
        timeout=60_000,
    )


def test_a_chart_link_outside_the_project_is_refused_in_place(shell_services, qtbot):
    from lantide.ui.documents.chart_images import ChartImages

    services = shell_services()
    images = ChartImages(services, "q3-churn")
    outside = images.image("../../.lantide/workspace.json.vl.json")
    assert outside.status == "error" and "a file of the project" in outside.message
    missing = images.image("charts/none.vl.json")
    assert missing.status == "error"
    assert missing.message == "projects/q3-churn/charts/none.vl.json: no such chart file"
    assert charts.list_charts(services.workspace.project("q3-churn")) == []
