"""Running a question set: each case in a fresh copy of its workspace, headless, through
the same agent session as the app and ``lantide chat``; measured and scored."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from lantide.evaluation.question_set import Case, QuestionSet
from lantide.evaluation.scoring import RunRecord, Score, score_case
from lantide.workspace import layout

if TYPE_CHECKING:
    from lantide.agent.session import AgentSession
    from lantide.workspace.model import Project
    from lantide.workspace.settings import Settings

ModelFactory = Callable[[], tuple[Any, Any]]  # () -> (primary, background) model clients


class CaseResultDict(TypedDict):
    """:class:`CaseResult` as the JSON of a run holds it (``lantide eval --json``)."""

    case: str
    kind: str
    repeat: int
    correct: bool | None
    evidence: bool | None
    behaviour: bool | None
    tool_errors: int
    iterations: int
    tokens: int
    tokens_outside_cache: int | None
    seconds: float
    agent_seconds: float
    finish: list[str]
    problems: list[str]
    error: str | None


@dataclass
class CaseResult:
    case: str
    kind: str
    repeat: int
    correct: bool | None
    evidence: bool | None
    behaviour: bool | None
    tool_errors: int
    iterations: int
    tokens: int
    tokens_outside_cache: int | None  # None when the server does not report its cache
    seconds: float
    agent_seconds: float  # of ``seconds``, inside the agent's turns (the rest is the harness)
    finish: list[str]
    problems: list[str] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> CaseResultDict:
        return {
            "case": self.case,
            "kind": self.kind,
            "repeat": self.repeat,
            "correct": self.correct,
            "evidence": self.evidence,
            "behaviour": self.behaviour,
            "tool_errors": self.tool_errors,
            "iterations": self.iterations,
            "tokens": self.tokens,
            "tokens_outside_cache": self.tokens_outside_cache,
            "seconds": self.seconds,
            "agent_seconds": self.agent_seconds,
            "finish": list(self.finish),
            "problems": list(self.problems),
            "error": self.error,
        }


def _data_fingerprint(root: Path) -> str:
    digest = hashlib.sha256()
    data = layout.data_dir(root)
    for path in sorted(data.rglob("*")) if data.is_dir() else []:
        if path.is_file():
            digest.update(str(path.relative_to(data)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def sample_template(parent: Path) -> Path:
    """The sample workspace made once under ``parent``; each case copies it (making the
    sample's data files every time would cost more than most turns)."""
    from lantide.workspace.sample import create_sample

    template = parent / "sample-template"
    if not template.exists():
        create_sample(template).close()
    return template


def prepare_workspace(
    qs: QuestionSet, case: Case, parent: Path, template: Path | None = None
) -> Path:
    """A fresh copy of the case's workspace under ``parent``, its state applied."""
    from lantide.workspace.model import Workspace

    root = parent / f"{case.id}"
    source = qs.workspace_source() or template or sample_template(parent)
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("*.lock", "locks"))
    state = case.state or {}
    ws = Workspace.open(root)
    try:
        # nobody reviews an eval's edits, and the score reads the Report the model wrote:
        # its edits are written at once unless the set's workspace says otherwise
        ws.update_settings(_edits_applied)
        if state.get("project"):
            project = ws.focus_project(state["project"])
            if state.get("status") and project is not None and project.status != state["status"]:
                apply_status(project, state["status"])
    finally:
        ws.close()
    return root


def _edits_applied(settings: dict[str, Any]) -> bool:
    """``agent_edits: apply`` unless the workspace sets it (False: nothing to write)."""
    if "agent_edits" in settings:
        return False
    settings["agent_edits"] = "apply"
    return True


def apply_status(project: Project, status: str) -> None:
    """Put the project in ``status`` as the analyst would (an approved Plan first where the
    lifecycle asks for one)."""
    project.set_status(status)


