"""Is the analyst's answer a yes? A rule table, not English keywords.

Consent to statistical analysis is read from the answer to Lantide's consent question
(:mod:`lantide.agent.consent`). In the app its choices are buttons: the first approves and
any other declines, so a click is never guessed at. A typed answer is judged by the table
in ``resources/consent/answers.toml`` (its words by language, and the cases the tests hold
it to), in the analyst's language:

- ``no``: a question back ("yes?"), or a refusal, negation, doubt or delay anywhere
  ("nein", "不可以", "not yet", "yes but no");
- ``qualified``: a yes with a restriction ("OK, only descriptive statistics please", "好的，
  只做描述性统计"), a condition or deferral ("Sure, after the review meeting") or hesitation
  ("Okay let me think about it", "ok...", "嗯"). It is not consent: the agent keeps to the
  restriction or asks again with the buttons;
- ``yes``: it starts with an approval of the table and holds none of the above;
- ``unclear``: anything else (words the table does not know).

Doubt always reads as not-yes: the agent then asks again or stays descriptive.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Any

YES, NO, QUALIFIED, UNCLEAR = "yes", "no", "qualified", "unclear"
VERDICTS = (YES, NO, QUALIFIED, UNCLEAR)
QUALIFIER_KINDS = ("restriction", "condition", "hesitation")
TABLE_FILE = ("consent", "answers.toml")

_QUESTION = ("?", "？", "¿")
_SPACE_FREE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")


@dataclass(frozen=True)
class AnswerTable:
    """The words of ``answers.toml``: by language (lists of phrases), and its cases."""

    approvals: dict[str, tuple[str, ...]]
    declining: dict[str, tuple[str, ...]]
    qualifiers: dict[str, dict[str, tuple[str, ...]]]  # kind -> language -> phrases
    cases: tuple[dict[str, object], ...]  # the file's [[case]] tables, for the tests


@dataclass(frozen=True)
class Judgement:
    verdict: str  # YES, NO, QUALIFIED or UNCLEAR
    kind: str | None = None  # for QUALIFIED: restriction, condition or hesitation
    marker: str | None = None  # the word that declined or qualified the answer


def _phrases(raw: Any, where: str) -> dict[str, tuple[str, ...]]:
    from lantide.errors import LantideError

    if not isinstance(raw, dict) or not all(
        isinstance(v, list) and all(isinstance(p, str) and p for p in v) for v in raw.values()
    ):
        raise LantideError(
            f"the consent answer table's [{where}] is not lists of phrases by language",
            hint="Reinstall Lantide: resources/consent/answers.toml is damaged.",
            code="INSTALL_BROKEN",
        )
    return {lang: tuple(p.casefold() for p in v) for lang, v in raw.items()}


@cache
def answer_table() -> AnswerTable:
    """The table shipped in ``resources/consent/answers.toml`` (read once)."""
    import tomllib

    from lantide.package_data import read_resource_text

    data = tomllib.loads(read_resource_text(*TABLE_FILE))
    qualifiers = data.get("qualifiers") or {}
    return AnswerTable(
        approvals=_phrases(data.get("approvals"), "approvals"),
        declining=_phrases(data.get("declining"), "declining"),
        qualifiers={k: _phrases(qualifiers.get(k), f"qualifiers.{k}") for k in QUALIFIER_KINDS},
        cases=tuple(c for c in data.get("case") or [] if isinstance(c, dict)),
    )


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "").casefold().replace("’", "'")
    # punctuation becomes a space (an apostrophe inside a word stays: "don't", "d'accord")
    text = re.sub(r"[^\w\s'-]|(?<!\w)'|'(?!\w)|(?<!\w)-|-(?!\w)", " ", text)
    return " ".join(text.split())


def _label(text: str) -> str:
    """A button's text as it arrives: exact but for case, spacing and width."""
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


def _has_phrase(raw: str, words: str, phrase: str, *, at_start: bool = False) -> bool:
    """Whether ``phrase`` is in the answer (``raw``: folded text; ``words``: normalized)."""
    if _SPACE_FREE.search(phrase):
        return raw.lstrip().startswith(phrase) if at_start else phrase in raw
    if not phrase[0].isalnum() and not phrase.endswith("*"):
        return phrase in raw  # punctuation ("...")
    if phrase.endswith("*"):  # a word that starts with it
        stem = re.escape(_normalize(phrase[:-1]) if phrase[:-1].isalpha() else phrase[:-1])
        pattern = (r"^" if at_start else r"(?:^|\s)") + stem + r"\S*(?:$|\s)"
    else:
        pattern = (r"^" if at_start else r"(?:^|\s)") + re.escape(phrase) + r"(?:$|\s)"
    return re.search(pattern, words) is not None


def _first(raw: str, words: str, table: dict[str, tuple[str, ...]]) -> str | None:
    for phrases in table.values():
        for phrase in phrases:
            if _has_phrase(raw, words, phrase):
                return phrase
    return None


def judge(answer: str) -> Judgement:
    """The judgement of a typed answer (see the module docstring)."""
    table = answer_table()
    raw = unicodedata.normalize("NFKC", answer or "").casefold().replace("’", "'")
    words = _normalize(raw)
    if not words:
        return Judgement(UNCLEAR)
    question = next((q for q in _QUESTION if q in raw), None)
    if question is not None:
        return Judgement(NO, marker=question)  # a question back is not consent
    declined = _first(raw, words, table.declining)
    if declined is not None:
        return Judgement(NO, marker=declined)
    for kind in QUALIFIER_KINDS:
        marker = _first(raw, words, table.qualifiers[kind])
        if marker is not None:
            return Judgement(QUALIFIED, kind, marker)
    for phrases in table.approvals.values():
        if any(_has_phrase(raw, words, p, at_start=True) for p in phrases):
            return Judgement(YES)
    return Judgement(UNCLEAR)


def judge_free_text(answer: str) -> str:
    """YES, NO, QUALIFIED or UNCLEAR for a typed answer."""
    return judge(answer).verdict


def judge_choice(answer: str, choices: list[str] | None = None) -> Judgement:
    """The judgement of the answer to a consent question with ``choices``.

    A click on the first choice approves, on any other declines (unless the text of the
    first choice itself does not approve: then the question was malformed and nothing
    approves). A typed answer is judged by the table; a refusal is never read as yes.
    """
    given = _label(answer)
    options = choices or []
    labels = [_label(c) for c in options]
    if labels and given in labels:
        if given != labels[0]:
            return Judgement(NO, marker=options[labels.index(given)])
        return Judgement(YES) if judge_free_text(options[0]) == YES else Judgement(UNCLEAR)
    return judge(answer)


def judge_answer(answer: str, choices: list[str] | None = None) -> str:
    """YES, NO, QUALIFIED or UNCLEAR (see :func:`judge_choice`)."""
    return judge_choice(answer, choices).verdict
