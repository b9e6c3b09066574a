"""Every keyboard shortcut of the app in one table: actions take their keys from here and
the help dialog (F1) lists it, so the two cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QKeySequence


@dataclass(frozen=True)
class Shortcut:
    key: str  # the id an action uses
    keys: str  # portable text, e.g. "Ctrl+Shift+Return"
    area: str
    description: str

    def sequence(self) -> QKeySequence:
        return QKeySequence(self.keys)

    def native_text(self) -> str:
        return self.sequence().toString(QKeySequence.SequenceFormat.NativeText)


SHORTCUTS: tuple[Shortcut, ...] = (
    # window
    Shortcut("quick_open_plan", "Ctrl+1", "Window", "Open the focused project's Plan"),
    Shortcut("quick_open_report", "Ctrl+2", "Window", "Open the focused project's Report"),
    Shortcut("new_sql_tab", "Ctrl+T", "Window", "New SQL tab in the focused project"),
    Shortcut("save", "Ctrl+S", "Window", "Save the current tab (atomically)"),
    Shortcut("save_all", "Ctrl+Shift+S", "Window", "Save every tab"),
    Shortcut("close_tab", "Ctrl+W", "Window", "Close the current tab"),
    Shortcut("next_tab", "Ctrl+Tab", "Window", "Next tab"),
    Shortcut("previous_tab", "Ctrl+Shift+Tab", "Window", "Previous tab"),
    Shortcut("focus_explorer", "Ctrl+Shift+E", "Window", "Show the workspace explorer"),
    Shortcut("focus_chat", "Ctrl+Shift+L", "Window", "Show the chat and put the cursor in it"),
    Shortcut("focus_ledger", "Ctrl+Shift+Y", "Window", "Show the ledger and query history"),
    Shortcut("focus_knowledge", "Ctrl+Shift+K", "Window", "Show the knowledge panel"),
    Shortcut("open_workspace", "Ctrl+O", "Window", "Open another workspace"),
    Shortcut("settings", "Ctrl+,", "Window", "Settings"),
    Shortcut("cancel_query", "Ctrl+Shift+Backspace", "Window", "Cancel the running query"),
    Shortcut(
        "command_palette",
        "Ctrl+Shift+P",
        "Window",
        "Command palette: every action with its key, searchable",
    ),
    Shortcut("shortcuts", "F1", "Window", "This list of shortcuts"),
    Shortcut("quit", "Ctrl+Q", "Window", "Quit"),
    # documents
    Shortcut("annotate", "Ctrl+Alt+M", "Plan and Report", "Annotate the selected text"),
    Shortcut("find", "Ctrl+F", "Plan, Report and SQL", "Find"),
    Shortcut("replace", "Ctrl+H", "Plan, Report and SQL", "Find and replace"),
    Shortcut("find_next", "F3", "Plan, Report and SQL", "Find the next match"),
    Shortcut("find_previous", "Shift+F3", "Plan, Report and SQL", "Find the previous match"),
    Shortcut("toggle_preview", "Ctrl+Shift+V", "Plan and Report", "Show or hide the preview"),
    Shortcut("undo", "Ctrl+Z", "Plan and Report", "Undo"),
    Shortcut("redo", "Ctrl+Shift+Z", "Plan and Report", "Redo"),
    # the agent's pending edits of a Plan or Report (the tab's review bar binds these)
    Shortcut("edit_next_hunk", "Alt+N", "Agent edits", "Show the next hunk of the agent's edit"),
    Shortcut(
        "edit_previous_hunk", "Alt+P", "Agent edits", "Show the previous hunk of the agent's edit"
    ),
    Shortcut(
        "edit_accept_hunk",
        "Ctrl+Return",
        "Agent edits",
        "Accept the hunk shown (with the focus in the review bar: Alt+N puts it there)",
    ),
    Shortcut(
        "edit_reject_hunk",
        "Ctrl+Backspace",
        "Agent edits",
        "Reject the hunk shown (with the focus in the review bar)",
    ),
    # SQL (the SQL tab binds these itself)
    Shortcut("sql_run", "Ctrl+Return", "SQL tab", "Run the tab, or only the selected SQL"),
    Shortcut(
        "sql_source_run",
        "Ctrl+Shift+Return",
        "SQL tab",
        "Source Run: the tab and everything upstream",
    ),
    Shortcut("sql_complete", "Ctrl+Space", "SQL tab", "Complete table and column names"),
    Shortcut("sql_comment", "Ctrl+/", "SQL tab", "Comment or uncomment the selected lines"),
    Shortcut("sql_format", "Ctrl+Shift+F", "SQL tab", "Format the SQL (one undoable edit)"),
    Shortcut("sql_explain", "Ctrl+E", "SQL tab", "Explain: the query plan, without running"),
    Shortcut(
        "sql_explain_analyze",
        "Ctrl+Alt+E",
        "SQL tab",
        "Explain Analyze: run the query and show the plan with timings",
    ),
    Shortcut(
        "sql_definition",
        "F12",
        "SQL tab",
        "Go to the table under the cursor: its SQL tab or its browser (also Ctrl+click)",
    ),
    # result grid
    Shortcut("grid_copy_tsv", "Ctrl+C", "Result grid", "Copy the selected cells as TSV"),
    Shortcut("grid_copy_csv", "Ctrl+Shift+C", "Result grid", "Copy the selected cells as CSV"),
    Shortcut("grid_filter", "Ctrl+Alt+F", "Result grid", "Filter the current cell's column"),
    Shortcut("grid_select_column", "Ctrl+Space", "Result grid", "Select the current cell's column"),
    # chat
    Shortcut("chat_send", "Return", "Chat", "Send the message (Shift+Return: a new line)"),
    Shortcut("chat_stop", "Escape", "Chat", "Stop the answer being written"),
)

_BY_KEY = {s.key: s for s in SHORTCUTS}


def shortcut(key: str) -> QKeySequence:
    return _BY_KEY[key].sequence()


def by_area() -> dict[str, list[Shortcut]]:
    out: dict[str, list[Shortcut]] = {}
    for s in SHORTCUTS:
        out.setdefault(s.area, []).append(s)
    return out
