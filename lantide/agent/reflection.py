"""Reflect before reporting: a skeptical review before findings reach the analyst.

Three moments are reviewed (:class:`Reflector`, called from the loop):

- ``update_report``: before the tool runs. A review that does not pass refuses the call
  (``REFLECTION_FAILED``, the problems in the message); the Report on disk is untouched and
  the model fixes the draft or asks the analyst.
- A final numeric answer in Executing: the turn's last assistant message (no tool calls)
  while the project is executing, the turn ran at least one query step, and the text
  outside ``[[QUERY_STEP]]`` lines states a number (:func:`states_a_number`: digits not
  part of a word such as ``s3`` or ``Q3``, not a list marker, not a year 1900-2099 on its
  own). A review that does not pass sends the problems back (an engine message, not the
  analyst's) and the turn goes on; after ``MAX_FAILED_ANSWER_REVIEWS`` failures in one turn
  it stops with an honest note instead of reporting past them.

- ``set_project_status`` to ``report_review``: no model call; ``lantide report check`` on the
  Report (:mod:`lantide.agent.report_evidence`) must be clean, else the move is refused
  (``REPORT_CHECK_FAILED``, each problem with its line). Recorded like a review, with
  ``subject: "report_review"``.

The review is one short streamed call to the primary model without tools (so Stop closes
it at once, and retries are announced like the turn's own) with the checklist prompt
(``prompts/reflection/checklist.md.j2``) and its input: the analyst's question, the Plan
(cut to a budget), the knowledge entries (not the layer's instructions to the agent), the
steps behind the draft (those of the turn and those it cites) with their ``checks``,
every step of the conversation with an unresolved error-severity check, and the draft.

The input lists the unresolved error checks first (waived ones are resolved:
:mod:`lantide.agent.check_gate`). The verdict is read from one JSON object
(:func:`parse_verdict`); it passes only when the object says ``"ok": true``, every
checklist item says ``"ok": true`` and no problem is listed. A rule has the last word: an
ok verdict over a draft that states a number resting on a step with an unresolved error
check (cited to it, or, uncited, matching a cell of a step behind the draft:
:func:`numbers_on_failed_checks`) is recorded as ``overridden_by_rule`` and handled as a
failed review. Anything else (no JSON, missing items, a string where a boolean belongs, a model
error) is a failure, never a pass. Each review is a ledger line with ``tool:
"reflection"`` and a :class:`~lantide.agent.events.ReflectionRecorded` event.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from lantide.agent.budget import reply_tokens
from lantide.agent.check_gate import ledger_steps, unresolved_checks
from lantide.agent.events import Event, ReflectionRecorded
from lantide.agent.ledger import QUERY_STEP_MARKER
from lantide.agent.ledger_types import LedgerStep, ReflectionFields
from lantide.agent.message_types import Message
from lantide.agent.model_stream import stream_reply
from lantide.agent.tools.registry import ToolError
from lantide.errors import LantideError
from lantide.templates import render_prompt
from lantide.tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from lantide.agent.loop import TurnRunner  # which imports this module

CHECKLIST = ("denominator", "grain", "filters", "checks", "traced")
REPORT, ANSWER = "update_report", "final_answer"
REPORT_REVIEW = "report_review"  # the status the evidence check guards
MAX_FAILED_ANSWER_REVIEWS = 2
PLAN_MAX_TOKENS = 1_500
KNOWLEDGE_MAX_TOKENS = 600
DRAFT_MAX_TOKENS = 3_000
MAX_STEPS = 12
SQL_CHARS = 600
RAW_KEPT_CHARS = 2_000

_NUMBER = re.compile(r"(?<![\w.])[-+−]?\d[\d,]*(?:\.\d+)?(?![\w])%?")
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.M)
_YEAR = re.compile(r"^(19|20)\d\d$")
_STEP_ID = re.compile(r"\b[A-Za-z0-9][\w.-]*\b")


def states_a_number(text: str) -> bool:
    """Whether the answer states a number, outside its ``[[QUERY_STEP]]`` lines."""
    prose = "\n".join(line for line in (text or "").splitlines() if QUERY_STEP_MARKER not in line)
    prose = _LIST_MARKER.sub(" ", prose)
    return any(not _YEAR.match(m.group(0)) for m in _NUMBER.finditer(prose))


def knowledge_entries(layer_text: str) -> str:
    """The knowledge layer from its first ``###`` part on: the entries (or catalog index)
    and any cut notice, without the heading and the instructions meant for the agent."""
    start = layer_text.find("\n### ")
    return (layer_text[start:] if start >= 0 else layer_text).strip()


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _check(check: Mapping[str, object]) -> dict[str, str]:
    """A check as the prompt shows it, whatever fields a ledger line has or lacks."""
    return {
        "code": str(check.get("code") or "?"),
        "severity": str(check.get("severity") or "?"),
        "message": str(check.get("message") or ""),
    }


class ReviewRefusal(ToolError):
    """A call refused by the review before reporting or by the Report's evidence check."""

    problems: list[str]


