"""Assembling what the model sees, afresh at every iteration (DESIGN.md section 6).

Layers, most stable first so servers' prefix caches reuse the start of the prompt:
``core``, ``state`` (what the state allows; the same all through a state), ``knowledge``,
``tools`` (sent as the request's ``tools``), ``recent_steps`` (those whose result the
history does not hold), ``state_notes`` (the state's conditional sections, which change
between turns: open annotations, unsaved edits, an HTML report, the question just
answered, the analyst's decisions on the agent's edits since its last turn), ``summary``,
``history`` (the note on dropped turns, then the kept messages),
``active_tab``. Nothing that changes between turns comes before the end of the knowledge
layer. The text layers form one system message (one system message suits every chat
template); the active tab payload follows the earlier turns and comes just before the
analyst's message of the current turn (so that message stays the analyst's last word),
framed as context from Lantide rather than words of the analyst.

:class:`PromptAssembler` is also what ``lantide prompt`` prints, layer by layer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from lantide.agent.app_state import AppState, OpenTab, OpenTabDict, is_html_report
from lantide.agent.history import (
    Turn,
    TurnCompaction,
    compact_turn,
    describe_key_event,
    fit_history,
    group_turns,
    message_tokens,
    messages_tokens,
    shrink_unread,
)
from lantide.agent.history import _tokens as cached_count
from lantide.agent.message_types import Message, ToolSchema
from lantide.agent.summary import gather_facts, render_summary
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import PURPOSE_MAX_CHARS, ToolRegistry, projects_to_name
from lantide.agent.tools.step_tools import past_step_count
from lantide.errors import LantideError
from lantide.templates import render_prompt
from lantide.tokens import count_tokens, truncate_to_tokens
from lantide.workspace.layout import sidecar_path
from lantide.workspace.model import Project

if TYPE_CHECKING:
    from lantide.docs.agent_view_types import DocumentView

RECENT_STEPS = 8


def _turn_of(record: Mapping[str, object]) -> int:
    """A record's turn: a whole number or absent (0): conversation_replay skips others."""
    turn = record.get("turn")
    return turn if isinstance(turn, int) else 0


KNOWLEDGE_SHARE = 0.10  # of the context window, at most KNOWLEDGE_MAX_TOKENS
KNOWLEDGE_MAX_TOKENS = 3_000
ACTIVE_TAB_SHARE = 0.20
ACTIVE_TAB_MAX_TOKENS = 6_000
COMPACT_AT = 0.85  # compacting within a turn frees the request down to this share of the window


