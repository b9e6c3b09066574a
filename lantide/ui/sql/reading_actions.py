"""The SQL tab's actions for reading SQL: Format, Explain and Explain Analyze, and go to the
definition of a table (F12 / Ctrl+click). They are in the editor's context menu, the
window's Query menu and (Explain) on the result's Plan view.

The rules live in the engine (:mod:`lantide.query.sql_format`, :mod:`lantide.query.explain`,
:mod:`lantide.query.definition`); this module builds the actions on a
:class:`~lantide.ui.sql.sql_tab.SqlTabWidget` and shows their outcome. Each key is bound by
the tab (its own actions, WidgetWithChildrenShortcut, like Run); the window's Query menu
shows them and calls the same methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

from lantide.ui.analyst_words import plain_hint
from lantide.ui.icons import icon
from lantide.ui.notice_banner import WARNING
from lantide.ui.shortcuts import shortcut

if TYPE_CHECKING:
    from lantide.ui.sql.sql_tab import SqlTabWidget


def key_text(key: str) -> str:
    return shortcut(key).toString(QKeySequence.SequenceFormat.NativeText)


def add_reading_actions(tab: SqlTabWidget) -> None:
    """Format, Explain, Explain Analyze and Go to definition, bound on ``tab``; shown in the
    editor's context menu and (Explain) on the Plan view. The toolbar is full at the sizes
    the app is made for (the purpose and the run's status need its room)."""
    tab.format_action = QAction(icon("format"), "Format SQL", tab)
    tab.format_action.setShortcut(shortcut("sql_format"))
    tab.format_action.setToolTip(
        f"Format the SQL; comments and header lines are kept, Ctrl+Z undoes it "
        f"({key_text('sql_format')})"
    )
    tab.format_action.triggered.connect(lambda: tab.format_sql())
    tab.explain_action = QAction(icon("plan-tree"), "Explain", tab)
    tab.explain_action.setShortcut(shortcut("sql_explain"))
    tab.explain_action.setToolTip(
        "The query plan of the tab (or the selection), without running it "
        f"({key_text('sql_explain')})"
    )
    tab.explain_action.triggered.connect(lambda: tab.explain(analyze=False))
    tab.explain_analyze_action = QAction(icon("plan-tree"), "Explain Analyze", tab)
    tab.explain_analyze_action.setShortcut(shortcut("sql_explain_analyze"))
    tab.explain_analyze_action.setToolTip(
        "Run the query and show its plan with each operator's rows and time; the "
        f"slowest are highlighted ({key_text('sql_explain_analyze')})"
    )
    tab.explain_analyze_action.triggered.connect(lambda: tab.explain(analyze=True))
    tab.definition_action = QAction("Go to definition", tab)
    tab.definition_action.setShortcut(shortcut("sql_definition"))
    tab.definition_action.setToolTip(
        "Open what the table under the cursor is: its SQL tab, or its table browser "
        f"({key_text('sql_definition')}, or Ctrl+click)"
    )
    tab.definition_action.triggered.connect(lambda: tab.go_to_definition())
    tab.editor.sig_definition_requested.connect(lambda pos: tab.go_to_definition(pos))
    actions = [
        tab.format_action,
        tab.explain_action,
        tab.explain_analyze_action,
        tab.definition_action,
    ]
    for action in actions:
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        tab.addAction(action)
    tab.editor.context_actions = actions
    tab.plan_view.set_actions([tab.explain_action, tab.explain_analyze_action])


def format_tab(tab: SqlTabWidget) -> bool:
    """Format the tab's SQL in a worker (sqlglot takes a noticeable time on long SQL), then
    replace the text as one undoable edit, unless it was edited meanwhile. A refusal (SQL
    that cannot be parsed, comments sqlglot would drop) is shown above the result and the
    text is untouched. ``tab.sig_format_finished`` says how it ended. False when nothing
    was started (a read-only tab)."""
    from lantide.query.sql_format import dialect_for, format_sql

    if tab.editor.isReadOnly():
        return False
    text = tab.editor.toPlainText()
    dialect = dialect_for(text, tab.services.workspace.connections)

    def done(formatted) -> None:
        if tab.editor.toPlainText() != text:
            tab.status_label.setText("not formatted: the text changed meanwhile")
            tab.sig_format_finished.emit(None)
            return
        if tab.banner.tag == "format":
            tab.banner.clear()
        if formatted.changed:
            tab.editor.replace_text(formatted.text)
        tab.status_label.setText("formatted" if formatted.changed else "already formatted")
        tab.sig_format_finished.emit(formatted)

    def refused(exc: BaseException) -> None:
        position = getattr(exc, "position", None)
        if position and tab.editor.toPlainText() == text:
            tab.editor.set_error_position(*position)
        hint = getattr(exc, "hint", None)
        tab.banner.show_notice(
            f"Not formatted: {getattr(exc, 'message', None) or exc}",
            plain_hint(hint) if hint else None,
            WARNING,
            code=getattr(exc, "code", None),
            tag="format",
        )
        tab.sig_format_finished.emit(exc)

    tab.status_label.setText("formatting…")
    tab.services.workers.submit(
        lambda _ctx: format_sql(text, dialect=dialect),
        on_result=done,
        on_error=refused,
        name="format SQL",
    )
    return True


def python_offset(text: str, position: int) -> int:
    """A Qt text position (UTF-16 code units) as an offset into the Python string."""
    return len(text.encode("utf-16-le")[: 2 * position].decode("utf-16-le", errors="ignore"))


def qt_position(text: str, offset: int) -> int:
    """An offset into the Python string as a Qt text position (UTF-16 code units)."""
    return len(text[:offset].encode("utf-16-le")) // 2


def go_to_definition(tab: SqlTabWidget, position: int | None = None) -> None:
    """Open what defines the table at ``position`` (else the cursor): resolved in a worker
    (the catalog is DuckDB's), then the tab or table browser opens, or the cursor moves
    to a CTE's definition."""
    from lantide.ui.sql.query_jobs import submit_query

    text = tab.editor.toPlainText()
    qt_pos = tab.editor.textCursor().position() if position is None else position
    offset = python_offset(text, qt_pos)
    project = tab.project
    services = tab.services

    def found(definition) -> None:
        tab.sig_definition_found.emit(definition)
        if definition is None:
            services.post_message("No table name at the cursor.", "info")
            return
        kind = definition["kind"]
        if kind == "cte":
            if tab.editor.toPlainText() == text:  # not edited meanwhile
                cursor = tab.editor.textCursor()
                cursor.setPosition(qt_position(text, int(definition["offset"])))
                tab.editor.setTextCursor(cursor)
                tab.editor.centerCursor()
        elif kind == "sql_tab":
            services.request_open("sql", definition["project"], definition["name"])
        elif kind == "table":
            services.request_open("table", None, definition["name"])
        else:
            services.post_message(definition["message"], "warning")

    submit_query(
        services,
        lambda _ctx, q: q.definition_at(project, text, offset),
        label=f"definition in {tab.tab_name}",
        track=False,
        on_result=found,
        on_error=lambda exc: services.report_error(exc, "Go to definition"),
    )
