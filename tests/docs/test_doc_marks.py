"""Finding marks by Markdown structure, with exact source offsets."""

from docs_helpers import mark

from lantide.docs.marks import scan_marks


def _found(text):
    scan = scan_marks(text)
    return [(m.id, m.inner(text)) for m in scan.marks], scan


def test_marks_in_paragraphs_headings_lists_quotes_and_cells_are_found_at_their_offsets():
    text = (
        f"# Title {mark('h1', 'heading')} #\n\n"
        f"> quoted {mark('q1', 'in a quote')}\n> and more\n\n"
        f"- item {mark('l1', 'in a list')}\n"
        f"  continued {mark('l2', 'second line')}\n\n"
        "| a | b |\n|---|---|\n"
        f"| {mark('t1', 'cell one')} | x {mark('t2', 'cell two')} |\n"
    )
    found, scan = _found(text)
    assert found == [
        ("h1", "heading"),
        ("q1", "in a quote"),
        ("l1", "in a list"),
        ("l2", "second line"),
        ("t1", "cell one"),
        ("t2", "cell two"),
    ]
    for m in scan.marks:
        assert text[m.start : m.inner_start] == f'<mark data-annotation-id="{m.id}">'
        assert text[m.inner_end : m.end] == "</mark>"


def test_a_mark_in_inline_code_or_a_fenced_block_is_text():
    text = (
        "Use `" + mark("c1", "x") + "` to mark text.\n\n"
        "```html\n" + mark("c2", "in a fence") + "\n```\n\n"
        "    " + mark("c3", "indented code") + "\n\n"
        "Real " + mark("r1", "one") + ".\n"
    )
    found, scan = _found(text)
    assert found == [("r1", "one")]
    assert scan.tags and all(
        t.container == ("region", scan.marks[0].container[1]) for t in scan.tags
    )


def test_same_id_in_code_and_for_real_only_the_real_one_counts():
    text = f"`{mark('a1', 'example')}` and {mark('a1', 'the real one')}\n"
    found, _ = _found(text)
    assert found == [("a1", "the real one")]


def test_an_analysts_own_highlight_pairs_correctly_and_is_not_an_annotation():
    text = f"<mark>mine</mark> then {mark('a1', 'annotated')} and <mark>again</mark>\n"
    found, scan = _found(text)
    assert found == [("a1", "annotated")]
    assert scan.stray == []


def test_unclosed_mark_is_stray_and_a_mark_never_pairs_across_paragraphs():
    text = '<mark data-annotation-id="s1">starts here\n\nends there</mark>\n'
    found, scan = _found(text)
    assert found == []
    assert [t.annotation_id for t in scan.stray] == ["s1"]


def test_crlf_text_offsets_are_offsets_of_the_text_as_given():
    text = f"# T\r\n\r\nline one\r\nline {mark('x1', 'two')} end\r\n"
    found, scan = _found(text)
    assert found == [("x1", "two")]
    m = scan.marks[0]
    assert text[m.inner_start : m.inner_end] == "two"


def test_escaped_pipe_and_tab_indentation_keep_offsets_right():
    text = (
        "| a | b |\n|---|---|\n"
        f"| x \\| y {mark('p1', 'after pipe')} | z |\n\n"
        f"-\tlist with tab\n\n\t{mark('i1', 'not code')} after list\n"
    )
    found, scan = _found(text)
    assert ("p1", "after pipe") in found
    for m in scan.marks:
        assert text[m.inner_start : m.inner_end] == m.inner(text)
        assert text[m.start : m.start + 5] == "<mark"


def test_mark_in_raw_html_block_is_found_but_not_inside_an_html_comment():
    text = (
        '<div>\n<mark data-annotation-id="h1">block text</mark>\n'
        '<!-- <mark data-annotation-id="h2">commented</mark> -->\n</div>\n'
    )
    found, _ = _found(text)
    assert found == [("h1", "block text")]


def test_attribute_variants_and_invalid_ids():
    text = (
        "a <MARK data-annotation-id='u1' class=\"x\">upper</MARK> "
        'b <mark data-annotation-id="bad id">spaces</mark> '
        'c <mark data-annotation-id="">empty</mark>\n'
    )
    found, scan = _found(text)
    assert found == [("u1", "upper")]
    assert scan.stray == []


def test_mark_inside_link_text_is_found():
    text = f"See [{mark('k1', 'the docs')}](https://example.org) please.\n"
    found, _ = _found(text)
    assert found == [("k1", "the docs")]
