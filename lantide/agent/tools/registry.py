"""Tools: a JSON schema, a handler and the states that offer it.

:meth:`ToolRegistry.call` never raises for the model's mistakes: an unknown tool, arguments
that are not JSON or do not match the schema, a tool that is not offered in the current
state, a refused query: each comes back as a result ``{"error", "message", "hint"}`` the
model can act on. Only cancellation propagates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from lantide.agent.cancel import TurnCancelled
from lantide.agent.events import TOUCHES
from lantide.errors import LantideError

# the QEM's limit, defined in one place (re-exported for the tool modules and the prompt)
from lantide.query.qem import PURPOSE_MAX_CHARS as PURPOSE_MAX_CHARS
from lantide.workspace.lifecycle import AFTER_APPROVAL

if TYPE_CHECKING:
    import jsonschema.protocols

    from lantide.agent.message_types import FunctionSchema, ToolSchema
    from lantide.agent.tools.context import ToolContext
    from lantide.workspace.model import Project

NO_PROJECT, PLANNING, EXECUTING = "no_project", "planning", "executing"
ALL_STATES = frozenset({NO_PROJECT, PLANNING, EXECUTING})
SHOW_TABLES_LIMIT = 40  # tables show_tables lists unless asked for more
PROJECT_STATES = frozenset({PLANNING, EXECUTING})


def state_of(project: Project | None) -> str:
    """The agent's state for the focused ``project``: which tools and prompt apply."""
    if project is None:
        return NO_PROJECT
    return EXECUTING if project.status in AFTER_APPROVAL else PLANNING


class ToolError(TypedDict):
    """A refused or failed call, as the model reads it: what went wrong and what to do.
    Some refusals add fields of their own (a Report check's ``problems``)."""

    error: str  # a code: BAD_ARGUMENTS, UNKNOWN_TOOL, a LantideError's code ...
    message: str
    hint: NotRequired[str]


# A handler takes the call's arguments once they match its tool's ``parameters`` (each
# handler types them as a TypedDict of that schema, hence Any here) and returns its own
# result (a TypedDict where the shape is stable) or a ToolError. The loop sends the result
# to the model as JSON; an ``error`` key marks a failure.
Handler = Callable[["ToolContext", Any], Mapping[str, object]]


@cache
def tool_description(name: str) -> str:
    """The tool's description for the model, from ``prompts/tools/NAME.md.j2``."""
    from lantide.templates import render_prompt

    return render_prompt(
        f"tools/{name}.md.j2",
        purpose_max_chars=PURPOSE_MAX_CHARS,
        show_tables_limit=SHOW_TABLES_LIMIT,
    ).strip()


@dataclass(frozen=True)
class Tool:
    """A tool: its schema's parameters, its handler, the states that offer it; the
    description the model reads is a prompt file (:func:`tool_description`)."""

    name: str
    parameters: dict[str, Any]
    handler: Handler
    states: frozenset[str] = ALL_STATES
    # extra condition beyond the state (e.g. the knowledge layer is in catalog mode)
    available: Callable[[ToolContext], bool] | None = None
    # when its schema is sent (every request pays for it): a tool that can do nothing useful
    # now (focus_project with only the focused project, activate_analysis without a yes to
    # consent) is left out of the request, still accepted when called (its result explains)
    sent_when: Callable[[ToolContext], bool] | None = None
    # optional arguments a result names when they matter (a cut cell names max_cell_chars,
    # a long table list names name and limit): left out of the schema sent every request,
    # still accepted and checked against the full schema
    on_demand: frozenset[str] = frozenset()
    # what a successful call may change (events.TOUCHES: tables, documents, project), so the
    # app refreshes it without keeping a list of tool names (ToolReturned carries it)
    touches: frozenset[str] = frozenset()

    @property
    def description(self) -> str:
        return tool_description(self.name)

    def schema(self, external_databases: bool = True, project_argument: bool = True) -> ToolSchema:
        """What the model is sent: the description (left out when its prompt file is only
        a comment saying where the core prompt covers the tool) and the parameters
        without the keywords only the validator needs (:func:`lean_parameters`); calls
        are still checked against the full :attr:`parameters`. Without
        ``external_databases`` (the workspace has no connection) the arguments that only
        answer a remote warning are left out too; without ``project_argument`` (the
        focused project is the only one, :func:`projects_to_name`) an optional
        ``project``, which could only name the project a missing one means."""
        function: FunctionSchema = {"name": self.name}
        if self.description:  # none when its name and the core prompt say it all
            function["description"] = self.description
        lean = lean_parameters(self.parameters)
        left_out = self.on_demand | (frozenset() if external_databases else REMOTE_ONLY_ARGUMENTS)
        if not project_argument and "project" not in lean.get("required", ()):
            left_out |= {"project"}
        if left_out and lean.get("properties"):
            lean = {
                **lean,
                "properties": {k: v for k, v in lean["properties"].items() if k not in left_out},
            }
        if lean.get("properties"):
            function["parameters"] = lean
        return {"type": "function", "function": function}