def output_reserve(window: int) -> int:
    """Tokens kept free for the model's answer."""
    return max(256, min(4_096, window // 4))


@dataclass
class _FixedLayers:
    """The layers around the history, rendered once per assembly."""

    project: Project | None
    core: str
    state: str
    knowledge: str
    tools: list[ToolSchema]
    steps: str
    notes: str
    summary: str
    active: str
    turns: list[Turn]
    tools_json: str = ""
    fixed: int = 0
    budget: int = 0


class LayerDict(TypedDict):
    name: str
    tokens: int
    text: str


class ActiveDocument(TypedDict):
    """A Plan or Report open in the active tab, as ``active_tab.md.j2`` shows it."""

    text: str
    open_annotation_count: object  # the docs layer's view's fields, as it gives them
    annotation_summary: object
    rules: str | None


class ActiveTabFields(TypedDict):
    """What ``active_tab.md.j2`` is rendered with."""

    tab: OpenTabDict
    document: ActiveDocument | None
    sql: str | None
    table: str | None
    text: str
    truncated: bool


@dataclass
class Layer:
    name: str
    text: str
    tokens: int

    def to_dict(self) -> LayerDict:
        return {"name": self.name, "tokens": self.tokens, "text": self.text}


@dataclass
class AssembledPrompt:
    state: str
    layers: list[Layer]
    messages: list[Message]
    tools: list[ToolSchema]
    context_window: int
    compacted_now: int = 0  # tool results newly compacted for this request
    tokens_before_compaction: int = 0
    dropped_turns: list[int] = field(default_factory=list)
    # False when even compacted the request leaves the answer too little of the window
    fits: bool = True

    @property
    def tokens(self) -> int:
        return sum(layer.tokens for layer in self.layers)

    def layer(self, name: str) -> Layer:
        return next(layer for layer in self.layers if layer.name == name)


class PromptAssembler:
    def __init__(self, registry: ToolRegistry):
        self.registry = registry
        # (document path, (size, mtime) of the file and its sidecar) -> the docs layer's view
        self._views: dict[tuple[str, tuple[tuple[int, int] | None, ...]], DocumentView] = {}

    def document_view(self, ctx: ToolContext, project: Project, kind: str) -> DocumentView:
        """The docs layer's view of a Plan/Report, re-read only when its file or sidecar
        changed (size and modification time), since each iteration needs it."""
        path = project.document_path(kind)
        sidecar = sidecar_path(path)
        stamp: list[tuple[int, int] | None] = []
        for p in (path, sidecar):
            try:
                st = p.stat()
                stamp.append((st.st_size, st.st_mtime_ns))
            except OSError:
                stamp.append(None)
        key = (str(path), tuple(stamp))
        view = self._views.get(key)
        if view is None:
            view = ctx.services.documents.agent_view(project, kind)
            self._views = {k: v for k, v in self._views.items() if k[0] != key[0]}
            self._views[key] = view
        return view

    # -- text layers
    def core(self, ctx: ToolContext) -> str:
        return render_prompt(
            "core.md.j2",
            preview_rows=ctx.settings.query.preview_rows,
            purpose_max_chars=PURPOSE_MAX_CHARS,
            external_databases=bool(ctx.workspace.connections),
            project_argument=projects_to_name(ctx),
        )

    def state_layer(self, ctx: ToolContext, project: Project | None) -> str:
        if project is None:
            return render_prompt(
                "state_no_project.md.j2", project_count=len(ctx.workspace.project_dirnames())
            )
        return render_prompt(
            f"state_{ctx.state}.md.j2",
            project={
                "name": project.name,
                "plan": project.plan,
                "report": project.report,
                "status": project.status,
            },
            project_delivered=project.status == "delivered",
            plan_approval=project.approval(),
            analysis_active=ctx.analysis_active(),
            purpose_max_chars=PURPOSE_MAX_CHARS,
        )

    def state_notes(
        self,
        ctx: ToolContext,
        project: Project | None,
        app: AppState,
        answered_question: str | None,
    ) -> str:
        """The state's sections that change between turns, kept after the knowledge layer."""
        from lantide.agent.edit_notice import review_notice

        active = app.active
        return render_prompt(
            "sections/conditional.md.j2",
            open_annotations=self._open_annotations(ctx, project) if project is not None else 0,
            html_report_active=is_html_report(active),
            active_tab_dirty=bool(active and active.dirty),
            answered_question=answered_question,
            edit_review=review_notice(ctx.conversation, project),
        )

    def _open_annotations(self, ctx: ToolContext, project: Project) -> int:
        """Open Plan annotations, from the sidecar the docs layer keeps (0 if unreadable)."""
        try:
            view = self.document_view(ctx, project, "plan")
        except LantideError:
            return 0
        return int(view.get("open_annotation_count") or 0)

    def knowledge(self, ctx: ToolContext, project: Project | None, window: int) -> str:
        kb = ctx.services.knowledge(project)
        budget = min(KNOWLEDGE_MAX_TOKENS, int(window * KNOWLEDGE_SHARE))
        layer = kb.layer(budget_tokens=budget)
        ctx.knowledge_offers_tool = bool(layer.offers_tool)
        return layer.text

    def recent_steps(self, ctx: ToolContext, shown: list[Message] | None = None) -> str:
        """The last steps of the ledger, less those whose result is in ``shown`` (the
        history sent with it): said once, and the text above the history stays the same
        while a turn records steps. Without ``shown``, every recent step (an upper bound
        for the budget)."""
        steps = ctx.ledger.recent(RECENT_STEPS)
        if shown:
            results = [m.get("content") or "" for m in shown if m.get("role") == "tool"]
            steps = [s for s in steps if not any(f'"{s.get("step_id")}"' in r for r in results)]
        return render_prompt("recent_steps.md.j2", steps=steps) if steps else ""

    def summary(self, ctx: ToolContext, project: Project | None, app: AppState) -> str:
        from lantide.agent.consent import analysis_state

        analysis = analysis_state(ctx.conversation, project)
        return render_summary(
            gather_facts(
                ctx.workspace,
                app,
                project,
                ctx.services.cached_table_count(),
                analysis=analysis,
                past_steps=past_step_count(ctx),
            )
        )

    # -- the active tab
    def active_tab(self, ctx: ToolContext, app: AppState, window: int) -> str:
        tab = app.active
        if tab is None:
            return ""
        limit = min(ACTIVE_TAB_MAX_TOKENS, int(window * ACTIVE_TAB_SHARE))
        fields: ActiveTabFields = {
            "tab": tab.to_dict(),
            "document": None,
            "sql": None,
            "table": None,
            "text": "",
            "truncated": False,
        }
        try:
            self._fill_active_tab(ctx, tab, fields)
        except LantideError:
            return ""  # a tab whose file is gone or unreadable: the summary still names it
        text, sql = fields["text"], fields["sql"]
        if text and count_tokens(text) > limit:
            fields["text"], fields["truncated"] = truncate_to_tokens(text, limit), True
        if sql and count_tokens(sql) > limit:
            fields["sql"], fields["truncated"] = truncate_to_tokens(sql, limit), True
        doc = fields["document"]
        if doc and count_tokens(doc["text"]) > limit:
            doc["text"], fields["truncated"] = truncate_to_tokens(doc["text"], limit), True
        return render_prompt("active_tab.md.j2", **fields)

    def _fill_active_tab(self, ctx: ToolContext, tab: OpenTab, fields: ActiveTabFields) -> None:
        root = ctx.workspace.root
        if tab.type == "table":
            fields["table"] = tab.path
            return
        path = (root / tab.path).resolve()
        if root not in path.parents:
            raise LantideError(f"tab path {tab.path!r} is outside the workspace")
        parts = path.relative_to(root).parts
        if is_html_report(tab) and len(parts) == 3 and parts[0] == "projects":
            # the page's outline, not its text (inline chart scripts are megabytes); the
            # import is here: importing the agent must not load the documents layer
            from lantide.agent.report_html import read_chunks

            outline = read_chunks(ctx.workspace.project(parts[1]))["chunks"]
            fields["text"] = "\n".join(json.dumps(c, ensure_ascii=False) for c in outline)
            return
        if tab.type in ("plan", "report") and len(parts) == 3 and parts[0] == "projects":
            from lantide.agent.tools.doc_tools import report_rules  # as read_chunks above

            project = ctx.workspace.project(parts[1])
            view = self.document_view(ctx, project, tab.type)
            text = tab.content if tab.dirty and tab.content is not None else view.get("text", "")
            fields["document"] = {
                "text": text,
                "open_annotation_count": view.get("open_annotation_count", 0),
                "annotation_summary": view.get("annotation_summary") or [],
                "rules": report_rules(ctx, tab.type),
            }
            return
        text = (
            tab.content
            if tab.content is not None
            else path.read_text(encoding="utf-8", errors="replace")
            if path.is_file()
            else ""
        )
        if tab.type == "sql":
            fields["sql"] = text
        else:
            fields["text"] = text

    # -- everything
    def _fixed_layers(
        self, ctx: ToolContext, window: int, current_turn: int | None
    ) -> _FixedLayers:
        """Every layer but the history, rendered, and the tokens left for the history."""
        project = ctx.focused_project()
        app = ctx.app.app_state()
        pending = ctx.conversation.pending_question()
        answered = None
        last = ctx.conversation.last_answer()
        if pending is None and last is not None and last.get("turn") == current_turn:
            question = last.get("question")  # text, unless the file was edited by hand
            answered = None if question is None else str(question)
        remote = bool(ctx.workspace.connections)
        f = _FixedLayers(
            project=project,
            core=self.core(ctx),
            state=self.state_layer(ctx, project),
            knowledge=self.knowledge(ctx, project, window),
            tools=[
                t.schema(external_databases=remote, project_argument=projects_to_name(ctx))
                for t in self.registry.sent(ctx.state, ctx)
            ],
            steps=self.recent_steps(ctx),
            notes=self.state_notes(ctx, project, app, answered),
            summary=self.summary(ctx, project, app),
            active=self.active_tab(ctx, app, window),
            turns=group_turns(ctx.conversation.message_records()),
        )
        f.tools_json = json.dumps(f.tools)
        # counted per layer: the stable ones are cache hits from one iteration to the next
        f.fixed = sum(
            cached_count(x)
            for x in (
                f.core,
                f.state,
                f.knowledge,
                f.steps,
                f.notes,
                f.summary,
                f.tools_json,
                f.active,
            )
        )
        previous = [t for t in f.turns if t.number != current_turn]
        # room kept for the note on dropped turns (at most: all of them dropped)
        worst_note = cached_count(self._history_note(ctx, [t.number for t in previous]))
        f.budget = window - output_reserve(window) - f.fixed - worst_note
        return f

    def history_budget(self, ctx: ToolContext, window: int, current_turn: int | None) -> int:
        """The tokens the history (earlier turns and this one) may take in a request
        assembled now: what a tool result of this turn can count on (agent.loop)."""
        return self._fixed_layers(ctx, window, current_turn).budget

    def assemble(
        self,
        ctx: ToolContext,
        window: int,
        compaction: TurnCompaction | None = None,
        current_turn: int | None = None,
        for_display: bool = False,
    ) -> AssembledPrompt:
        f = self._fixed_layers(ctx, window, current_turn)
        core, state, knowledge, tools, steps = f.core, f.state, f.knowledge, f.tools, f.steps
        notes, summary, active, fixed, budget = f.notes, f.summary, f.active, f.fixed, f.budget
        tools_json = f.tools_json
        current = [t for t in f.turns if t.number == current_turn]
        previous = [t for t in f.turns if t.number != current_turn]
        turn_messages = current[0].messages if current else []
        compaction = compaction or TurnCompaction()

        before = messages_tokens(compaction.apply(turn_messages))
        compacted_now = 0
        limit = int(window * COMPACT_AT) - output_reserve(window) - fixed
        # Earlier turns give way first: they get only what this turn leaves. When this turn
        # alone passes the budget, the results already answered from are compacted, down to
        # the COMPACT_AT mark so that the next iterations have room before compacting again.
        if before > budget:
            compacted_now = compact_turn(turn_messages, compaction, before - limit)
        current_sent = compaction.apply(turn_messages)
        if messages_tokens(current_sent) > budget:  # then unread ones shrink to what fits
            compacted_now += shrink_unread(
                turn_messages, compaction, messages_tokens(current_sent) - budget
            )[0]
            current_sent = compaction.apply(turn_messages)
        fitted = fit_history(previous, max(0, budget - messages_tokens(current_sent)))
        note = self._history_note(ctx, fitted.dropped_turns)
        steps = self.recent_steps(ctx, fitted.messages + current_sent)  # at most the budgeted

        system = "\n\n".join(
            x.strip() for x in (core, state, knowledge, steps, notes, summary, note) if x.strip()
        )
        messages: list[Message] = [{"role": "system", "content": system}]
        messages += fitted.messages
        # the active tab goes just before the analyst's message of this turn, so that message
        # stays the last word of the analyst (and the tab, stable within the turn, is cached)
        if active:
            messages.append({"role": "user", "content": active})
        messages += current_sent

        history_tokens = messages_tokens(fitted.messages + current_sent) + cached_count(note)
        layers = [
            Layer("core", core, cached_count(core)),
            Layer("state", state, cached_count(state)),
            Layer("knowledge", knowledge, cached_count(knowledge)),
            Layer(
                "tools",
                json.dumps(tools, indent=1) if for_display else "",
                cached_count(tools_json),
            ),
            Layer("recent_steps", steps, cached_count(steps)),
            Layer("state_notes", notes, cached_count(notes)),
            Layer("summary", summary, cached_count(summary)),
            Layer(
                "history",
                self._history_display(note, fitted.messages + current_sent) if for_display else "",
                history_tokens,
            ),
            Layer("active_tab", active, cached_count(active)),
        ]
        prompt = AssembledPrompt(
            ctx.state, layers, messages, tools, window, compacted_now, before, fitted.dropped_turns
        )
        prompt.fits = prompt.tokens <= window - output_reserve(window)
        return prompt

    def _history_note(self, ctx: ToolContext, dropped: list[int]) -> str:
        if not dropped:
            return ""
        last = max(dropped)
        lines = [
            d
            for d in (
                describe_key_event(e) for e in ctx.conversation.events() if _turn_of(e) <= last
            )
            if d
        ]
        return render_prompt("history_note.md.j2", dropped_turns=len(dropped), events=lines[-20:])

    @staticmethod
    def _history_display(note: str, messages: list[Message]) -> str:
        out = [note.strip()] if note else []
        for m in messages:
            text = m.get("content") or ""
            calls = ", ".join(c["function"]["name"] for c in m.get("tool_calls") or [])
            out.append(
                f"[{m['role']}{' → ' + calls if calls else ''}] {text}".strip()
                + f"  ({message_tokens(m)} tokens)"
            )
        return "\n".join(out)
