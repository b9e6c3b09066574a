"""English numbers written in words, for the Report's evidence check (issue 26).

:func:`word_numbers` finds them in a run of text and reads each like a number written in
digits (its value, decimals, percent, scale word):

- cardinals: ``twelve``, ``twenty-five``, ``one hundred and twenty``, ``a dozen``
  (``one`` alone is left out: "one of the", "no one" are no quantities);
- a scale word at the end is the number's scale, as ``12 thousand`` would be:
  ``twelve thousand`` is 12 with scale 1,000 (so 12,345 rounds to it);
- ``percent`` / ``per cent`` after the number: a percentage (``twelve percent``);
- fractions of something: ``half of``, ``a third of``, ``a quarter of``, ``three quarters
  of``, ``two thirds of``: a percentage rounded to the whole percent (75% for three
  quarters), so a share of 0.75 or 75 matches.

A run of number words that does not make a number (``twenty twelve``, ``five four``) is
returned ``unreadable`` rather than skipped. text2num (the maintained library for this)
was tried: it reads cardinals but not fractions or "a dozen", and its positions need a
tokenizer of its own; these few rules are what the check needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNITS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
TENS = {
    w: 10 * (i + 2)
    for i, w in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    )
}
SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
# every word that can start or make a number in words (a quick test before the regexes)
NUMBER_WORDS = frozenset(
    [*UNITS, *TENS, *SCALES, "hundred", "dozen", "half", "third", "quarter", "fifth"]
)
_FRACTIONS = {
    "half": 2,
    "halves": 2,
    "third": 3,
    "thirds": 3,
    "quarter": 4,
    "quarters": 4,
    "fifth": 5,
    "fifths": 5,
}
_WORD = "|".join(sorted([*UNITS, *TENS, *SCALES, "hundred", "dozen"], key=len, reverse=True))
# "and" joins only after hundred or a scale word ("one hundred and five"); "two and three"
# are two numbers
_JOIN = (
    r"(?:(?<=hundred)\s+and\s+|(?<=thousand)\s+and\s+|(?<=million)\s+and\s+|"
    r"(?<=billion)\s+and\s+|\s+|-)"
)
_RUN = re.compile(
    rf"(?<![\w-])(?P<article>an?\s+)?(?P<words>(?:{_WORD})(?:{_JOIN}(?:{_WORD}))*)"
    r"(?:(?P<pct>\s+(?:percent|per\s+cent)\b)"
    r"|(?P<frac>\s+(?:halves|half|thirds?|quarters?|fifths?)(?![\w-]))(?P<of>\s+of\b)?)?"
    r"(?![\w-])",
    re.I,
)
# "a quarter of", "one third of", "half of" (not "the second half of the year")
_ARTICLE_FRACTION = re.compile(
    r"(?<![\w-])(?:(?P<article>an?|one)\s+)?(?P<frac>half|third|quarter|fifth)\s+of\b", re.I
)
_NOT_A_SHARE = re.compile(
    r"(?:first|second|last|latter|former|the|other|back|front|top|bottom|this|that)\s+$", re.I
)
WORD_NUMBER = rf"(?:{_WORD})(?:-(?:{_WORD}))?"  # one word number, for labels ("phase two")


@dataclass(frozen=True)
class WordNumber:
    start: int
    end: int
    text: str
    value: float
    decimals: int
    percent: bool
    scale: float
    readable: bool = True


def _cardinal(words: list[str]) -> tuple[float, float] | None:
    """(value, scale) of number words, or None when they make no number."""
    total, current, last_scale, scale = 0.0, 0.0, float("inf"), 1.0
    previous = ""
    for word in words:
        if word in UNITS:
            unit = UNITS[word]
            if previous in UNITS or (previous in TENS and unit >= 10) or previous == "dozen":
                return None
            current += unit
        elif word in TENS:
            if previous in UNITS or previous in TENS or previous == "dozen":
                return None
            current += TENS[word]
        elif word == "hundred":
            if not 0 < current < 100 or current % 1:
                return None
            current *= 100
        elif word == "dozen":
            current = (current or 1) * 12
        elif word in SCALES:
            factor = SCALES[word]
            if not current or factor >= last_scale:
                return None
            total += current * factor
            current, last_scale, scale = 0.0, factor, factor
        previous = word
    if current and scale > 1:  # "two million three hundred": the rest in the last scale
        return (total + current) / 1.0, 1.0
    return (total / scale if scale > 1 else total + current), scale


def _article_fractions(text: str) -> list[WordNumber]:
    out = []
    for match in _ARTICLE_FRACTION.finditer(text):
        frac = match.group("frac").lower()
        if match.group("article") is None and (
            frac != "half" or _NOT_A_SHARE.search(text, 0, match.start())
        ):
            continue
        value = 100 / _FRACTIONS[frac]
        out.append(WordNumber(match.start(), match.end(), match.group(0), value, 0, True, 1.0))
    return out


def word_numbers(text: str) -> list[WordNumber]:
    """The numbers written in words in ``text``, in order (see the module docstring)."""
    out = _article_fractions(text)
    taken = [(n.start, n.end) for n in out]
    for match in _RUN.finditer(text):
        if any(a <= match.start() < b or a <= match.start("words") < b for a, b in taken):
            continue
        words = [w.lower() for w in re.split(r"\s+and\s+|\s+|-", match.group("words")) if w]
        article = bool(match.group("article"))
        frac = (match.group("frac") or "").strip().lower()
        if frac and not match.group("of") and not frac.endswith("s"):
            frac = ""  # "one third" is a share only with "of"; "three quarters" is one
        tail = bool(match.group("pct") or frac)
        if words == ["one"] and not tail:
            continue  # "one of the", "no one": a pronoun far more often than a quantity
        if article and words[0] not in ("hundred", "thousand", "million", "billion", "dozen"):
            continue  # "a five-star", "a two-step": no quantity
        start = match.start() if article else match.start("words")
        end = match.end() if (tail or not match.group("frac")) else match.end("words")
        shown = text[start:end]
        parsed = _cardinal((["one"] if article else []) + words)
        if parsed is None:
            out.append(WordNumber(start, end, shown, 0.0, 0, False, 1.0, readable=False))
            continue
        value, scale = parsed
        if frac:  # a share: value / denominator, as a whole percent
            share = value * scale * 100 / _FRACTIONS[frac.split()[0]]
            out.append(WordNumber(start, end, shown, share, 0, True, 1.0))
            continue
        out.append(WordNumber(start, end, shown, value, 0, bool(match.group("pct")), scale))
    return sorted(out, key=lambda n: n.start)
