"""Access modes (Observe < Execute < Admin) and the mode each MCP tool needs.

The server enforces them: a tool outside the client's mode is neither listed nor run, and
a call to it is refused with an error naming the mode it needs (:class:`ModeRefused`).
``registry`` names the in-app agent's tool that does the work (the same code path); None
means the MCP layer answers itself (:mod:`lantide.mcp.engine`).
"""

from __future__ import annotations

from dataclasses import dataclass

from lantide.errors import ErrorDict, LantideError

OBSERVE, EXECUTE, ADMIN = "observe", "execute", "admin"
MODES = (OBSERVE, EXECUTE, ADMIN)
MODE_LABELS = {OBSERVE: "Observe", EXECUTE: "Execute", ADMIN: "Admin"}
SCOPE_ALL = "all"


@dataclass(frozen=True)
class McpTool:
    name: str
    mode: str  # the lowest mode that may call it
    registry: str | None  # the in-app tool that does the work, or None
    multi_workspace: bool = False  # listed only when the scope is all workspaces


TOOLS: tuple[McpTool, ...] = (
    McpTool("get_analysis_context", OBSERVE, None),
    McpTool("list_workspaces", OBSERVE, None, multi_workspace=True),
    McpTool("select_workspace", OBSERVE, None, multi_workspace=True),
    McpTool("show_tables", OBSERVE, "show_tables"),
    McpTool("read_schema", OBSERVE, "read_schema"),
    McpTool("profile_columns", OBSERVE, "profile_columns"),
    McpTool("validate_query", OBSERVE, "validate_query"),
    McpTool("run_query", OBSERVE, "run_query"),  # Observe: a preview only (engine)
    McpTool("read_plan", OBSERVE, "read_plan"),
    McpTool("read_report", OBSERVE, "read_report"),
    McpTool("list_annotations", OBSERVE, None),
    McpTool("read_step", OBSERVE, "read_step"),
    McpTool("resolve_annotations", EXECUTE, "resolve_annotations"),
    McpTool("create_sql_tab", EXECUTE, "create_sql_tab"),
    McpTool("run_sql_tab", EXECUTE, "run_sql_tab"),
    McpTool("source_run_sql_tab", EXECUTE, "source_run_sql_tab"),
    McpTool("set_project_status", ADMIN, "set_project_status"),
)
BY_NAME = {t.name: t for t in TOOLS}


class ModeRefusedDict(ErrorDict):
    """:class:`ModeRefused` as a tool result."""

    tool: str
    mode: str
    required_mode: str


class ModeRefused(LantideError):
    """A call the client's mode does not allow. ``required`` is the mode it needs."""

    code = "MODE_REQUIRED"

    def __init__(self, tool: str, mode: str, required: str):
        self.tool, self.mode, self.required = tool, mode, required
        super().__init__(
            f"{tool} needs the {MODE_LABELS[required]} mode; this client is paired for "
            f"{MODE_LABELS[mode]}",
            hint=f"Ask the analyst to pair the client again with the {MODE_LABELS[required]} "
            "mode (Settings > Agent Integration, or lantide mcp pair --mode "
            f"{required}).",
        )

    def to_dict(self) -> ModeRefusedDict:
        return {
            **super().to_dict(),
            "tool": self.tool,
            "mode": self.mode,
            "required_mode": self.required,
        }


def check_mode(value: str) -> str:
    mode = (value or "").strip().lower()
    if mode not in MODES:
        raise LantideError(
            f"unknown access mode {value!r}", hint="Use observe, execute or admin.", code="BAD_MODE"
        )
    return mode


def allows(mode: str, required: str) -> bool:
    return MODES.index(mode) >= MODES.index(required)


def tools_for(mode: str, multi_workspace: bool) -> list[McpTool]:
    """The tools a client of ``mode`` sees, in a stable order."""
    return [t for t in TOOLS if allows(mode, t.mode) and (multi_workspace or not t.multi_workspace)]


def required_mode(tool: str) -> str | None:
    entry = BY_NAME.get(tool)
    return entry.mode if entry else None
