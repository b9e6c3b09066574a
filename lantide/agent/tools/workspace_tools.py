"""Tools over the workspace layer: where the agent is, what it may do, what it asked.

``get_app_context``, ``focus_project``, ``set_project_status``, ``create_project``,
``ask_user``, ``activate_analysis``, ``patch_step``, ``read_step``, ``sync_tab_content``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict

from lantide.agent.app_state import OpenTabDict, TabState
from lantide.agent.consent import (
    ANALYSES,
    CONSENT_KIND,
    consent_grant,
    consent_question,
    status_seq,
)
from lantide.agent.events import (
    ANALYSIS_ACTIVE,
    FOCUSED_PROJECT,
    PROJECT_STATUS,
    TOUCHES_DOCUMENTS,
    TOUCHES_PROJECT,
    DocumentChanged,
    StateChanged,
)
from lantide.agent.ledger_types import StepChanges
from lantide.agent.summary_check import (
    SummaryNotice,
    SummaryProblem,
    shown_values,
    summary_changes,
)
from lantide.agent.summary_check import notice as summary_notice
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import (
    ALL_STATES,
    EXECUTING,
    PROJECT_ARG,
    PROJECT_STATES,
    PURPOSE_MAX_CHARS,
    Tool,
    ToolError,
    params,
    projects_to_name,
    state_of,
    tool_error,
)
from lantide.agent.tools.step_pages import read_step
from lantide.workspace import layout
from lantide.workspace.lifecycle import AGENT, AGENT_TARGETS

MAX_LISTED_PROJECTS = 50


# -- arguments (each as its tool's schema below admits it)
class NoArgs(TypedDict):
    pass


class FocusArgs(TypedDict):
    project: str


class CreateProjectArgs(TypedDict):
    name: str
    focus: NotRequired[bool]


class StatusArgs(TypedDict):
    status: str
    project: NotRequired[str]


class AskArgs(TypedDict):
    question: str
    choices: NotRequired[list[str]]
    kind: NotRequired[str]
    analysis: NotRequired[list[str]]


class ActivateArgs(TypedDict):
    reason: str


class PatchStepArgs(TypedDict):
    step_id: str
    summary: NotRequired[str]
    purpose: NotRequired[str]


class PathArgs(TypedDict):
    path: str


# -- results
class ConversationInfo(TypedDict):
    id: str
    title: str | None
    analysis_active: bool
    steps: int


class FocusedProjectInfo(TypedDict):
    name: str
    dir: str
    status: str
    plan: str
    report: str
    sql_tabs: list[str]
    archived: list[str]


class AppContext(TypedDict):
    """``get_app_context``: where the agent is."""

    workspace: dict[str, str]  # name, root
    state: str
    projects: list[dict[str, str]]  # name, dir, status
    project_count: int
    focused_project: FocusedProjectInfo | None
    open_tabs: list[OpenTabDict]
    active_tab: int | None
    external_databases: list[dict[str, object]]  # a connection's name, kind, driver
    conversation: ConversationInfo
    cached_tables: NotRequired[int | None]  # None: the query service could not open


class Focused(TypedDict):
    focused_project: Mapping[str, object]  # Project.to_dict()
    state: str
    note: str


class Created(TypedDict):
    created: Mapping[str, object]  # Project.to_dict()
    focused_project: NotRequired[Mapping[str, object]]
    state: NotRequired[str]
    note: NotRequired[str]


class StatusChanged(TypedDict):
    project: str
    old_status: str
    status: str


class Asked(TypedDict):
    status: str  # "asked"
    asked: NotRequired[str]  # a consent question: the question Lantide wrote
    choices: NotRequired[list[str]]
    note: str


class AnalysisActivated(TypedDict):
    analysis_active: bool
    analysis: NotRequired[object]  # the kinds the analyst's yes named
    reason: NotRequired[str]
    note: str


class TabSynced(TabState):
    """``sync_tab_content``: the file and what its tab did."""

    path: str


class PatchedStep(TypedDict):
    """``patch_step``: the step as corrected, what changed, and a mismatch if any."""

    step_id: str
    summary: str | None
    purpose: str | None
    patched: list[str]
    summary_status: NotRequired[str]
    step_summaries: NotRequired[SummaryNotice]


def get_app_context(ctx: ToolContext, args: NoArgs) -> AppContext:
    ws = ctx.workspace
    state = ctx.app.app_state()
    projects = ws.list_projects()
    focused = ctx.focused_project()
    out: AppContext = {
        "workspace": {"name": ws.name, "root": str(ws.root)},
        "state": ctx.state,
        "projects": [
            {"name": p.name, "dir": p.dirname, "status": p.status}
            for p in projects[:MAX_LISTED_PROJECTS]
        ],
        "project_count": len(projects),
        "focused_project": None,
        "open_tabs": [t.to_dict() for t in state.open_tabs],
        "active_tab": state.active_tab,
        "external_databases": [
            {k: c.get(k) for k in ("name", "kind", "driver") if k in c} for c in ws.connections
        ],
        "conversation": {
            "id": ctx.conversation.id,
            "title": ctx.conversation.title,
            "analysis_active": ctx.analysis_active(),
            "steps": len(ctx.ledger.steps()),
        },
    }
    if focused is not None:
        out["focused_project"] = {
            "name": focused.name,
            "dir": focused.dirname,
            "status": focused.status,
            "plan": focused.plan,
            "report": focused.report,
            "sql_tabs": [
                t
                for t in focused.sql_tab_names()
                if layout.sql_tab_project_relpath(t) not in focused.archived
            ],
            "archived": focused.archived,
        }
    if ctx.services.query_opened:
        out["cached_tables"] = ctx.services.cached_table_count()
    return out


def focus_project(ctx: ToolContext, args: FocusArgs) -> Focused:
    project = ctx.workspace.project(args["project"])
    ctx.app.focus_project(project.dirname)  # the app state owns the focus (agent.app_state)
    ctx.conversation.add_event("project_focused", ctx.turn, project=project.dirname)
    ctx.emit(StateChanged(FOCUSED_PROJECT, project.dirname, project.dirname))
    return {
        "focused_project": project.to_dict(),
        "state": state_of(project),
        "note": "The focus changed; from the next step on, the tools of this state apply.",
    }


def create_project(ctx: ToolContext, args: CreateProjectArgs) -> Created:
    project = ctx.workspace.create_project(args["name"])
    ctx.conversation.add_event("project_created", ctx.turn, project=project.dirname)
    out: Created = {"created": project.to_dict()}
    if args.get("focus", True):
        out = {**out, **focus_project(ctx, {"project": project.dirname})}
    return out


def set_project_status(ctx: ToolContext, args: StatusArgs) -> StatusChanged:
    project = ctx.project(args.get("project"))
    old = project.status
    project.set_status(args["status"], by=AGENT)  # refused: executing without approval
    ctx.conversation.add_event(
        "status_changed", ctx.turn, project=project.dirname, old=old, new=project.status
    )
    ctx.emit(StateChanged(PROJECT_STATUS, project.dirname, project.status))
    return {"project": project.dirname, "old_status": old, "status": project.status}


def ask_user(ctx: ToolContext, args: AskArgs) -> Asked | ToolError:
    kind = args.get("kind") or "question"
    if kind == CONSENT_KIND:
        return _ask_consent(ctx, args)
    choices = [str(c) for c in args.get("choices") or []]
    ctx.question = {"question": args["question"], "choices": choices, "question_kind": kind}
    return {
        "status": "asked",
        "note": "The turn pauses here. The analyst's next message is the answer; do not assume it.",
    }


def _ask_consent(ctx: ToolContext, args: AskArgs) -> Asked | ToolError:
    """Lantide asks its own consent question (agent.consent): the model's text is only the
    reason shown under it, and the buttons are Lantide's."""
    analyses = [a for a in ANALYSES if a in (args.get("analysis") or [])]
    if not analyses:
        return tool_error(
            "CONSENT_NEEDS_ANALYSIS",
            "a consent question names the kinds of statistical analysis it asks for; "
            "nothing was asked",
            f"Pass analysis (some of: {', '.join(ANALYSES)}) and put your reason in question; "
            "Lantide writes the question. For any other question, leave kind out.",
        )
    project = ctx.project()
    question, choices = consent_question(project, analyses, args["question"])
    ctx.question = {
        "question": question,
        "choices": choices,
        "question_kind": CONSENT_KIND,
        "analysis": analyses,
        "project": project.dirname,
    }
    return {
        "status": "asked",
        "asked": question,
        "choices": choices,
        "note": "Lantide asked the analyst this consent question; the turn pauses here. A "
        "yes lets you call activate_analysis once, in the turn of the answer, for "
        f"{', '.join(analyses)} only.",
    }


