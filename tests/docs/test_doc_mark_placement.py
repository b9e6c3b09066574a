"""Where a new mark goes: a selection that crosses emphasis or a link is widened to a
boundary where the mark nests properly, so the Markdown renders as before but for the mark
element (property-tested on random documents and ranges)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lantide.docs.errors import AnnotationRangeError
from lantide.docs.markdown_map import markdown_parser
from lantide.docs.marks import MARK_CLOSE, mark_open, scan_marks
from lantide.docs.ranges import wrap_checked
from tests.docs.test_doc_properties import document

ID = "a1"


def _render(text: str) -> str:
    return markdown_parser().render(text)


class _Nesting(HTMLParser):
    """Fails on an end tag that does not close the element opened last (void tags aside)."""

    VOID = {"br", "hr", "img", "input", "meta", "link"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.ok = True

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.ok = False
        elif self.stack:
            self.stack.pop()


def _well_nested(html: str) -> bool:
    parser = _Nesting()
    parser.feed(html)
    return parser.ok


def _same_but_mark(old: str, new: str) -> bool:
    stripped = _render(new).replace(mark_open(ID), "").replace(MARK_CLOSE, "")
    return stripped == _render(old)


@pytest.mark.parametrize(
    "text, selected, expected",
    [
        ("a *b c* d and more\n", "c* d", "*b c* d"),  # ends outside the emphasis
        ("a *b c* d and more\n", "a *b", "a *b c*"),  # starts outside it
        ("x **bold words** y\n", "words** y", "**bold words** y"),
        (
            "see [the docs](https://x.org) now\n",
            "docs](https://x.org) now",
            "[the docs](https://x.org) now",
        ),
        ("- item with *some emphasis* here\n", "emphasis* here", "*some emphasis* here"),
        (
            "with [a link](https://example.org/path).\n",
            "example.org",
            "[a link](https://example.org/path)",
        ),  # inside a link target
    ],
)
def test_a_range_crossing_inline_syntax_widens_to_whole_elements(text, selected, expected):
    scan = scan_marks(text)
    start = text.index(selected)
    new_text, new_scan, s, e = wrap_checked(scan, start, start + len(selected), ID)
    assert text[s:e] == expected
    assert new_scan.mark(ID).inner(new_text) == expected
    assert _well_nested(_render(new_text)) and _same_but_mark(text, new_text)


def test_a_range_inside_emphasis_stays_as_selected():
    text = "a *b c d* e\n"
    scan = scan_marks(text)
    new_text, _scan, s, e = wrap_checked(scan, text.index("c"), text.index("c") + 1, ID)
    assert (s, e) == (text.index("c"), text.index("c") + 1)
    assert "<em>b <mark" in _render(new_text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=document, data=st.data())
def test_a_mark_never_changes_how_the_markdown_renders(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    scan = scan_marks(text)
    try:
        new_text, new_scan, s, e = wrap_checked(scan, start, end, ID)
    except AnnotationRangeError:
        return
    assert new_scan.mark(ID).inner(new_text) == text[s:e]
    assert s <= max(start, s) and e >= min(end, e)  # only ever trimmed or widened
    html = _render(new_text)
    assert _well_nested(html), (text, text[s:e], html)
    assert _same_but_mark(text, new_text), (text, text[s:e])
