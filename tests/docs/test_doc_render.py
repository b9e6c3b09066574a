"""The preview: marks as highlights with id and status, and the source line map."""

from html.parser import HTMLParser

from docs_helpers import mark

from lantide.docs import open_document, render_html
from lantide.docs.render import render_document


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.marks, self.blocks = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "mark":
            self.marks.append(attrs)
        if "data-source-line" in attrs:
            self.blocks.append((tag, attrs["id"], int(attrs["data-source-line"])))


def _parse(html):
    p = _Elements()
    p.feed(html)
    return p


def test_sample_marks_render_as_highlights_with_id_status_and_comment(sample_project):
    doc = open_document(sample_project, "plan")
    doc.resolve("7be204", "B", answer="fine")
    doc.reopen("7be204")
    doc.resolve("c51d8e", "B", answer="fine")
    rendered = render_document(doc)
    found = _parse(rendered.html).marks
    assert [m["data-annotation-id"] for m in found] == ["3f9a1c", "7be204"]
    assert all(m["data-status"] == "open" and "lantide-annotation" in m["class"] for m in found)
    assert found[0]["title"].startswith("Q2 revenue of the churned customers")
    assert [(m.id, m.status) for m in rendered.marks] == [("3f9a1c", "open"), ("7be204", "open")]
    assert rendered.marks[0].line == doc.text[: doc.scan.mark("3f9a1c").start].count("\n")
    assert "<style>" in rendered.page()


def test_marks_in_code_stay_text_and_unknown_marks_are_flagged():
    text = (
        f"Use `{mark('cc0001', 'x')}` here.\n\n```\n{mark('cc0002', 'y')}\n```\n\n"
        f"And {mark('un0001', 'an orphan')}.\n"
    )
    rendered = render_html(text, [])
    found = _parse(rendered.html).marks
    assert [m["data-status"] for m in found] == ["unknown"]
    assert "&lt;mark data-annotation-id=&quot;cc0001&quot;&gt;" in rendered.html
    assert "&lt;mark data-annotation-id=&quot;cc0002&quot;&gt;" in rendered.html


def test_the_line_map_finds_the_source_of_each_block():
    text = "# Title\n\nFirst paragraph\nsecond line.\n\n- one\n- two\n\n```\ncode\n```\n"
    rendered = render_html(text, [])
    blocks = _parse(rendered.html).blocks
    assert ("h1", "lt-b0", 0) in blocks
    paragraph = rendered.block_for_element(next(b[1] for b in blocks if b[0] == "p"))
    assert (paragraph.start_line, paragraph.end_line) == (2, 4)
    assert rendered.block_at_line(3).tag == "p"
    assert rendered.block_at_line(6).tag == "li"
    assert rendered.block_at_line(9).tag == "code"
    lines = text.split("\n")
    for block in rendered.line_map:
        assert 0 <= block.start_line < block.end_line <= len(lines)


def test_comments_are_escaped_in_titles():
    text = f"A {mark('xs0001', 'quote')}.\n"
    rendered = render_html(
        text, [{"id": "xs0001", "status": "open", "comment": '"><script>alert(1)</script>'}]
    )
    assert "<script>" not in rendered.html
    assert _parse(rendered.html).marks[0]["title"] == '"><script>alert(1)</script>'


def test_a_plan_saved_with_a_byte_order_mark_keeps_its_heading_and_its_bom(make_project):
    project = make_project("\ufeff# Plan\n\nRevenue is net of refunds.\n")
    doc = open_document(project, "plan")
    blocks = _parse(render_html(doc.text, []).html).blocks
    assert blocks[0][0] == "h1"  # not a paragraph starting with an invisible character
    start = doc.text.index("net of refunds")
    doc.create_annotation(start, start + len("net of refunds"), "which refunds?", by="user")
    raw = (project.dir / "plan.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf# Plan")
    assert b'Revenue is <mark data-annotation-id="' in raw