def activate_analysis(ctx: ToolContext, args: ActivateArgs) -> AnalysisActivated | ToolError:
    if ctx.analysis_active():
        return {"analysis_active": True, "note": "Statistical analysis was already approved."}
    focused = ctx.focused_project()
    answered, refusal = consent_grant(ctx.conversation, ctx.turn, focused)
    if refusal is not None:
        return refusal
    assert answered is not None  # consent_grant gives the answer when it gives no refusal
    project = getattr(focused, "dirname", None)
    ctx.conversation.add_event(
        "analysis_activated",
        ctx.turn,
        reason=args["reason"],
        project=project,
        analysis=answered.get("analysis"),
        status_seq=status_seq(focused),
        consent=answered.get("answer"),
        consent_question=answered.get("question"),
        consent_turn=answered.get("turn"),
    )
    ctx.emit(StateChanged(ANALYSIS_ACTIVE, project, True))
    return {
        "analysis_active": True,
        "analysis": answered.get("analysis"),
        "reason": args["reason"],
        "note": "Label results as statistical analysis, with the method and its assumptions. "
        "The approval ends when the project's status changes.",
    }


def patch_step(ctx: ToolContext, args: PatchStepArgs) -> PatchedStep | ToolError:
    changes: StepChanges = {}
    if args.get("summary") is not None:
        changes["summary"] = args.get("summary")
    purpose = args.get("purpose")
    if purpose is not None:
        changes["purpose"] = purpose
    if not changes:
        return tool_error(
            "BAD_ARGUMENTS",
            "patch_step needs summary or purpose",
            "Pass the corrected summary and/or purpose.",
        )
    if "summary" in changes:
        # a corrected summary is checked against its step as a [[QUERY_STEP]] line is
        checked = summary_changes(args.get("summary") or "", ctx.ledger.step(args["step_id"]))
        unmatched = checked.get("summary_unmatched")
        changes["summary_status"] = "mismatch" if unmatched else "patched"
        changes["summary_unmatched"] = unmatched
        if args["step_id"] in ctx.pending_steps:
            ctx.pending_steps.remove(args["step_id"])
    step = ctx.ledger.update(args["step_id"], changes, by="agent")
    out: PatchedStep = {
        "step_id": step["step_id"],
        "summary": step.get("summary"),
        "purpose": step.get("purpose"),
        "patched": sorted(k for k in changes if k not in ("summary_status", "summary_unmatched")),
    }
    unmatched = step.get("summary_unmatched")
    if unmatched:
        out["summary_status"] = "mismatch"
        out["step_summaries"] = summary_notice(
            [
                SummaryProblem(
                    "mismatch",
                    str(step.get("summary") or ""),
                    step["step_id"],
                    tuple(unmatched),
                    tuple(shown_values(step)),
                )
            ]
        )
    return out


