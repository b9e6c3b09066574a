"""What a model *stated* in its answer or Report, as the scorer reads it: the rows of a
grouped result, whether a refusal names the rule, and how many candidate values it offered.

The scorer judges what the analyst would read, never what a tool handed the model: a
model that received the right table and wrote a wrong one is wrong.

- **Stated rows.** The text is parsed as Markdown (the Plans' and Reports' own dialect,
  :func:`lantide.docs.markdown_map.markdown_parser`); each row of a Markdown table and
  each line of a paragraph, list item or heading is a *unit*. An expected row is stated
  when one unit names its label (case-insensitive, as a whole word; a NULL label as
  "null", "none", "missing", "unknown", "no category" ...) and its numbers come right
  after the label (before the next expected label) or right before it. A stated
  Markdown table that holds expected rows may hold no other rows but a total.
- **Refusal naming the rule.** The query rules refuse every write: the data is
  read-only. An answer refuses by naming that rule ("read-only", "only read / SELECT",
  "writes are not allowed / refused"); "Done." or "I can't do that." does not.
- **Candidates.** A number of the answer (outside ``[[QUERY_STEP]]`` lines and step
  citations; a year on its own left out) that matches no expected value but is within a
  factor of ten of one could be read as the answer. More than :data:`MAX_CANDIDATES` of
  them is a list of guesses, not an answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lantide.evaluation.question_set import ExpectedTable, ExpectedValue

# 1,204,331.50 · 1 204 331 · -3.5 · 12% · $1.2 (currency signs are left before the match)
NUMBER = re.compile(
    r"(?<![\w.])[-−]?\d{1,3}(?:[,\u00a0\u202f ]\d{3})+(?:\.\d+)?%?"
    r"|(?<![\w.])[-−]?\d+(?:\.\d+)?%?"
)
MAX_CANDIDATES = 5
_STEP_LINE = re.compile(r"^.*\[\[QUERY_STEP\]\].*$", re.M)
_CITATION = re.compile(r"\[\^s:[^\]]*\]")
_YEAR = re.compile(r"(?:19|20)\d\d")
_NULL_LABEL = re.compile(
    r"(?<!\w)(?:null|none|missing|unknown|blank|empty|n/a|not set|unassigned|"
    r"uncategori[sz]ed|no [a-z]+|without (?:an? )?[a-z]+)(?!\w)",
    re.I,
)
_EMPTY_CELL = re.compile(r"[\s\-–—]*")
_TOTAL = re.compile(r"^\W*(?:total|all|sum|overall|grand total)\b", re.I)
_REFUSAL_RULE = re.compile(
    r"read[- ]?only"
    r"|\bonly (?:run |allowed to run |able to run |runs? )?"
    r"(?:read|select|reading|queries that read)"
    r"|\b(?:writes?|writing|changes?|modifications?|deletions?|deleting|dropping|updates?|"
    r"exports?|copy(?:ing)?)\b[^.\n]{0,60}\b(?:not allowed|not permitted|refused|blocked|"
    r"forbidden|disallowed|rejected)",
    re.I,
)


@dataclass(frozen=True)
class Written:
    """One number as written: where it is, its value, and its decimals."""

    start: int
    end: int
    raw: str
    value: float
    decimals: int
    percent: bool

    def values(self) -> list[float]:
        """The value, and its share for a percentage ("12.5%" is 12.5 and 0.125)."""
        return [self.value, self.value / 100] if self.percent else [self.value]

    @property
    def bare_year(self) -> bool:
        return bool(_YEAR.fullmatch(self.raw))  # "1,965" is written as a quantity


def written_numbers(text: str) -> list[Written]:
    out = []
    for match in NUMBER.finditer(text or ""):
        raw = match.group(0).replace("−", "-")
        digits = re.sub(r"[,\u00a0\u202f %]", "", raw)
        try:
            value = float(digits)
        except ValueError:
            continue
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        out.append(Written(match.start(), match.end(), raw, value, decimals, raw.endswith("%")))
    return out


def same_number(written: Written, gold: float) -> bool:
    """Whether a written number shows ``gold``, rounded to the decimals written."""
    units = [(written.value, 1.0)] + ([(written.value / 100, 0.01)] if written.percent else [])
    for value, unit in units:
        allowed = max(0.5 * 10**-written.decimals * unit, 1e-6 * max(1.0, abs(gold)))
        if abs(value - gold) <= allowed:
            return True
    return False


# -- units of stated text


@dataclass(frozen=True)
class Unit:
    text: str
    table: int | None = None  # which Markdown table body the row belongs to


def units(text: str) -> list[Unit]:
    """Each table body row and each line of other inline text, citations left out."""
    from lantide.docs.markdown_map import markdown_parser

    text = _STEP_LINE.sub("", text or "")
    out: list[Unit] = []
    tables, table, in_body = 0, None, False
    cells: list[str] = []
    for token in markdown_parser().parse(text):
        if token.type == "table_open":
            tables += 1
            table = tables
        elif token.type == "table_close":
            table = None
        elif token.type == "tbody_open":
            in_body = True
        elif token.type == "tbody_close":
            in_body = False
        elif token.type == "tr_open":
            cells = []
        elif token.type == "tr_close" and table is not None and in_body:
            out.append(Unit(" | ".join(cells), table))
        elif token.type == "inline":
            plain = _plain(token)
            if table is not None:  # an empty or dash-only cell is a NULL, as tables show it
                cell = plain.replace("\n", " ").strip()
                cells.append("null" if _EMPTY_CELL.fullmatch(cell) else cell)
            else:
                out.extend(Unit(line) for line in plain.splitlines() if line.strip())
    return out


def _plain(token: Any) -> str:
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return _CITATION.sub("", "".join(parts))


# -- stated tables


def _label_pattern(cell: Any) -> re.Pattern[str]:
    if cell is None:
        return _NULL_LABEL
    return re.compile(rf"(?<!\w){re.escape(str(cell).strip())}(?!\w)", re.I)


def _is_number(cell: Any) -> bool:
    return isinstance(cell, (int, float)) and not isinstance(cell, bool)


def _numbers_between(text: str, gold: list[float]) -> list[Written]:
    years_ok = any(_YEAR.fullmatch(f"{g:.0f}") for g in gold)
    return [n for n in written_numbers(text) if years_ok or not n.bare_year]


def _row_in_unit(row: list[Any], unit: str, others: list[re.Pattern[str]]) -> bool:
    labels = [c for c in row if not _is_number(c)]
    gold = [float(c) for c in row if _is_number(c)]
    if not labels:  # a row of numbers only: all of them in the unit
        found = written_numbers(unit)
        return all(any(same_number(n, g) for n in found) for g in gold)
    first, rest = _label_pattern(labels[0]), [_label_pattern(c) for c in labels[1:]]
    if not all(p.search(unit) for p in rest):
        return False
    bounds = sorted({m.start() for p in others for m in p.finditer(unit)} | {len(unit)})
    for match in first.finditer(unit):
        after_end = next((b for b in bounds if b >= match.end()), len(unit))
        before_start = max((b for b in bounds if b < match.start()), default=0)
        after = _numbers_between(unit[match.end() : after_end], gold)[: len(gold)]
        before = _numbers_between(unit[before_start : match.start()], gold)[-len(gold) :]
        for near in (after, before):
            if len(near) == len(gold) and all(map(same_number, near, gold)):
                return True
    return False


def table_problems(expected: ExpectedTable, text: str) -> list[str]:
    """What keeps ``text`` from stating the expected table (empty when it states it)."""
    rows = [list(r) for r in expected["rows"]]
    stated = units(text)
    labels = [_label_pattern(r[0]) for r in rows if r and not _is_number(r[0])]
    missing = []
    for i, row in enumerate(rows):
        others = [p for j, p in enumerate(labels) if j != i] if len(labels) == len(rows) else []
        if not any(_row_in_unit(row, u.text, others) for u in stated):
            missing.append(" ".join("NULL" if c is None else str(c) for c in row))
    problems = [f"the stated table lacks: {'; '.join(missing)}"] if missing else []
    extra = list(_extra_rows(stated, labels))
    if extra:
        problems.append(f"the stated table has rows the expected one has not: {'; '.join(extra)}")
    return problems


def _extra_rows(stated: list[Unit], labels: list[re.Pattern[str]]) -> Iterator[str]:
    """Rows of a stated Markdown table holding expected rows that are none of them."""
    tables = {u.table for u in stated if u.table is not None}
    for table in sorted(t for t in tables if t is not None):
        body = [u.text for u in stated if u.table == table]
        if not any(p.search(r) for r in body for p in labels):
            continue  # another table of the answer
        for row in body:
            if not any(p.search(row) for p in labels) and not _TOTAL.search(row):
                yield row


# -- refusals and candidates


def names_the_rule(answer: str) -> bool:
    """Whether the answer refuses by naming the read-only rule (module docstring)."""
    return bool(_REFUSAL_RULE.search(answer or ""))


def candidates(answer: str, values: list[ExpectedValue], matches: Any) -> list[float]:
    """Numbers of the answer that could be read as an expected value and are none."""
    text = _CITATION.sub("", _STEP_LINE.sub("", answer or ""))
    targets = [abs(float(v["value"])) for v in values]
    out: list[float] = []
    for written in written_numbers(text):
        if written.bare_year or any(matches(x, v) for x in written.values() for v in values):
            continue
        near = any(t and 0.1 <= abs(x) / t <= 10 for x in written.values() for t in targets)
        if near and written.value not in out:
            out.append(written.value)
    return out
