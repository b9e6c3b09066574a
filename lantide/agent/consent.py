"""Analysis consent: statistical inference needs the analyst's yes.

Descriptive SQL (counts, sums, averages, quantiles, standard deviations) is exploration and
always allowed. Inference and modelling (correlations, covariances, regressions) is
*statistical analysis*: allowed only in the executing state, for the kinds of analysis the
analyst said yes to, after ``activate_analysis``. The SQL is inspected by parsing it
(sqlglot), not by matching text, so a column named ``corr_rate`` is not mistaken for
``corr()``. The gate stands wherever SQL runs for an agent: ``run_query``, ``run_sql_tab``,
every tab a Source Run recomputes, a step's SQL run again by ``read_step``, and every
tool an outside agent calls over MCP (an outside agent cannot be asked: it is refused, and
told what the analyst does in the app).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lantide.agent.conversation import Conversation
    from lantide.agent.tools.registry import ToolError
    from lantide.workspace.model import Project

# The kinds of analysis the consent question names, and the functions each covers.
ANALYSES: dict[str, tuple[str, ...]] = {
    "correlation": ("corr",),
    "covariance": ("covar_pop", "covar_samp"),
    "regression": (
        "regr_slope",
        "regr_intercept",
        "regr_r2",
        "regr_count",
        "regr_avgx",
        "regr_avgy",
        "regr_sxx",
        "regr_syy",
        "regr_sxy",
    ),
}
ANALYSIS_WORDS = {
    "correlation": "a correlation",
    "covariance": "a covariance",
    "regression": "a regression",
}
STATISTICAL_FUNCTIONS = frozenset(f for names in ANALYSES.values() for f in names)
KIND_OF = {f: kind for kind, names in ANALYSES.items() for f in names}


def statistical_functions(sql: str) -> list[str]:
    """The statistical-analysis functions ``sql`` calls (lower case, sorted)."""
    import sqlglot
    from sqlglot import exp

    from lantide.query.guard import too_deep

    try:
        trees = sqlglot.parse(sql, dialect="duckdb")
    except sqlglot.errors.SqlglotError:  # a parse or tokenizer error (an open quote)
        return []  # the QEM reports the syntax error with its position
    except RecursionError:  # never "no statistics" for a statement nobody could read
        raise too_deep("more levels of expressions than the SQL reader follows") from None
    found = set()
    for tree in trees:
        if tree is None:
            continue
        for func in tree.find_all(exp.Func):
            name = (func.name if isinstance(func, exp.Anonymous) else func.sql_name()).lower()
            if name in STATISTICAL_FUNCTIONS:
                found.add(name)
    return sorted(found)


def _names(functions: list[str]) -> str:
    return ", ".join(f"{n}()" for n in functions)


def consent_refusal(
    sql: str, state: str, activation: Mapping[str, object] | None, *, outside: bool = False
) -> ToolError | None:
    """The tool result refusing ``sql``, or None when it may run. ``activation``: the
    approval in force (:func:`analysis_state`); ``outside``: an outside agent (MCP) runs it."""
    used = statistical_functions(sql)
    if not used:
        return None
    names = _names(used)
    if outside:
        return {
            "error": "STATISTICS_IN_THE_APP_ONLY",
            "message": f"statistical analysis ({names}) is not run for outside agents: it "
            "needs the analyst's consent, which is given in Lantide",
            "hint": "Keep to descriptive SQL. Tell the analyst: to run this analysis, open "
            "the project in Lantide and ask its agent in the chat panel; Lantide asks "
            "for consent there (a Yes button). The analyst may also run the SQL in a SQL "
            "tab themselves.",
        }
    if state != "executing":
        return {
            "error": "ANALYSIS_NOT_IN_THIS_STATE",
            "message": f"statistical analysis ({names}) does not run while the project is "
            f"{state.replace('_', ' ')}",
            "hint": "Keep to descriptive queries now. Statistical analysis belongs to "
            "execution: once the Plan is agreed and the analyst sets the project to "
            "executing, ask for consent with ask_user.",
        }
    if activation is None:
        return {
            "error": "CONSENT_REQUIRED",
            "message": f"statistical analysis ({names}) needs the analyst's consent",
            "hint": 'Ask with ask_user, kind "analysis_consent" and analysis naming the kinds '
            f"({', '.join(sorted({KIND_OF[f] for f in used}))}); Lantide asks the question. "
            "After a yes, call activate_analysis(reason), then run the query again.",
        }
    kinds = activation.get("analysis")  # a list: analysis_state checks it
    allowed = set(kinds) if isinstance(kinds, list) else set()
    missing = sorted({KIND_OF[f] for f in used} - allowed)
    if missing:
        return {
            "error": "CONSENT_NOT_FOR_THIS_ANALYSIS",
            "message": f"the analyst consented to {', '.join(sorted(allowed)) or 'nothing'}, "
            f"not to {', '.join(missing)} ({names})",
            "hint": "Keep to what was approved, or ask for consent to "
            f"{', '.join(missing)} with ask_user (kind analysis_consent).",
        }
    return None


# -- the question ----------------------------------------------------------------------
#
# The consent question is Lantide's own text (prompts/consent/question.md.j2), naming the
# project and the kinds of analysis; its buttons are Lantide's too. The model chooses the
# kinds and gives its reason, shown below the question as the agent's words.

CONSENT_KIND = "analysis_consent"
REASON_MAX_CHARS = 300


def consent_question(project: Project, analyses: list[str], reason: str) -> tuple[str, list[str]]:
    """(the question's text, its choices) for consent to ``analyses`` in ``project``."""
    from lantide.templates import render_prompt

    kinds = [k for k in ANALYSES if k in analyses]
    reason = " ".join(str(reason or "").split())
    if len(reason) > REASON_MAX_CHARS:
        reason = reason[: REASON_MAX_CHARS - 1] + "…"
    question = render_prompt(
        "consent/question.md.j2",
        project=project.name,
        analyses=[ANALYSIS_WORDS[k] for k in kinds],
        functions=[f"{f}()" for k in kinds for f in ANALYSES[k]],
        reason=reason,
    ).strip()
    choices = [
        line.strip() for line in render_prompt("consent/choices.md.j2").splitlines() if line.strip()
    ]
    return question, choices


# -- who said yes to what ---------------------------------------------------------------
#
# Consent is bound to its question: only the answer to Lantide's consent question, asked in
# this conversation, judged a yes (consent_answers), counts, and only for the kinds of
# analysis it named. It is usable in the turn it was given (it expires with that turn) and
# by one ``activate_analysis`` (then it is spent). The analysis then stays active in this
# conversation for that project until the project's status changes, by anyone: the
# activation records the project's last lifecycle move (``status_seq``), and any later move
# in project.json's history ends it.


def answer_fields(question: Mapping[str, object] | None, answer: str) -> dict[str, object]:
    """What a ``question_answered`` event records beyond the question and the answer."""
    if not question or question.get("question_kind") != CONSENT_KIND:
        return {}
    from lantide.agent.consent_answers import QUALIFIED, judge_choice

    choices = question.get("choices")  # ask_user stores a list of texts
    judged = judge_choice(answer, choices if isinstance(choices, list) else None)
    out: dict[str, object] = {
        "question_kind": CONSENT_KIND,
        "consent": judged.verdict,
        "analysis": question.get("analysis"),
        "project": question.get("project"),
    }
    if judged.verdict == QUALIFIED:
        out["qualified_by"] = judged.kind
        out["marker"] = judged.marker
    return out


def status_seq(project: Project | None) -> int | None:
    """The number of the project's last lifecycle move, read from its file now."""
    if project is None:
        return None
    from lantide.errors import LantideError
    from lantide.workspace.lifecycle import last_move
    from lantide.workspace.model import Project as ProjectType

    try:
        fresh = ProjectType.load(project.workspace_root, project.dirname)
    except LantideError:
        return None
    return last_move(fresh.data.get("history"))


def analysis_state(conversation: Conversation, project: Project | None) -> dict[str, object] | None:
    """The activation in force for ``project`` (its event), or None."""
    if project is None:
        return None
    active = None
    for event in conversation.events(("analysis_activated", "status_changed")):
        if event.get("project") != project.dirname:
            continue
        # a new phase of the project needs a new yes
        active = event if event.get("kind") == "analysis_activated" else None
    if active is None or not isinstance(active.get("analysis"), list):
        return None  # an activation written before consent named its kinds: ask again
    seq = status_seq(project)
    if seq is None or active.get("status_seq") != seq:
        return None  # the status moved since (the app, the command line, the agent)
    return active


def consent_grant(
    conversation: Conversation, turn: int, project: Project | None
) -> tuple[dict[str, object] | None, ToolError | None]:
    """(the consent answer ``activate_analysis`` may use now, None) or (None, the refusal)."""
    hint_ask = (
        'Call ask_user with kind "analysis_consent" and analysis naming the kinds you need '
        "(question: your reason). Lantide asks the analyst its own consent question with "
        "Yes/No buttons. After a yes, call activate_analysis in that same turn."
    )
    if conversation.pending_question() is not None:
        return None, {
            "error": "CONSENT_REQUIRED",
            "message": "a question to the analyst is still open; their answer is not in yet",
            "hint": hint_ask,
        }
    answers = conversation.events(("question_answered",))
    last = answers[-1] if answers else None
    if (
        last is None
        or last.get("question_kind") != CONSENT_KIND
        or not isinstance(last.get("analysis"), list)
    ):
        about = (
            f" (the last answered question was {str(last.get('question'))[:120]!r})" if last else ""
        )
        return None, {
            "error": "CONSENT_REQUIRED",
            "message": f"statistical analysis needs the analyst's yes to Lantide's consent "
            f"question{about}",
            "hint": hint_ask,
        }
    if last.get("project") != getattr(project, "dirname", None):
        return None, {
            "error": "CONSENT_REQUIRED",
            "message": f"the analyst's yes was for the project {last.get('project')!r}",
            "hint": hint_ask,
        }
    if last.get("consent") == "qualified":
        return None, {
            "error": "CONSENT_QUALIFIED",
            "message": f"the analyst's answer {str(last.get('answer'))[:120]!r} is not a plain "
            f"yes: it holds a {last.get('qualified_by')} ({str(last.get('marker'))!r})",
            "hint": "Do not run statistical analysis on it. Keep to what the analyst said "
            "(a restriction: stay within it; a condition or a delay: wait for it), or ask "
            "again with ask_user (kind analysis_consent) so they can click Yes or No.",
        }
    if last.get("consent") != "yes":
        return None, {
            "error": "CONSENT_NOT_GIVEN",
            "message": f"the analyst's answer {str(last.get('answer'))[:120]!r} to "
            "Lantide's consent question is not a yes",
            "hint": "Do not run statistical analysis. Continue descriptively, or ask "
            "again if the analyst's intent is unclear.",
        }
    if last.get("turn") != turn:
        return None, {
            "error": "CONSENT_EXPIRED",
            "message": f"the analyst's yes of turn {last.get('turn')} was for that turn",
            "hint": hint_ask,
        }
    spent = [
        e
        for e in conversation.events(("analysis_activated",))
        if e.get("consent_turn") == last.get("turn")
    ]
    if spent:
        return None, {
            "error": "CONSENT_SPENT",
            "message": "this yes was already used to turn statistical analysis on",
            "hint": hint_ask,
        }
    return last, None
