"""What counts as a number of a Report (docs/evidence.md, "What counts as a number").

:func:`numbers_in` reads one run of text (a text token of a paragraph, heading, list item
or table cell, as :func:`lantide.docs.citations.scan_numbers` walks them) and returns its
numbers in order, each with its value as written, how it was rounded (decimals, percent,
scale word), the (at most two) words after it, and whether it could not be read:

- digits: integers (``1,204``), decimals, percentages (``4.3%``, ``12 percent``),
  currency, scale words (``1.2M``, ``1.5 million``), with a sign when written;
- ranges (``10–12%``, ``$1.2–1.5M``, ``3 to 4``): two numbers sharing the unit;
- numbers in words (:mod:`lantide.docs.number_words`);
- ``unreadable``: digits or number words no rule reads (``1,23,456``, ``3/4``).

Left out: dates and times, a year on its own, a heading's section number, a number that
labels a part or a period ("Section 2", "week 12", "phase two"), digits inside words
(``Q3``, ``v1.2``, ``COVID-19``) and a number in brackets (``[3]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lantide.docs.number_words import NUMBER_WORDS, WORD_NUMBER, word_numbers

# A number as :func:`_number` reads it: (text, value, decimals, percent, scale, signed)
NumberParts = tuple[str, float, int, bool, float, bool]


_CURRENCY = "$€£¥"
_SCALES = {
    "k": 1e3,
    "K": 1e3,
    "thousand": 1e3,
    "M": 1e6,
    "million": 1e6,
    "bn": 1e9,
    "B": 1e9,
    "billion": 1e9,
}
_NUMBER = re.compile(
    r"(?<![\w.,/:^\[\-−+])"
    r"(?P<sign>[-−+])?(?P<cur>[$€£¥])?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<pct>\s?%|\s+(?:percent|per\s+cent)\b)?"
    r"(?:(?<![%t])\s?(?P<scale>k|K|M|bn|B|thousand|million|billion)\b)?"
    r"(?![\w%]|[-/.:,]\d|\])"
)
_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# a range: "10–12%", "10-12%", "$1.2–1.5M", "10 to 12%": two numbers sharing the unit
_RANGE = re.compile(
    r"(?<![\w.,/:^\[\-−+])"
    rf"(?P<cur>[$€£¥])?(?P<lo>{_DIGITS})(?P<lopct>%)?"
    r"(?:\s?[-–—]\s?|\s+to\s+)"
    rf"[$€£¥]?(?P<hi>{_DIGITS})"
    r"(?P<pct>\s?%|\s+(?:percent|per\s+cent)\b)?"
    r"(?:(?<![%t])\s?(?P<scale>k|K|M|bn|B|thousand|million|billion)\b)?"
    r"(?![\w%]|[-/.:,]\d|\])"
)
# what is left of digits once numbers, dates and labels are read: unreadable, unless it is
# part of a word (Q3, v1.2, 3rd, COVID-19), a reference in brackets ([3]) or a year
_DIGIT_RUN = re.compile(r"\d(?:[\d,./:]*\d)?")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_DATES = re.compile(
    r"\b\d{4}-\d{1,2}(?:-\d{1,2})?(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?\b"
    r"|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}(?:\s+\d{{4}})?\b"
)
_YEAR = re.compile(r"(?:19|20)\d\d")
# a number that names a part of a document or a period, not a quantity: "Section 2.1"
_LABELLED = re.compile(
    r"\b(?:section|chapter|figure|fig\.|table|step|appendix|part|page|"
    r"phase|item|note|line|version|week|wave|round)\s+"
    rf"(?:\d+(?:\.\d+)*\b(?!,\d)|{WORD_NUMBER}\b)",
    re.I,
)
_SECTION_NUMBER = re.compile(r"^\s*\d+(?:\.\d+)*\.?(?=\s|$)")

_NOUNS = re.compile(r"\s+([A-Za-z][A-Za-z'-]*)(?:\s+([A-Za-z][A-Za-z'-]*))?")


def _nouns_after(text: str, end: int) -> tuple[str, ...]:
    """The (at most two) words right after a number: what it counts ("4,962 customers")."""
    match = _NOUNS.match(text, end)
    return tuple(w.lower() for w in match.groups() if w) if match else ()


Span = tuple[int, int]


def _inside(start: int, spans: list[Span]) -> bool:
    return any(a <= start < b for a, b in spans)


def _overlaps(start: int, end: int, spans: list[Span]) -> bool:
    return any(a < end and start < b for a, b in spans)


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DATE_HINTS = ("-", "/", ":", ".", *_MONTHS)
_LABEL_HINTS = (
    "section", "chapter", "fig", "table", "step", "appendix", "part", "page", "phase",
    "item", "note", "line", "version", "week", "wave", "round",
)  # fmt: skip


def _blocked(text: str, heading: bool) -> list[Span]:
    """Dates, labelled numbers ("Section 2") and a heading's section number (each regex
    only where a plain substring says it may match: most runs hold neither)."""
    blocked = []
    if any(hint in text for hint in _DATE_HINTS):
        blocked = [(m.start(), m.end()) for m in _DATES.finditer(text)]
    lowered = text.lower()
    if any(hint in lowered for hint in _LABEL_HINTS):
        blocked += [(m.start(), m.end()) for m in _LABELLED.finditer(text)]
    if heading:
        section = _SECTION_NUMBER.match(text)
        if section:
            blocked.append((0, section.end()))
    return blocked


_HAS_DIGIT = re.compile(r"\d").search
_LOWER_WORDS = re.compile(r"[a-z]+")
_RANGE_SIGNS = ("-", "–", "—", " to ")


def may_hold_numbers(text: str) -> tuple[bool, bool]:
    """(digits, number words) ``text`` may hold: a quick look before :func:`numbers_in`."""
    return (
        _HAS_DIGIT(text) is not None,
        not NUMBER_WORDS.isdisjoint(_LOWER_WORDS.findall(text.lower())),
    )


def numbers_in(text: str, heading: bool, may_have_words: bool = True) -> list[FoundNumber]:
    """Every number of a text run, in order: digits, ranges, words, and what is left of
    digits or number words that cannot be read (``unreadable``); ``may_have_words``
    False: the caller knows the run holds no number word (:func:`may_hold_numbers`)."""
    digits = _HAS_DIGIT(text) is not None
    # most runs of prose hold no number word: one pass over the words says so
    words = may_have_words and not NUMBER_WORDS.isdisjoint(_LOWER_WORDS.findall(text.lower()))
    if not (digits or words):
        return []
    blocked = _blocked(text, heading)
    found: list[tuple[int, FoundNumber]] = []
    read: list[Span] = []
    ranges = digits and any(sign in text for sign in _RANGE_SIGNS)
    for m in _RANGE.finditer(text) if ranges else ():
        if _inside(m.start(), blocked):
            continue
        read.append((m.start(), m.end()))
        if not (m.group("cur") or m.group("pct") or m.group("scale") or m.group("lopct")) and (
            _YEAR.fullmatch(m.group("lo"))
        ):
            continue  # years: "2020-2024", "2023–24"
        nouns = _nouns_after(text, m.end())
        for end, written in (("low", m.group("lo")), ("high", m.group("hi"))):
            parts = _parts(
                f"{m.group(0)} [{end}]",
                written,
                None,
                bool(m.group("pct") or m.group("lopct")),
                m.group("scale"),
            )
            found.append((m.start(), FoundNumber(parts, nouns)))
    for m in _NUMBER.finditer(text) if digits else ():
        if _inside(m.start(), blocked) or _inside(m.start(), read):
            continue
        bare = not (m.group("cur") or m.group("pct") or m.group("scale") or m.group("sign"))
        if bare and _YEAR.fullmatch(m.group("num")):
            continue  # a year on its own
        read.append((m.start(), m.end()))
        found.append((m.start(), FoundNumber(_number(m), _nouns_after(text, m.end()))))
    for w in word_numbers(text) if words else ():
        if _overlaps(w.start, w.end, blocked + read):
            continue
        read.append((w.start, w.end))
        parts = (w.text, w.value, w.decimals, w.percent, w.scale, False)
        if w.readable:
            found.append((w.start, FoundNumber(parts, _nouns_after(text, w.end))))
        else:
            found.append((w.start, FoundNumber(parts, unreadable=True)))
    rest = _unread(text, blocked + read) if digits else ""
    for m in _DIGIT_RUN.finditer(rest) if _HAS_DIGIT(rest) else ():
        if _not_a_quantity(text, m):
            continue
        parts = (_token_at(text, m.start(), m.end()), 0.0, 0, False, 1.0, False)
        found.append((m.start(), FoundNumber(parts, unreadable=True)))
    return [f for _start, f in sorted(found, key=lambda pair: pair[0])]


def _unread(text: str, spans: list[Span]) -> str:
    """``text`` with ``spans`` blanked out (same length: positions stay), so what is left
    of digits is found by one regex pass."""
    if not spans:
        return text
    out, last = [], 0
    for a, b in sorted(spans):
        if b <= last:
            continue
        a = max(a, last)
        out += [text[last:a], " " * (b - a)]
        last = b
    out.append(text[last:])
    return "".join(out)


def _not_a_quantity(text: str, m: re.Match[str]) -> bool:
    """Digits that are part of a word (Q3, 3rd, COVID-19), a reference ([3], [^2]) or a
    year: left out as documented, not unreadable."""
    before = text[m.start() - 1] if m.start() else ""
    after = text[m.end()] if m.end() < len(text) else ""
    if (before.isalpha() or before == "_") or (after.isalpha() or after == "_"):
        return True
    if before == "-" and m.start() >= 2 and text[m.start() - 2].isalpha():
        return True
    if before in ("[", "^"):
        return True
    return bool(_YEAR.fullmatch(m.group(0)))


def _token_at(text: str, start: int, end: int) -> str:
    """The whitespace-delimited word around ``text[start:end]``, as the reader sees it."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end].strip(".,;:!?()")


def _parts(
    text: str, digits: str, sign: str | None, percent: bool, scale_word: str | None
) -> NumberParts:
    plain = digits.replace(",", "")
    value = float(plain)
    if sign in ("-", "−"):
        value = -value
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return (text, value, decimals, percent, _SCALES.get(scale_word or "", 1.0), bool(sign))


def _number(match: re.Match[str]) -> NumberParts:
    return _parts(
        match.group(0),
        match.group("num"),
        match.group("sign"),
        bool(match.group("pct")),
        match.group("scale"),
    )


@dataclass(frozen=True)
class FoundNumber:
    """A number found in a text run, before its citation group is known."""

    parts: NumberParts
    nouns: tuple[str, ...] = ()
    unreadable: bool = False
