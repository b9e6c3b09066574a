"""Which cell of a step's result a Report number is (issue 26, docs/evidence.md).

A number matches a **cell**: a value of one of the step's result columns, in one row of
its preview (``result_cells`` of the ledger step, :mod:`lantide.agent.evidence`), that
rounds to the number as written (its decimals; ``%`` read as a fraction or as a
percentage; divided by its scale word; without a written sign the sign is not compared).

- **The word after the number names the column.** "4,962 customers": when one of the (at
  most two) words after the number is a word of a column's name (``customers``,
  ``n_customers``, ``customer_count``; singular or plural), only cells of those columns can
  match. A word that names no column narrows nothing.
- **The row count** matches only a number that counts the step's rows: not a percentage,
  followed by ``rows``/``records``/``groups`` or by the name of a column that holds no
  numbers (``3 segments`` of a per-segment table). "Churn was 3%" never matches a 3-row
  table.
- Every matching cell is listed (``{"step", "row", "column"}``, rows 1-based in the
  result's order); more than one is said (``several_cells``).
- **Older ledger lines** (before cells were kept) have only ``result_values``, the bag of
  distinct numbers with the row count mixed in: they match as before, the cell unknown
  (``{"step", "row": null, "column": null}``), except that a value equal to the row count
  counts only under the row-count rule above.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

from lantide.agent.check_gate import unresolved_checks
from lantide.agent.evidence import as_number, step_kind
from lantide.docs.citations import ReportNumber

if TYPE_CHECKING:
    from lantide.agent.ledger_types import LedgerStep, Waiver
    from lantide.query.checks.rules import Check

ROW_WORDS = frozenset({"row", "record", "group", "result", "line", "entry"})
_WORD_SPLIT = re.compile(r"[^A-Za-z]+|(?<=[a-z])(?=[A-Z])")
MAX_CELLS_LISTED = 10


class Cell(TypedDict):
    """A cell a Report number matched: its step, row (1-based) and column; both None for an
    older line that kept no cells; or, in place of them, the step's row count."""

    step: str
    row: NotRequired[int | None]
    column: NotRequired[str | None]
    row_count: NotRequired[int]


