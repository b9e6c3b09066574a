"""**Save as chart file…** of the quick chart: ask a name, write ``charts/NAME.vl.json``.

The spec comes from :meth:`QuickChartWidget.spec` (Vega-Lite over the result's cached
table, never its numbers). The file is written by :func:`lantide.charts.write_chart` (the
analyst's, atomic) in a worker; replacing an existing chart is asked first, and a chart
file that is not valid is never replaced.
"""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QMessageBox, QWidget

from lantide.workspace import layout


def save_chart_file(services, project: str, name: str, spec: dict, on_saved=None) -> None:
    """Write the chart in a worker; the outcome is posted in the message bar."""
    from lantide import charts

    def work(ctx):
        return charts.write_chart(services.workspace.project(project), name, spec)

    def saved(path):
        chart = path.name[: -len(layout.CHART_SUFFIX)]
        relpath = layout.chart_project_relpath(chart)
        services.post_message(
            f"Saved {relpath}: add ![{spec.get('title', name)}]({layout.chart_link(chart)}) "
            "to the Report to show it there."
        )
        services.notify_paths_changed([path])
        if on_saved is not None:
            on_saved(path)

    services.workers.submit(
        work,
        on_result=saved,
        on_error=lambda exc: services.report_error(exc, f"Saving the chart {name}"),
        name="save chart file",
    )


def ask_and_save_chart(parent: QWidget, services, project: str, spec: dict) -> None:
    """Ask the chart's name (the table's by default), confirm a replace, then save."""
    from lantide import charts

    default = str(spec.get("data", {}).get("table") or "chart")
    name, ok = QInputDialog.getText(
        parent, "Save as chart file", "Chart name (saved as charts/NAME.vl.json):", text=default
    )
    if not ok or not name.strip():
        return
    try:
        clean = charts.validate_chart_name(name)
        path = charts.chart_file(services.workspace.project(project), clean)
    except charts.ChartError as exc:
        services.report_error(exc, "Saving the chart")
        return
    if path.exists():
        answer = QMessageBox.question(
            parent,
            "Replace chart?",
            f"charts/{path.name} exists. Replace it with this chart?",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
    save_chart_file(services, project, clean, spec)