class UnresolvedCheck(TypedDict):
    """An error-severity check no one resolved, as the review input and the ledger show it."""

    step_id: Any  # as the ledger line has it
    code: str
    message: str
    evidence: str


class ChecklistItem(TypedDict):
    """One checklist item of a review's verdict (ledger ``checklist`` entries)."""

    item: str
    ok: bool
    note: str


def unresolved_error_checks(steps: list[LedgerStep]) -> list[UnresolvedCheck]:
    """The error-severity ``checks`` of ``steps`` no analyst's waiver resolves (waivers
    attached by :func:`lantide.agent.check_gate.ledger_steps`)."""
    out: list[UnresolvedCheck] = []
    for step in steps:
        for check in unresolved_checks(step):
            out.append(
                {
                    "step_id": step.get("step_id"),
                    "code": str(check.get("code") or "?"),
                    "message": str(check.get("message") or ""),
                    "evidence": _short(check.get("evidence")),
                }
            )
    return out


def _short(value: Any, limit: int = 200) -> str:
    if value in (None, "", [], {}):
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def numbers_on_failed_checks(
    draft: str,
    every: list[LedgerStep],
    behind: list[LedgerStep],
    only_lines: set[int] | None = None,
) -> list[str]:
    """The numbers ``draft`` states that rest on a step with an unresolved error check: cited
    to it (``check_failed`` in :mod:`lantide.agent.report_check`, over ``every`` step of the
    conversation), or uncited and matching a cell of such a step among ``behind``;
    ``only_lines`` (1-based): those of these lines only (what an ``update_report`` writes)."""
    from lantide.agent.cell_match import matched_cells
    from lantide.agent.report_check import CHECK_FAILED, StepIndex, classify_number
    from lantide.docs.citations import scan_numbers

    index = StepIndex(every)
    indexed = [f for f in (index.get(s["step_id"]) for s in behind) if f is not None]
    failed = [f for f in indexed if f.failed]
    clean = [f for f in indexed if not f.failed]
    if not failed and not any(unresolved_checks(s) for s in every):
        return []
    out = []
    for number in scan_numbers(draft).numbers:
        if only_lines is not None and number.line not in only_lines:
            continue
        verdict = classify_number(number, index)
        if verdict.status == CHECK_FAILED:
            on = [(c["step"], c["code"], c["message"]) for c in verdict.checks]
        elif not number.cited:
            if any(not f.failed and matched_cells(number, f) for f in clean):
                continue  # a clean step behind the draft holds it too
            on = [
                (f.step_id, str(c.get("code")), str(c.get("message") or ""))
                for f in failed
                if matched_cells(number, f)
                for c in f.failed
            ]
        else:
            continue
        if on:
            checks = "; ".join(f"{code} on step {step}: {message}" for step, code, message in on)
            out.append(
                f"line {number.line}: {number.text} is check_failed: it rests on an "
                f"unresolved error check ({checks})"
            )
    return out


@dataclass
class Verdict:
    ok: bool
    checklist: list[ChecklistItem] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    readable: bool = True