def singular(word: str) -> str:
    """``customers`` -> ``customer``, ``statuses`` -> ``status``, ``categories`` ->
    ``category``: enough English to compare a word of the text with a column's name."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("sses", "shes", "ches", "xes", "uses")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def name_words(name: str) -> set[str]:
    """The words of a column name, singular: ``n_Customers`` -> {"n", "customer"}."""
    return {singular(w) for w in _WORD_SPLIT.split(name) if w}


@dataclass
class IndexedStep:
    step: LedgerStep
    kind: str
    values: list[float]  # sorted values of the cells (for bisect)
    cells: list[tuple[int | None, int | None]]  # (row, column index) of each value
    columns: list[str]
    column_words: list[set[str]]
    key_words: set[str]  # words of the columns that hold no numbers
    row_count: float | None
    legacy: bool  # an older line: values without their cells
    failed: list[Check] = field(default_factory=list)  # unresolved error checks
    step_id: str = ""

    def __post_init__(self) -> None:
        self.step_id = str(self.step["step_id"])

    @property
    def waivers(self) -> list[Waiver]:
        return [w for w in self.step.get("waivers") or [] if isinstance(w, dict)]


def index_step(step: LedgerStep) -> IndexedStep:
    row_count = as_number(step.get("row_count"))
    stored = step.get("result_cells")
    pairs: list[tuple[float, int | None, int | None]] = []
    columns: list[str] = []
    key_words: set[str] = set()
    legacy = not isinstance(stored, dict)
    if isinstance(stored, dict):
        # a hand-edited line may hold anything: what is not a list of names or rows is none
        names, stored_rows = stored.get("columns"), stored.get("rows")
        columns = [str(c) for c in names] if isinstance(names, list) else []
        rows = (
            [r for r in stored_rows if isinstance(r, list)] if isinstance(stored_rows, list) else []
        )
        numeric = [False] * len(columns)
        for r, row in enumerate(rows):
            for c, cell in enumerate(row):
                number = as_number(cell)
                if number is None:
                    continue
                pairs.append((number, r, c))
                if c < len(numeric):
                    numeric[c] = True
        for c, name in enumerate(columns):
            if not numeric[c] and rows:
                key_words |= name_words(name)
    else:
        values = step.get("result_values")
        for value in values if isinstance(values, list) else []:
            number = as_number(value)
            if number is not None:
                pairs.append((number, None, None))
    pairs.sort(key=lambda p: p[0])
    return IndexedStep(
        step,
        step_kind(step),
        [p[0] for p in pairs],
        [(p[1], p[2]) for p in pairs],
        columns,
        [name_words(c) for c in columns],
        key_words,
        row_count,
        legacy,
        unresolved_checks(step),
    )


def _ranges(number: ReportNumber) -> list[tuple[float, float]]:
    """The stored values that are shown as ``number`` (half a unit of its last digit)."""
    # float noise is relative and far below a digit
    tolerance = 0.5 * 10**-number.decimals + 1e-12 * max(1.0, abs(number.value))
    targets = [number.value] if number.signed else [abs(number.value), -abs(number.value)]
    factors = [number.scale] + ([number.scale / 100] if number.percent else [])
    out = []
    for target in targets:
        for factor in factors:  # the value as stored = shown × factor
            low, high = sorted(((target - tolerance) * factor, (target + tolerance) * factor))
            out.append((low, high))
    return out


def counts_rows(number: ReportNumber, step: IndexedStep) -> bool:
    """Whether the text counts the step's rows: "3 segments", "12 rows"."""
    if number.percent or number.decimals or not number.nouns:
        return False
    words = {singular(n) for n in number.nouns[:1]}
    return bool(words & (ROW_WORDS | step.key_words))


def named_columns(number: ReportNumber, step: IndexedStep) -> set[int]:
    """The columns the words after the number name (none: every column may match)."""
    if not number.nouns:
        return set()
    words = {singular(n) for n in number.nouns}
    return {c for c, names in enumerate(step.column_words) if words & names}


def matched_cells(number: ReportNumber, step: IndexedStep) -> list[Cell]:
    """Every cell of ``step`` shown as ``number`` (see the module docstring)."""
    found: list[tuple[float, int | None, int | None]] = []
    for low, high in _ranges(number):
        i = bisect.bisect_left(step.values, low)
        while i < len(step.values) and step.values[i] <= high:
            found.append((step.values[i], *step.cells[i]))
            i += 1
    rows_counted = counts_rows(number, step)
    if step.legacy:  # the row count was one of the values: only the row-count rule keeps it
        if step.row_count is not None and not rows_counted:
            found = [f for f in found if f[0] != step.row_count]
    else:
        wanted = named_columns(number, step)
        if wanted:
            found = [f for f in found if f[2] in wanted]
    out: list[Cell] = []
    for row, column in dict.fromkeys((f[1], f[2]) for f in found):
        name = None
        if column is not None:
            name = step.columns[column] if column < len(step.columns) else f"column {column + 1}"
        out.append({"step": step.step_id, "row": None if row is None else row + 1, "column": name})
    count = step.row_count
    if rows_counted and count is not None and not step.legacy and _shown(number, count):
        out.append({"step": step.step_id, "row_count": int(count)})
    return out


def _shown(number: ReportNumber, value: float) -> bool:
    return any(low <= value <= high for low, high in _ranges(number))


def describe_cell(cell: Cell) -> str:
    if "row_count" in cell:
        return f"{cell['step']}: its row count"
    if cell.get("row") is None:
        return f"{cell['step']}: a value (cell not recorded)"
    return f"{cell['step']}: row {cell['row']}, column {cell['column']}"