def run_case(
    qs: QuestionSet,
    case: Case,
    models: ModelFactory,
    *,
    repeat: int = 1,
    settings: Settings | None = None,
    workdir: Path | None = None,
    template: Path | None = None,
) -> CaseResult:
    from lantide.agent.session import AgentSession
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import Settings

    settings = settings or Settings()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lantide-eval-", dir=workdir) as tmp:
        root = prepare_workspace(qs, case, Path(tmp), template)
        before = _data_fingerprint(root)
        record, iterations, tokens, error, in_agent = RunRecord(), 0, 0, None, 0.0
        cached = None
        ws = Workspace.open(root)
        try:
            primary, background = models()
            session = AgentSession.open(
                ws, None, settings=settings, model=primary, background_model=background
            )
            try:
                for message in case.messages:
                    turn_started = time.monotonic()
                    iterations += _run_turn(session, message, record)
                    in_agent += time.monotonic() - turn_started
                session.background.wait(10)
                tokens = session.budget.used
                cached = session.budget.cached_prompt_tokens
                record.step_ids = [s["step_id"] for s in session.ledger.steps()]
                project = ws.focused_project()
                if project is not None and project.report_path.is_file():
                    record.report = project.report_path.read_text(encoding="utf-8")
            finally:
                session.close()
        except Exception as exc:  # one case failing is a result, not a crash
            error = f"{type(exc).__name__}: {exc}"
        finally:
            ws.close()
        record.data_changed = _data_fingerprint(root) != before
    score = score_case(case.expect, record) if error is None else Score(False, False, False)
    return CaseResult(
        case=case.id,
        kind=case.kind,
        repeat=repeat,
        correct=score.correct,
        evidence=score.evidence,
        behaviour=score.behaviour,
        tool_errors=record.tool_errors,
        iterations=iterations,
        tokens=tokens,
        tokens_outside_cache=None if cached is None else tokens - cached,
        seconds=round(time.monotonic() - started, 2),
        agent_seconds=round(in_agent, 2),
        finish=record.finish_reasons,
        problems=score.problems,
        error=error,
    )


def _run_turn(session: AgentSession, message: str, record: RunRecord) -> int:
    """One turn; what it said, ran and asked goes into ``record``. Its iterations."""
    from lantide.agent.events import AssistantMessage, QuestionAsked, ToolReturned, TurnFinished

    iterations = 0
    for event in session.run_turn(message):
        if isinstance(event, AssistantMessage) and not event.partial and event.text.strip():
            record.answer = event.text  # the last words of the turn are its answer
        elif isinstance(event, ToolReturned):
            if not event.ok or "error" in event.result:
                record.tool_errors += 1
            elif isinstance(step_id := event.result.get("step_id"), str):
                preview = event.result.get("preview")
                rows = preview.get("rows") if isinstance(preview, dict) else preview
                rows = rows or event.result.get("rows") or []
                row_count = event.result.get("row_count")
                record.results.append(
                    {
                        "step_id": step_id,
                        "rows": rows if isinstance(rows, list) else [],
                        "row_count": row_count if isinstance(row_count, int) else None,
                    }
                )
        elif isinstance(event, QuestionAsked):
            record.questions.append(event.question)
        elif isinstance(event, TurnFinished):
            iterations = event.iterations
            record.finish_reasons.append(event.reason)
    return iterations


def run_set(
    qs: QuestionSet,
    models: ModelFactory,
    *,
    repeat: int = 1,
    settings: Settings | None = None,
    cases: list[str] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    out = []
    with tempfile.TemporaryDirectory(prefix="lantide-eval-template-") as tmp:
        template = None if qs.workspace_source() else sample_template(Path(tmp))
        for n in range(1, repeat + 1):
            for case in qs.cases:
                if cases and case.id not in cases:
                    continue
                result = run_case(qs, case, models, repeat=n, settings=settings, template=template)
                out.append(result)
                if on_result is not None:
                    on_result(result)
    return out