def _extract_object(text: str) -> Any:
    """The JSON object in a reply: the whole text, a fenced block, or the outermost braces."""
    candidates = [text.strip()]
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        candidates.append(fence.group(1).strip())
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
    raise ValueError("no JSON object in the reply")


def parse_verdict(text: str) -> Verdict:
    """Read the model's review. Whatever cannot be read as a passing review fails."""
    try:
        data = _extract_object(text or "")
    except ValueError as exc:
        return Verdict(
            False, problems=[f"the review's answer could not be read ({exc})"], readable=False
        )
    if not isinstance(data, dict):
        return Verdict(False, problems=["the review's answer is not a JSON object"], readable=False)
    problems = (
        [str(p) for p in data.get("problems") or [] if str(p).strip()]
        if isinstance(data.get("problems"), list)
        else ([str(data["problems"])] if data.get("problems") else [])
    )
    checklist = data.get("checklist")  # the model's JSON
    raw_items: dict[str, object] = checklist if isinstance(checklist, dict) else {}
    items: list[ChecklistItem] = []
    readable = isinstance(data.get("checklist"), dict) and data.get("ok") in (True, False)
    for name in CHECKLIST:
        entry = raw_items.get(name)
        passed = isinstance(entry, dict) and entry.get("ok") is True
        note = str(entry.get("note") or "") if isinstance(entry, dict) else ""
        if not isinstance(entry, dict) or not isinstance(entry.get("ok"), bool):
            readable = False
            note = note or "not answered"
        items.append({"item": name, "ok": passed, "note": note})
    ok = data.get("ok") is True and readable and all(i["ok"] for i in items) and not problems
    if not ok and not problems:
        failed = [f"{i['item']}: {i['note'] or 'failed'}" for i in items if not i["ok"]]
        problems = failed or (
            ["the review's answer is incomplete"]
            if not readable
            else ["the review did not pass the draft"]
        )
    return Verdict(ok, items, problems, readable)


@dataclass
class AnswerReview:
    """What the loop does after a final answer was reviewed."""

    retry: bool = False  # problems were sent back: ask the model again
    give_up_note: str | None = None  # stop the turn with this note


