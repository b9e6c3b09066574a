"""The result checks that need only the result's facts (and the statement's divisions).

Each check is ``{"code", "severity", "message", "evidence"}``; ``severity`` is ``error``
(the number is not a finding until it is resolved), ``warning`` (look before trusting it)
or ``info``.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from lantide.query.checks.result_stats import ResultFacts
    from lantide.query.checks.statement import Division
    from lantide.query.results import Column


_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(name: str) -> list[str]:
    """Words of an identifier: ``churnRate`` and ``churn_rate`` both give churn, rate."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name or "")
    return _TOKEN.findall(spaced.lower())


class Check(TypedDict):
    """One check of a result (DESIGN.md section 6)."""

    code: str
    severity: str  # error / warning / info
    message: str
    evidence: dict[str, object]  # what the check saw, as JSON; its keys depend on the code


# Column names that promise a percentage, or a share/rate in [0, 1] (or in percent).
PERCENT_WORDS = {"pct", "percent", "percentage", "perc"}
SHARE_WORDS = {"share", "fraction", "proportion", "rate", "ratio"}
# ... unless they name a change or a conversion, which may be negative or large.
NOT_BOUNDED_WORDS = {
    "growth",
    "change",
    "delta",
    "diff",
    "difference",
    "exchange",
    "fx",
    "yoy",
    "mom",
    "wow",
    "lift",
    "uplift",
    "increase",
    "decrease",
    "odds",
    "hazard",
    "hourly",
    "daily",
    "monthly",
    "day",
    "hour",
    "per",
}
MEDIAN_FACTOR = 1_000
DRIFT_FACTOR = 2.0  # a re-run whose row count moved more than this factor (either way)
DRIFT_MIN_ROWS = 10  # ... and by at least this many rows


def ratio_bound(name: str) -> float | None:
    """The upper bound a column's name promises (100 or 1), or None for other names."""
    words = set(tokens(name))
    if words & NOT_BOUNDED_WORDS:
        return None
    if words & PERCENT_WORDS:
        return 100.0
    if words & SHARE_WORDS:
        return 1.0
    return None


def empty_result(facts: ResultFacts) -> list[Check]:
    if facts.row_count:
        return []
    return [
        {
            "code": "EMPTY_RESULT",
            "severity": "warning",
            "message": "the result has no rows",
            "evidence": {"row_count": 0},
        }
    ]


def all_null_columns(facts: ResultFacts) -> list[Check]:
    if not facts.row_count or not facts.complete:
        return []
    empty = [c.name for c in facts.columns if c.non_null == 0]
    if not empty:
        return []
    return [
        {
            "code": "ALL_NULL_COLUMN",
            "severity": "warning",
            "message": f"{_names(empty)} {'is' if len(empty) == 1 else 'are'} NULL in every "
            f"one of the {facts.row_count:,} rows",
            "evidence": {"columns": empty, "row_count": facts.row_count},
        }
    ]


def nan_or_inf(facts: ResultFacts) -> list[Check]:
    found = {c.name: c.nonfinite for c in facts.columns if c.nonfinite}
    if not found:
        return []
    where = "" if facts.complete else f" (in the first {facts.rows_seen:,} rows)"
    return [
        {
            "code": "NAN_OR_INF",
            "severity": "warning",
            "message": f"{_names(list(found))} hold NaN or infinite values{where}: "
            + ", ".join(f"{name} {n:,}" for name, n in found.items()),
            "evidence": {"columns": found, "rows_seen": facts.rows_seen},
        }
    ]


