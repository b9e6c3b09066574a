"""Step citations and the numbers of a Report, as parsed by markdown-it-py."""

import json

import pytest

from lantide.docs.citations import MalformedCitationError, raise_for_malformed, scan_numbers
from lantide.docs.render import render_html


def numbers(text):
    return [(n.line, n.text, n.cited) for n in scan_numbers(text).numbers]


def test_a_citation_cites_the_numbers_since_the_previous_one_in_its_block():
    text = (
        "Churn was **4.3%** [^s:a1] of 28,000 accounts [^s:b2] [^s:c3],\n"
        "revenue $1,204.50 and 1.2M users [^s:d4], and 77 uncited.\n\n"
        "| metric | value |\n|---|---|\n| churn | 4.3% [^s:a1] |\n"
    )
    assert numbers(text) == [
        (1, "4.3%", ("a1",)),
        (1, "28,000", ("b2", "c3")),
        (2, "$1,204.50", ("d4",)),
        (2, "1.2M", ("d4",)),
        (2, "77", ()),
        (6, "4.3%", ("a1",)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "On 2024-03-01 at 10:30, and 01/02/2024, March 3, 2024, in 2023 [^s:a].",
        "## 2.1 Method\n",
        "Quarter Q3 and step s3, version v1.2.3, the 3rd time, reference [3].",
        "See Section 2.1, Figure 3 and week 12.",
        "```\n1,204\n```\n",
        "    indented 1,204 code\n",
        'Inline `1,204` code and <span data-x="12">html</span>.',
        "## Contents\n\n- 1. Intro 12\n- [2. Findings](#findings) 44\n\n",
        "See [section 4](#section-4).",
    ],
)
def test_what_is_not_a_number_of_the_report(text):
    assert numbers(text) == []


def test_a_number_after_the_contents_is_counted_again():
    text = "## Contents\n\n- 1. Intro 12\n\n## Findings\n\n4.3% [^s:a]\n"
    assert numbers(text) == [(7, "4.3%", ("a",))]


def test_malformed_citations_name_the_file_and_every_line():
    scan = scan_numbers("ok 4% [^s:a]\nbad [^s: a] here\nand [^s:] [^s:x y]\n")
    with pytest.raises(MalformedCitationError) as err:
        raise_for_malformed(scan, "projects/p/report.md")
    msg = err.value.message
    assert msg.startswith("projects/p/report.md: malformed step citation")
    assert "line 2: '[^s: a]'" in msg and "line 3: '[^s:]'" in msg
    assert "[^s:STEP_ID]" in err.value.hint


def test_the_preview_renders_citations_as_links_with_their_kind():
    page = render_html("Churn 4.3% [^s:9f2c41d07a11] and a [^s:bad one].\n").html
    assert 'href="lantide-step:9f2c41d07a11"' in page and 'data-step="9f2c41d07a11"' in page
    assert 'class="lantide-citation-bad"' in page
    kinds = render_html("4.3% [^s:a1] and 5 [^s:zz]\n", steps={"a1": "formal"}).html
    assert "lantide-citation-formal" in kinds and "lantide-citation-missing" in kinds


def test_cli_check_refuses_a_malformed_report_and_leaves_it(empty_workspace, run_cli):
    from lantide.workspace.model import Workspace

    ws = Workspace.open(empty_workspace, lock=False)
    text = "# Report\n\nChurn 4.3% [^s:a1].\n\nRevenue 12 [^s 9].\n\nBad [^s:x!] here.\n"
    ws.create_project("p", report_text=text)
    report = empty_workspace / "projects/p/report.md"
    before = report.read_bytes()
    out = run_cli("report", "check", empty_workspace, "p", "--json")
    assert out.returncode == 1
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "MALFORMED_CITATION"
    assert str(report) in error["message"] and "line 7" in error["message"]
    assert report.read_bytes() == before
    plain = run_cli("report", "check", empty_workspace, "p")
    assert plain.returncode == 1 and "line 7: '[^s:x!]'" in plain.stderr


def test_the_app_relabels_rendered_citations_with_their_kinds():
    from lantide.docs.citations import relabel_citations

    page = render_html("4.3% [^s:a1] and 5 [^s:zz]\n").html
    assert "lantide-citation-step" in page
    labelled = relabel_citations(page, {"a1": "exploratory"})
    assert "lantide-citation-exploratory" in labelled and "a1 · exploratory" in labelled
    assert "lantide-citation-missing" in labelled and "lantide-citation-step" not in labelled


def test_words_that_are_no_quantities_are_neither_numbers_nor_unreadable():
    from lantide.docs.citations import scan_numbers

    text = (
        "One of the customers left in the second half of the year; a five-star review, "
        "COVID-19, Q3, v1.2, the 3rd wave [3] of 2020-2024, step two, 1990s, x86_64, no one.\n"
    )
    assert scan_numbers(text).numbers == []


def test_numbers_in_words_scale_words_and_ranges_are_read_like_digits():
    from lantide.docs.citations import scan_numbers

    text = (
        "Twelve percent, two thousand five hundred, a million, 12 percent, two thirds of "
        "users, $1.2–1.5M, 3 to 4 weeks, twelve thousand [^s:a].\n"
    )
    got = [(n.text, n.value, n.percent, n.scale) for n in scan_numbers(text).numbers]
    assert got == [
        ("Twelve percent", 12.0, True, 1.0),
        ("two thousand five hundred", 2500.0, False, 1.0),
        ("a million", 1.0, False, 1e6),
        ("12 percent", 12.0, True, 1.0),
        ("two thirds of", 200 / 3, True, 1.0),
        ("$1.2–1.5M [low]", 1.2, False, 1e6),
        ("$1.2–1.5M [high]", 1.5, False, 1e6),
        ("3 to 4 [low]", 3.0, False, 1.0),
        ("3 to 4 [high]", 4.0, False, 1.0),
        ("twelve thousand", 12.0, False, 1e3),
    ]
