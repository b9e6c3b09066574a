"""Analysis consent: statistical inference needs the analyst's yes.

Descriptive SQL (counts, sums, averages, quantiles, standard deviations) is exploration and
always allowed. Inference and modelling (correlations, covariances, regressions) is
*statistical analysis*: allowed only in the executing state, after ``ask_user`` got a yes
and ``activate_analysis`` was called. The SQL is inspected by parsing it (sqlglot), not by
matching text, so a column named ``corr_rate`` is not mistaken for ``corr()``.
"""

from __future__ import annotations

from typing import Any

STATISTICAL_FUNCTIONS = frozenset({
    "corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_r2",
    "regr_count", "regr_avgx", "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy",
})


def statistical_functions(sql: str) -> list[str]:
    """The statistical-analysis functions ``sql`` calls (lower case, sorted)."""
    import sqlglot
    from sqlglot import exp

    try:
        trees = sqlglot.parse(sql, dialect="duckdb")
    except sqlglot.errors.SqlglotError:  # a parse or tokenizer error (an open quote)
        return []  # the QEM reports the syntax error with its position
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
        return {"error": "ANALYSIS_NOT_IN_THIS_STATE",
                "message": f"statistical analysis ({names}) does not run while the project is "
                           f"{state.replace('_', ' ')}",
                "hint": "Keep to descriptive queries now. Statistical analysis belongs to "
                        "execution: once the Plan is agreed and the analyst sets the project to "
                        "executing, ask for consent with ask_user."}
    return {"error": "CONSENT_REQUIRED",
            "message": f"statistical analysis ({names}) needs the analyst's consent",
            "hint": "Ask with ask_user (what you want to test or fit, and why; choices Yes / "
                    "No). After a yes, call activate_analysis(reason), then run the query again."}
