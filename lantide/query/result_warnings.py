"""The warnings on a query result, each with a code.

``result["warnings"]`` keeps the sentences (the agent, the ledger and the command line read
them; DESIGN.md's step shape), and ``result["warning_codes"]`` the code of each, in the
same order, so a caller that treats one kind of warning differently (the SQL tab's grid
leaves out the preview notes when it pages the whole cached table) matches the code,
never the wording. A warning that came from a hint has the hint's code
(:mod:`lantide.query.hints`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lantide.query.result_types import QueryResult

PREVIEW_CUT = "PREVIEW_CUT"  # the preview holds the first rows of the result only
PREVIEW_CELLS_CUT = "PREVIEW_CELLS_CUT"  # long preview cells were cut at the cell cap
READING_NOTE = "READING_NOTE"  # a data file read was read with a note (skipped lines, ...)
PROJECT_UNREADABLE = "PROJECT_UNREADABLE"  # the focused project's file could not be read
# the analyst ran without a purpose while executing: an exploratory step (qem.check_purpose)
NO_PURPOSE = "NO_PURPOSE"


@dataclass(frozen=True)
class ResultWarning:
    code: str
    message: str


def preview_cut(shown: int, total: int) -> ResultWarning:
    return ResultWarning(PREVIEW_CUT, f"the preview shows the first {shown} of {total:,} rows")


def cells_cut(cells: int, cell_chars: int) -> ResultWarning:
    return ResultWarning(
        PREVIEW_CELLS_CUT,
        f"{cells} preview cell(s) were cut at "
        f"{cell_chars:,} characters; the whole values "
        "stay in DuckDB",
    )


def no_purpose(max_chars: int) -> ResultWarning:
    return ResultWarning(
        NO_PURPOSE,
        "run without a purpose while the project is executing: an exploratory step, not "
        f"formal evidence; give it a purpose (at most {max_chars} characters) to count",
    )


def add(result: QueryResult, warning: ResultWarning) -> None:
    """Append ``warning`` to a result (its sentence also reaches the ledger step, which
    shares the list)."""
    result.setdefault("warnings", []).append(warning.message)
    result.setdefault("warning_codes", []).append(warning.code)


def coded(result: QueryResult) -> list[ResultWarning]:
    """``result``'s warnings with their codes (code "" for a warning without one, e.g. a
    ledger step written before the codes)."""
    messages = [str(w) for w in result.get("warnings") or []]
    codes = list(result.get("warning_codes") or [])
    codes += [""] * (len(messages) - len(codes))
    # codes beyond the messages (a hand-edited step) belong to nothing: dropped
    return [
        ResultWarning(str(code), message) for code, message in zip(codes, messages, strict=False)
    ]