def sync_tab_content(ctx: ToolContext, args: PathArgs) -> TabSynced | ToolError:
    path = (ctx.workspace.root / args["path"]).resolve()
    try:
        rel = path.relative_to(ctx.workspace.root).as_posix()
    except ValueError:
        return tool_error(
            "BAD_PATH",
            f"{args['path']!r} is outside the workspace",
            "Pass a path relative to the workspace, e.g. projects/NAME/plan.md.",
        )
    if not path.is_file():
        return tool_error("FILE_MISSING", f"{rel} does not exist", "Check the path.")
    result = ctx.app.tab_state(rel)
    ctx.emit(DocumentChanged(rel, getattr(ctx.focused_project(), "dirname", None)))
    return {"path": rel, **result}


def consent_to_use(ctx: ToolContext) -> bool:
    """activate_analysis can do something now: this turn's message is the analyst's yes to a
    consent question and analysis is not on yet. Only a guide to what is sent: a call is
    judged by consent_grant, whatever is sent."""
    if ctx.analysis_active():
        return False
    last = ctx.conversation.last_answer()
    return bool(
        last
        and last.get("question_kind") == CONSENT_KIND
        and last.get("consent") == "yes"
        and last.get("turn") == ctx.turn
        and ctx.conversation.pending_question() is None
    )