@dataclass
class ToolOutcome:
    ok: bool
    result: dict[str, object]  # the handler's result (a copy: the loop adds notices to it)
    duration_ms: int
    arguments: dict[str, object] = field(default_factory=dict)  # as the model sent them


# Schema keywords the validator enforces (its refusal names the limit) or the prompt states
# (the purpose's length, in core.md.j2): sent, they cost tokens in every request.
VALIDATION_ONLY = frozenset(
    {
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "additionalProperties",
        "default",
        "pattern",
    }
)


def lean_parameters(schema: Any) -> Any:
    """``schema`` without :data:`VALIDATION_ONLY` keywords and empty ``required`` lists."""
    if isinstance(schema, list):
        return [lean_parameters(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: lean_parameters(v) for k, v in schema.items() if k not in VALIDATION_ONLY}
    if out.get("required") == []:
        del out["required"]
    return out


def params(
    properties: dict[str, Any] | None = None, required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A JSON schema for an object of named arguments (unknown ones are refused)."""
    return {
        "type": "object",
        "properties": properties or {},
        "required": list(required),
        "additionalProperties": False,
    }


# Optional arguments that only answer an external database's large-remote warning: sent only
# when the workspace has a connection (as are the core prompt's rules about them).
REMOTE_ONLY_ARGUMENTS = frozenset({"large_remote_warning_id", "large_remote_warning_ids"})

# that a missing project means the focused one is said once, in core.md.j2's tool rules
PROJECT_ARG = {"project": {"type": "string"}}


def projects_to_name(ctx: ToolContext) -> bool:
    """Whether a project argument can name anything a missing one does not: no project
    is focused, or the workspace has another one."""
    return ctx.focused_project() is None or len(ctx.workspace.project_dirnames()) > 1


def tool_error(code: str, message: str, hint: str | None = None) -> ToolError:
    out: ToolError = {"error": code, "message": message}
    if hint:
        out["hint"] = hint
    return out


@lru_cache(maxsize=256)
def _validator(schema_key: str) -> jsonschema.protocols.Validator:
    import json

    import jsonschema

    schema = json.loads(schema_key)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# One text of a refusal, at most: a refusal may quote the argument it refuses (jsonschema's
# messages do, "no table 'X'"), and a 200 KB argument was repeated whole in the chat and the
# conversation (issue 28). The start and the end are kept: the end says what was wrong.
ERROR_TEXT_HEAD, ERROR_TEXT_TAIL = 600, 300


def cut_error_texts(value: Any) -> Any:
    """``value`` (a failed tool's result) with every long string cut in its middle."""
    if isinstance(value, str) and len(value) > ERROR_TEXT_HEAD + ERROR_TEXT_TAIL + 100:
        gone = len(value) - ERROR_TEXT_HEAD - ERROR_TEXT_TAIL
        return f"{value[:ERROR_TEXT_HEAD]} …[{gone:,} characters cut]… {value[-ERROR_TEXT_TAIL:]}"
    if isinstance(value, dict):
        return {k: cut_error_texts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [cut_error_texts(v) for v in value]
    return value


def validate_arguments(tool: Tool, args: dict[str, Any]) -> str | None:
    """The first problem of ``args`` against the tool's schema, or None."""
    import json

    validator = _validator(json.dumps(tool.parameters, sort_keys=True))
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
    if not errors:
        return None
    err = errors[0]
    where = "/".join(str(p) for p in err.path)
    return f"{where + ': ' if where else ''}{err.message}"


class ToolRegistry:
    def __init__(self, tools: list[Tool] | None = None):
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        unknown = set(tool.touches) - TOUCHES
        if unknown:
            raise ValueError(
                f"tool {tool.name!r} touches {sorted(unknown)}; known: {sorted(TOUCHES)}"
            )
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def touches(self, name: str) -> tuple[str, ...]:
        """What the tool ``name`` declares it may change (sorted; none for an unknown name)."""
        tool = self._tools.get(name)
        return tuple(sorted(tool.touches)) if tool is not None else ()

    def offered(self, state: str, ctx: ToolContext) -> list[Tool]:
        """The tools a call may use now."""
        return [
            t
            for t in self._tools.values()
            if state in t.states and (t.available is None or t.available(ctx))
        ]

    def sent(self, state: str, ctx: ToolContext) -> list[Tool]:
        """The offered tools whose schemas a request carries (:attr:`Tool.sent_when`)."""
        return [t for t in self.offered(state, ctx) if t.sent_when is None or t.sent_when(ctx)]

    def call(
        self, name: str, raw_arguments: str | dict[str, object], ctx: ToolContext
    ) -> ToolOutcome:
        started = time.perf_counter()

        def done(
            ok: bool, result: Mapping[str, object], args: dict[str, object] | None = None
        ) -> ToolOutcome:
            ms = int((time.perf_counter() - started) * 1000)
            return ToolOutcome(ok, dict(result), ms, args or {})

        tool = self._tools.get(name)
        offered = {t.name for t in self.offered(ctx.state, ctx)}
        if tool is None or name not in offered:
            why = "unknown tool" if tool is None else f"not available in the {ctx.state} state"
            return done(
                False,
                tool_error(
                    "UNKNOWN_TOOL" if tool is None else "TOOL_NOT_AVAILABLE",
                    f"{name!r}: {why}",
                    f"Tools available now: {', '.join(sorted(offered))}.",
                ),
            )
        if isinstance(raw_arguments, dict):
            args = raw_arguments
        else:
            import json

            try:
                args = json.loads(raw_arguments.strip() or "{}")
            except json.JSONDecodeError as exc:
                return done(
                    False,
                    tool_error(
                        "BAD_ARGUMENTS",
                        f"arguments of {name} are not valid JSON: {exc.msg} at column {exc.colno}",
                        "Send the arguments as one JSON object.",
                    ),
                )
            if not isinstance(args, dict):
                return done(
                    False,
                    tool_error(
                        "BAD_ARGUMENTS",
                        f"arguments of {name} must be a JSON object",
                        "Send the arguments as one JSON object.",
                    ),
                )
        problem = validate_arguments(tool, args)
        if problem:
            return done(
                False,
                tool_error(
                    "BAD_ARGUMENTS",
                    f"{name}: {problem}",
                    "Call it again with arguments matching its schema.",
                ),
                args,
            )
        try:
            result = tool.handler(ctx, args)
        except TurnCancelled:
            raise
        except LantideError as exc:
            if ctx.cancel.cancelled:
                raise TurnCancelled() from None
            return done(False, dict(exc.to_dict()), args)
        except Exception as exc:  # a bug in a handler must not end the analyst's turn
            if ctx.cancel.cancelled:
                raise TurnCancelled() from None
            return done(
                False,
                tool_error(
                    "TOOL_FAILED",
                    f"{name} failed: {type(exc).__name__}: {exc}",
                    "This is a Lantide bug; try another way.",
                ),
                args,
            )
        ok = "error" not in result
        return done(ok, result, args)