def division_by_zero(facts: ResultFacts, divisions: list[Division]) -> list[Check]:
    out: list[Check] = []
    for div in divisions:
        if div.column >= len(facts.columns):
            continue
        col = facts.columns[div.column]
        bad = (facts.rows_seen - col.non_null) + col.nonfinite
        evidence: dict[str, object] = {
            "column": col.name,
            "division": div.text,
            "divisor": div.divisor,
        }
        if bad:
            evidence["null_or_nonfinite_rows"] = bad
            out.append(
                {
                    "code": "DIVISION_BY_ZERO_RISK",
                    "severity": "warning",
                    "message": f"{col.name} divides by {div.divisor}, which is not guarded; "
                    f"{bad:,} of its {facts.rows_seen:,} values are NULL, NaN or "
                    f"infinite",
                    "evidence": evidence,
                }
            )
        else:
            out.append(
                {
                    "code": "DIVISION_BY_ZERO_RISK",
                    "severity": "info",
                    "message": f"{col.name} divides by {div.divisor}, which can be 0 or NULL "
                    f"and is not guarded (no value is affected in this result)",
                    "evidence": evidence,
                }
            )
    return out


def ratio_columns(columns: list[Column]) -> set[int]:
    """Positions of numeric columns named like a percent, share or rate."""
    from lantide.query.duckdb_types import is_numeric

    return {
        i
        for i, c in enumerate(columns)
        if is_numeric(c["type"]) and ratio_bound(c["name"]) is not None
    }


def implausible_ratios(facts: ResultFacts, fractions: set[int] | None = None) -> list[Check]:
    """``fractions``: the positions the statement computes as a ratio without a factor of
    100 (a share or rate there is a fraction: over 1 is not "a rate in percent")."""
    out: list[Check] = []
    for position, col in enumerate(facts.columns):
        bound = ratio_bound(col.name)
        if bound is None or col.minimum is None or col.maximum is None:
            continue
        evidence: dict[str, object] = {
            "column": col.name,
            "min": col.minimum,
            "max": col.maximum,
            "median": col.median,
            "expected": [0, bound],
        }
        outside = col.minimum < 0 or col.maximum > bound
        computed = bound == 1.0 and position in (fractions or set())
        if outside and bound == 1.0 and not computed and col.minimum >= 0 and col.maximum <= 100:
            outside = False  # a share written in percent: only [0, 100] is a hard limit
        if outside:
            how = (
                ", and it is computed as a ratio with no factor of 100 (so not in percent)"
                if computed and col.maximum <= 100
                else ""
            )
            if computed:
                evidence["computed_as_ratio"] = True
            out.append(
                {
                    "code": "IMPLAUSIBLE_RATIO",
                    "severity": "warning",
                    "message": f"{col.name} is named like a "
                    f"{'percentage' if bound == 100 else 'share or rate'} but "
                    f"ranges from {_num(col.minimum)} to {_num(col.maximum)}, "
                    f"outside [0, {bound:g}]{how}",
                    "evidence": evidence,
                }
            )
            continue
        if col.median is not None and col.median > 0 and col.maximum > MEDIAN_FACTOR * col.median:
            out.append(
                {
                    "code": "IMPLAUSIBLE_RATIO",
                    "severity": "warning",
                    "message": f"{col.name} reaches {_num(col.maximum)}, more than "
                    f"{MEDIAN_FACTOR:,}x its median {_num(col.median)}",
                    "evidence": evidence,
                }
            )
    return out


def row_count_drift(previous: int | None, now: int, factor: float = DRIFT_FACTOR) -> list[Check]:
    if previous is None:
        return []
    low, high = sorted((previous, now))
    if high - low < DRIFT_MIN_ROWS or high <= factor * max(low, 1) and low > 0:
        return []
    return [
        {
            "code": "ROW_COUNT_DRIFT",
            "severity": "warning",
            "message": f"this step returned {previous:,} rows last time and {now:,} now "
            f"(more than {factor:g}x apart)",
            "evidence": {"previous_row_count": previous, "row_count": now, "factor": factor},
        }
    ]


def _names(names: list[str]) -> str:
    return ", ".join(names)


def _num(value: float) -> str:
    if value is None or not math.isfinite(value):
        return str(value)
    return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
