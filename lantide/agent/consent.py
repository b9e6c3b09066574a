"""Analysis consent: statistical inference needs the analyst's yes.

Descriptive SQL (counts, sums, averages, quantiles, standard deviations) is exploration and
always allowed. Inference and modelling (correlations, covariances, regressions) is
*statistical analysis*: allowed only in the executing state, after ``ask_user`` got a yes
and ``activate_analysis`` was called. The SQL is inspected by parsing it (sqlglot), not by
matching text, so a column named ``corr_rate`` is not mistaken for ``corr()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lantide.agent.conversation import Conversation

STATISTICAL_FUNCTIONS = frozenset(
    {
        "corr",
        "covar_pop",
        "covar_samp",
        "regr_slope",
        "regr_intercept",
        "regr_r2",
        "regr_count",
        "regr_avgx",
        "regr_avgy",
        "regr_sxx",
        "regr_syy",
        "regr_sxy",
    }
)


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


def consent_refusal(sql: str, state: str, analysis_active: bool) -> dict[str, Any] | None:
    """The tool result refusing ``sql``, or None when it may run."""
    used = statistical_functions(sql)
    if not used or analysis_active and state == "executing":
        return None
    names = ", ".join(f"{n}()" for n in used)
    if state != "executing":
        return {
            "error": "ANALYSIS_NOT_IN_THIS_STATE",
            "message": f"statistical analysis ({names}) does not run while the project is "
            f"{state.replace('_', ' ')}",
            "hint": "Keep to descriptive queries now. Statistical analysis belongs to "
            "execution: once the Plan is agreed and the analyst sets the project to "
            "executing, ask for consent with ask_user.",
        }
    return {
        "error": "CONSENT_REQUIRED",
        "message": f"statistical analysis ({names}) needs the analyst's consent",
        "hint": "Ask with ask_user (what you want to test or fit, and why; choices Yes / "
        "No). After a yes, call activate_analysis(reason), then run the query again.",
    }


# -- who said yes to what ---------------------------------------------------------------
#
# Consent is bound to its question: only the answer to an ``ask_user`` of kind
# ``analysis_consent``, asked in this conversation, judged a yes (consent_answers), counts.
# It is usable in the turn it was given (it expires with that turn) and by one
# ``activate_analysis`` (then it is spent). The analysis then stays active in this
# conversation for that project until the project's status changes, shown in the Context
# Summary, and a new phase needs a new yes.

CONSENT_KIND = "analysis_consent"


def answer_fields(question: dict[str, Any] | None, answer: str) -> dict[str, Any]:
    """What a ``question_answered`` event records beyond the question and the answer."""
    if not question or question.get("question_kind") != CONSENT_KIND:
        return {}
    from lantide.agent.consent_answers import judge_answer

    return {"question_kind": CONSENT_KIND, "consent": judge_answer(answer, question.get("choices"))}


def analysis_state(conversation: Conversation, project: str | None) -> dict[str, Any] | None:
    """The activation in force for ``project`` (its event), or None."""
    active = None
    for event in conversation.events(("analysis_activated", "status_changed")):
        if event.get("kind") == "analysis_activated":
            # events written before consent was bound to a project apply to any project
            if event.get("project") in (None, project):
                active = event
        elif event.get("project") == project:
            active = None  # a new phase of the project needs a new yes
    return active


def consent_grant(
    conversation: Conversation, turn: int
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the consent answer ``activate_analysis`` may use now, None) or (None, the refusal)."""
    hint_ask = (
        'Call ask_user with kind "analysis_consent": say which analysis and why, with '
        'choices such as ["Yes", "No"] in the analyst\'s language, the approval '
        "first. After a yes, call activate_analysis in that same turn."
    )
    if conversation.pending_question() is not None:
        return None, {
            "error": "CONSENT_REQUIRED",
            "message": "a question to the analyst is still open; their answer is not in yet",
            "hint": hint_ask,
        }
    answers = conversation.events(("question_answered",))
    last = answers[-1] if answers else None
    if last is None or last.get("question_kind") != CONSENT_KIND:
        about = (
            f" (the last answered question was {str(last.get('question'))[:120]!r})" if last else ""
        )
        return None, {
            "error": "CONSENT_REQUIRED",
            "message": f"statistical analysis needs the analyst's yes to a consent question{about}",
            "hint": hint_ask,
        }
    if last.get("consent") != "yes":
        return None, {
            "error": "CONSENT_NOT_GIVEN",
            "message": f"the analyst's answer {str(last.get('answer'))[:120]!r} to "
            f"{str(last.get('question'))[:120]!r} is not a yes",
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