def tabs_open(ctx: ToolContext) -> bool:
    """An editor tab is open: only then is there a tab to reload from disk."""
    return bool(ctx.app.app_state().open_tabs)


_PROJECT = frozenset({TOUCHES_PROJECT})

TOOLS = [
    Tool("get_app_context", params(), get_app_context),
    Tool(
        "focus_project",
        params({"project": {"type": "string"}}, ("project",)),
        focus_project,
        touches=_PROJECT,
        sent_when=projects_to_name,
    ),
    Tool(
        "create_project",
        params(
            {
                "name": {"type": "string", "minLength": 1, "maxLength": 80},
                "focus": {"type": "boolean", "default": True},
            },
            ("name",),
        ),
        create_project,
        touches=_PROJECT,
    ),
    Tool(
        "set_project_status",
        params(
            {"status": {"type": "string", "enum": list(AGENT_TARGETS)}, **PROJECT_ARG}, ("status",)
        ),
        set_project_status,
        PROJECT_STATES,
        touches=_PROJECT,
    ),
    Tool(
        "ask_user",
        params(
            {
                "question": {"type": "string", "minLength": 1},
                "choices": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
                "kind": {"type": "string", "enum": ["question", CONSENT_KIND]},
                "analysis": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(ANALYSES)},
                    "minItems": 1,
                },
            },
            ("question",),
        ),
        ask_user,
        on_demand=frozenset({"analysis"}),  # core.md.j2 names it and its values
    ),
    Tool(
        "activate_analysis",
        params({"reason": {"type": "string", "minLength": 3}}, ("reason",)),
        activate_analysis,
        frozenset({EXECUTING}),
        sent_when=consent_to_use,
    ),
    Tool(
        "patch_step",
        params(
            {
                "step_id": {"type": "string"},
                "summary": {"type": "string", "minLength": 8},
                "purpose": {"type": "string", "maxLength": PURPOSE_MAX_CHARS},
            },
            ("step_id",),
        ),
        patch_step,
    ),
    Tool(
        "read_step",
        params(
            {
                "step_id": {"type": "string"},
                "offset": {"type": "integer", "minimum": 0},
                "rows": {"type": "integer", "minimum": 1},
            },
            ("step_id",),
        ),
        read_step,
        on_demand=frozenset({"offset", "rows"}),
    ),
    Tool(
        "sync_tab_content",
        params({"path": {"type": "string", "minLength": 1}}, ("path",)),
        sync_tab_content,
        ALL_STATES,
        touches=frozenset({TOUCHES_DOCUMENTS}),
        sent_when=tabs_open,
    ),
]