class Reflector:
    """The reflection step of one turn (``runner`` is the loop's :class:`TurnRunner`)."""

    def __init__(self, runner: TurnRunner):
        self.runner = runner
        self.failed_answer_reviews = 0

    # -- the two moments
    def before_tool(
        self, name: str, args: dict[str, object]
    ) -> Generator[Event, None, ReviewRefusal | None]:
        """Review an ``update_report`` draft, or check the Report's evidence before the
        project moves to ``report_review``; returns the refusal result, or None to run it.
        ``args``: the call's arguments as the model sent them (not yet checked)."""
        project = args.get("project")
        if name == "set_project_status" and args.get("status") == REPORT_REVIEW:
            # a project that is no name is the tool's own refusal to give (BAD_ARGUMENTS)
            return (yield from self._evidence_gate(project if isinstance(project, str) else None))
        content = args.get("content")
        if name != REPORT or not isinstance(content, str):
            return None
        verdict = yield from self._review(REPORT, content, self._written_lines(project, content))
        if verdict.ok:
            return None
        return {
            "error": "REFLECTION_FAILED",
            "message": "the review before reporting found problems: " + "; ".join(verdict.problems),
            "problems": verdict.problems,
            "hint": render_prompt("notes/reflection_refused.md.j2").strip(),
        }

    def after_answer(self, text: str) -> Generator[Event, None, AnswerReview]:
        """Review a final numeric answer in Executing (see the module docstring)."""
        r = self.runner
        if r.context().state != "executing" or not r.turn_steps or not states_a_number(text):
            return AnswerReview()
        verdict = yield from self._review(ANSWER, text)
        if verdict.ok:
            return AnswerReview()
        self.failed_answer_reviews += 1
        if self.failed_answer_reviews >= MAX_FAILED_ANSWER_REVIEWS:
            return AnswerReview(
                give_up_note=render_prompt(
                    "notes/reflection_unresolved.md.j2",
                    attempts=self.failed_answer_reviews,
                    problems=verdict.problems,
                ).strip()
            )
        note = render_prompt("notes/reflection_failed.md.j2", problems=verdict.problems).strip()
        # an engine message the model reads; the chat shows the reflection card instead
        r.conversation.add_message(
            {"role": "user", "content": note}, r.turn, engine_note=True, reflection=True
        )
        return AnswerReview(retry=True)

    def _evidence_gate(
        self, project_name: str | None
    ) -> Generator[Event, None, ReviewRefusal | None]:
        """``lantide report check`` on the Report before it goes to review: every number
        cited to a formal step that holds it (:mod:`lantide.agent.report_evidence`)."""
        from lantide.agent.report_evidence import report_review_check

        r = self.runner
        try:
            project = r.s.workspace.project(project_name) if project_name else r.s.focused_project()
        except LantideError:
            return None  # the tool itself says the project is unknown
        if project is None:
            return None
        checked = report_review_check(r.s.workspace, project)
        counts: dict[str, int]
        if isinstance(checked, str):
            ok, problems, counts = False, [checked], {}
        else:
            ok, counts = checked.ok, checked.counts
            problems = [
                f"line {p['line']}: {p['number']} {p['status']}: {p['message']}"
                for p in checked.problems[:20]
            ]
        entry: ReflectionFields = {
            "subject": REPORT_REVIEW,
            "turn": r.turn,
            "project": project.dirname,
            "ok": ok,
            "checklist": [
                {
                    "item": "evidence",
                    "ok": ok,
                    "note": ", ".join(f"{v} {k}" for k, v in counts.items()),
                }
            ],
            "problems": problems,
            "steps": [],
            "evidence_counts": counts,
        }
        recorded = r.s.ledger.append_reflection(entry)
        r.conversation.add_event("reflection", r.turn, reflection=recorded)
        yield ReflectionRecorded(recorded)
        if ok:
            return None
        return {
            "error": "REPORT_CHECK_FAILED",
            "message": "the Report is not ready for review: " + "; ".join(problems[:10]),
            "problems": problems,
            "hint": render_prompt("notes/report_evidence.md.j2").strip(),
        }

    # -- the review
    def _written_lines(self, project_name: Any, content: str) -> set[int] | None:
        """The lines an ``update_report`` writes (as its own evidence check counts them:
        the analyst's lines already on disk are theirs), or None when unknown."""
        from lantide.agent.report_check import new_lines

        r = self.runner
        try:
            project = (
                r.s.workspace.project(project_name)
                if isinstance(project_name, str) and project_name
                else r.s.focused_project()
            )
            old = project.report_path.read_text(encoding="utf-8") if project else ""
        except (LantideError, OSError, UnicodeDecodeError):
            return None
        return new_lines(old, content)

    def _review(
        self, subject: str, draft: str, only_lines: set[int] | None = None
    ) -> Generator[Event, None, Verdict]:
        r = self.runner
        started = time.perf_counter()
        every = ledger_steps(r.s.ledger)
        steps = self._steps_behind(draft, every)
        unresolved = unresolved_error_checks(every)
        system = render_prompt(
            "reflection/checklist.md.j2",
            subject=subject,
            items=CHECKLIST,
            unresolved=bool(unresolved),
        )
        user = self._input(subject, draft, steps, unresolved)
        raw = ""
        r.cancel.raise_if_cancelled()
        try:
            raw = yield from self._ask(system, user)
            verdict = parse_verdict(raw)
        except LantideError as exc:
            r.cancel.raise_if_cancelled()
            verdict = Verdict(
                False, problems=[f"the review could not run: {exc.message}"], readable=False
            )
        r.cancel.raise_if_cancelled()
        overridden = numbers_on_failed_checks(draft, every, steps, only_lines) if verdict.ok else []
        if overridden:  # the rule, not the model, decides what counts as checked
            verdict = Verdict(
                False,
                verdict.checklist,
                [f"overridden by the rule: {o}" for o in overridden],
                verdict.readable,
            )
        project = r.s.focused_project()
        entry: ReflectionFields = {
            "subject": subject,
            "turn": r.turn,
            "project": getattr(project, "dirname", None),
            "ok": verdict.ok,
            "checklist": verdict.checklist,
            "problems": verdict.problems,
            "steps": [s["step_id"] for s in steps],
            "unresolved_checks": unresolved,
            "duration_ms": int((time.perf_counter() - started) * 1000),
        }
        if overridden:
            entry["overridden_by_rule"] = {"verdict": "ok", "numbers": overridden}
        if not verdict.readable:
            entry["raw"] = raw[:RAW_KEPT_CHARS]
        recorded = r.s.ledger.append_reflection(entry)
        r.conversation.add_event("reflection", r.turn, reflection=recorded)
        yield ReflectionRecorded(recorded)
        return verdict

    def _ask(self, system: str, user: str) -> Generator[Event, None, str]:
        """The review's answer text (streamed, no tools; charged to the token budget)."""
        r = self.runner
        messages: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        reply = yield from stream_reply(r.s.model, messages, [], r.cancel, show_text=False)
        if reply is None:
            raise LantideError("the model ended the review without an answer")
        usage = reply.usage or {}
        r.s.budget.charge(
            usage.get("total_tokens")
            or count_tokens(system) + count_tokens(user) + reply_tokens(reply)
        )
        return reply.content or ""

    def _steps_behind(self, draft: str, every: list[LedgerStep]) -> list[LedgerStep]:
        """The turn's steps and the steps the draft cites, oldest first, at most MAX_STEPS."""
        r = self.runner
        known = {s["step_id"] for s in every}
        cited = {m.group(0) for m in _STEP_ID.finditer(draft or "")} & known
        wanted = set(r.turn_steps) | cited
        return [s for s in every if s["step_id"] in wanted][-MAX_STEPS:]

    def _input(
        self,
        subject: str,
        draft: str,
        steps: list[LedgerStep],
        unresolved: list[UnresolvedCheck],
    ) -> str:
        r = self.runner
        plan, plan_cut = self._plan_text()
        knowledge = ""
        prompt = getattr(r.s, "last_prompt", None)
        if prompt is not None:
            knowledge = truncate_to_tokens(
                knowledge_entries(prompt.layer("knowledge").text), KNOWLEDGE_MAX_TOKENS
            )
        draft_cut = count_tokens(draft) > DRAFT_MAX_TOKENS
        return render_prompt(
            "reflection/input.md.j2",
            subject=subject,
            question=r.message,
            plan=plan,
            plan_cut=plan_cut,
            knowledge=knowledge,
            unresolved=unresolved,
            draft=truncate_to_tokens(draft, DRAFT_MAX_TOKENS) if draft_cut else draft,
            draft_cut=draft_cut,
            steps=[
                {
                    "step_id": s["step_id"],
                    "purpose": s.get("purpose"),
                    "sql": " ".join(str(s.get("sql") or "").split())[:SQL_CHARS],
                    "row_count": s.get("row_count"),
                    "columns": [
                        str(c.get("name") if isinstance(c, dict) else c)
                        for c in _as_list(s.get("columns"))
                    ][:20],
                    # the draft's [[QUERY_STEP]] line usually is the summary: said once
                    "summary": None if str(s.get("summary") or "") in draft else s.get("summary"),
                    "checks": [_check(c) for c in _as_list(s.get("checks")) if isinstance(c, dict)],
                }
                for s in steps
            ],
        )

    def _plan_text(self) -> tuple[str, bool]:
        project = self.runner.s.focused_project()
        if project is None:
            return "", False
        try:
            text = project.document_path("plan").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "", False
        text = re.sub(r"</?mark[^>]*>", "", text)  # the marks are the analyst's, not the Plan's
        if count_tokens(text) > PLAN_MAX_TOKENS:
            return truncate_to_tokens(text, PLAN_MAX_TOKENS), True
        return text, False
