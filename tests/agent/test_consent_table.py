"""The consent judge is a table: its words and its cases live in one data file
(``resources/consent/answers.toml``), read here as it ships. Every case must judge as the
file says, and, property-tested, no answer holding a restriction, a condition, a deferral,
hesitation or a refusal, in any language of the table, reads as an unqualified yes."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lantide.agent.consent_answers import (
    NO,
    QUALIFIED,
    QUALIFIER_KINDS,
    VERDICTS,
    YES,
    judge,
    judge_answer,
    judge_free_text,
)
from lantide.package_data import resource_path

TABLE = tomllib.loads(resource_path("consent", "answers.toml").read_text(encoding="utf-8"))
CASES = TABLE["case"]
REQUIRED_LANGUAGES = ("en", "de", "fr", "es", "ru", "zh", "ja")
APPROVALS = sorted({p for words in TABLE["approvals"].values() for p in words})
QUALIFIERS = sorted(
    {
        p
        for kind in QUALIFIER_KINDS
        for lang, words in TABLE["qualifiers"][kind].items()
        for p in words
    }
)
DECLINING = sorted({p for words in TABLE["declining"].values() for p in words})


@pytest.mark.parametrize("case", CASES, ids=[c["answer"] or "(empty)" for c in CASES])
def test_each_case_of_the_table_is_judged_as_it_says(case):
    assert case["expect"] in VERDICTS
    got = judge(case["answer"])
    assert got.verdict == case["expect"], (case, got)
    if case["expect"] == QUALIFIED:
        assert got.kind == case["why"], (case, got)


def test_the_issues_answers_are_cases_and_none_is_a_yes():
    issue = [
        "OK, only descriptive statistics please",
        "Sure, just the averages",
        "Bitte nur deskriptive Statistik",
        "Хорошо, только описательная статистика",
        "好的，只做描述性统计",
        "Sure, after the review meeting",
        "Okay let me think about it",
        "ok...",
        "嗯",
    ]
    answers = {c["answer"]: c["expect"] for c in CASES}
    for answer in issue:
        assert answers.get(answer) == QUALIFIED, answer
        assert judge_answer(answer, ["Yes", "No, stay descriptive"]) != YES


@pytest.mark.parametrize("language", REQUIRED_LANGUAGES)
def test_each_required_language_has_every_kind_of_word(language):
    assert TABLE["approvals"][language] and TABLE["declining"][language]
    for kind in QUALIFIER_KINDS:
        assert TABLE["qualifiers"][kind][language], (language, kind)
    assert judge_free_text(TABLE["approvals"][language][0]) == YES


@pytest.mark.parametrize("approval", APPROVALS)
def test_every_approval_of_the_table_alone_is_a_yes(approval):
    assert judge_free_text(approval) == YES


def _spelled(marker: str, suffix: str) -> str:
    """A marker as an answer holds it: a stem ("описательн*") with an ending."""
    return marker[:-1] + (suffix or "e") if marker.endswith("*") else marker


_SEP = st.sampled_from([" ", ", ", "，", "、", " - ", "... ", "! "])
_FILLER = st.lists(
    st.sampled_from(APPROVALS + ["please", "the", "Q3", "regression", "statistik", "统计"]),
    max_size=3,
)
_ENDING = st.sampled_from(["", "ая", "es", "ung", "ed", "o"])


@settings(max_examples=600, deadline=None)
@given(
    yes=st.sampled_from(APPROVALS),
    before=_FILLER,
    marker=st.sampled_from(QUALIFIERS),
    ending=_ENDING,
    after=_FILLER,
    sep=_SEP,
)
def test_no_restricted_deferred_or_hesitant_answer_reads_as_yes(
    yes, before, marker, ending, after, sep
):
    """Property: any yes of any language with any restriction, condition, deferral or
    hesitation marker of any language anywhere in it is never an unqualified yes, typed or
    checked against the buttons."""
    answer = sep.join([yes, *before, _spelled(marker, ending), *after])
    assert judge_free_text(answer) in (QUALIFIED, NO), answer
    assert judge_answer(answer, ["Yes", "No, stay descriptive"]) != YES, answer


@settings(max_examples=400, deadline=None)
@given(
    yes=st.sampled_from(APPROVALS),
    before=_FILLER,
    refusal=st.sampled_from(DECLINING),
    ending=_ENDING,
    after=_FILLER,
    sep=_SEP,
)
def test_no_answer_holding_a_refusal_reads_as_yes(yes, before, refusal, ending, after, sep):
    answer = sep.join([yes, *before, _spelled(refusal, ending), *after])
    assert judge_free_text(answer) == NO, answer
    assert judge_answer(answer, ["Yes", "No"]) != YES, answer


@settings(max_examples=200, deadline=None)
@given(
    choices=st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=4),
    pick=st.integers(1, 3),
)
def test_a_click_on_any_choice_but_the_first_is_never_yes(choices, pick):
    pick = min(pick, len(choices) - 1)
    if " ".join(choices[pick].casefold().split()) == " ".join(choices[0].casefold().split()):
        return  # the same button twice: the first one counts
    assert judge_answer(choices[pick], choices) != YES


def test_lantides_own_buttons_read_as_they_mean():
    from pathlib import Path

    from lantide.agent.consent import consent_question
    from lantide.workspace.model import Project

    _, choices = consent_question(Project(Path("."), "q3"), ["correlation"], "")
    assert judge_answer(choices[0], choices) == YES
    assert all(judge_answer(c, choices) == NO for c in choices[1:])
    assert judge_answer("No", ["No", "Yes"]) != YES  # a first button that refuses approves nothing
