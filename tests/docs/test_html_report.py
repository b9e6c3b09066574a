"""The HTML Report (issue 16, part 4) on real files: ``lantide report html`` and the engine
behind it; chunks, the edit-keeping regeneration, the patch rules, and bad input."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from lantide.agent.report_html import html_path, patch_chunk, publish_html, read_chunks
from lantide.docs.html_markup import (
    HtmlMarkupError,
    UnsafeHtmlError,
    check_fragment,
    parse_report_html,
)
from lantide.docs.html_report import HtmlEditConflict
from tests.docs.html_report_helpers import REPORT, make_report_project


class _Refs(HTMLParser):
    """Every URL-bearing attribute and every element of a page."""

    def __init__(self):
        super().__init__()
        self.urls, self.tags, self.ids = [], [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("href", "src", "srcset", "action", "poster", "data"):
                self.urls.append(value)
            if name == "id":
                self.ids.add(value)


def _refs(text):
    refs = _Refs()
    refs.feed(text)
    return refs


def test_report_html_writes_one_self_contained_page(tmp_path, run_cli):
    ws, project = make_report_project(tmp_path / "ws")
    done = run_cli("report", "html", ws.root, "q3", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["chunks"] == 6 and out["evidence_check_ok"] is True
    text = html_path(project).read_text(encoding="utf-8")

    refs = _refs(text)
    # nothing to fetch: every link stays in the page, styles inline, a CSP that forbids fetches
    assert refs.urls and all(u.startswith("#") for u in refs.urls), refs.urls
    assert "link" not in refs.tags and "<style>" in text
    assert "default-src 'none'" in text and "connect-src 'none'" in text
    # header: project, Plan approval, evidence check
    header = read_chunks(project, "header")["content"]
    assert "q3" in header and "approved by" in header
    assert "clean" in header and "all 2 numbers cited and matching" in header
    # citations link to the appendix entries, which give purpose, SQL and row count
    assert 'href="#step-a1b2c3d4e5f6"' in text and "[1]" in text and "[2]" in text
    appendix = read_chunks(project, "appendix")["content"]
    assert 'id="step-a1b2c3d4e5f6"' in appendix and "real customers" in appendix
    assert "SELECT count(*) AS customers" in appendix and "1 row" in appendix
    assert "amount &lt; 5000" in appendix  # SQL escaped, never markup
    assert {f"#{i}" for i in ("step-a1b2c3d4e5f6", "step-0badc0ffee00")} <= {
        f"#{i}" for i in refs.ids
    }
    # the Report's text, its code as code
    assert "We count 1,204 customers" in text and "<em>retention</em>" in text
    assert [c.id for c in parse_report_html(text)] == [
        "header",
        "s-report-q3-churn",
        "s-customers",
        "s-refunds",
        "s-next-steps",
        "appendix",
    ]


def test_header_says_when_the_check_fails_and_the_plan_is_not_approved(tmp_path):
    ws, project = make_report_project(tmp_path / "ws", REPORT.replace("1,204", "1,205"))
    project.plan_path.write_text("# Plan\n\nChanged after approval.\n", encoding="utf-8")
    ws.project("q3")  # reload
    result = publish_html(ws, ws.project("q3"))
    assert result.check_ok is False
    header = read_chunks(project, "header")["content"]
    assert "1 problem(s)" in header and "1 not matching" in header
    assert "the Plan changed since approval" in header


def test_chunk_ids_are_stable_when_other_sections_change(tmp_path):
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    before = {c.id: c.content for c in parse_report_html(html_path(project).read_text())}
    project.report_path.write_text(
        REPORT.replace("Talk to the", "Then talk to the") + "\n## Customers\n\nMore.\n"
    )
    publish_html(ws, project)
    after = {c.id: c.content for c in parse_report_html(html_path(project).read_text())}
    assert after["s-customers"] == before["s-customers"]
    assert after["s-next-steps"] != before["s-next-steps"]
    assert "s-customers-2" in after  # a repeated heading gets its own id


def test_regenerating_keeps_edits_or_names_the_ones_it_would_overwrite(tmp_path, run_cli):
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    path = html_path(project)
    patch_chunk(project, "s-next-steps", "<h2>Next steps</h2>\n<p>Call Dana on Monday.</p>\n")
    # the hand edit of another chunk, in a text editor
    text = path.read_text(encoding="utf-8")
    text = text.replace("test accounts excluded.", "test accounts <b>excluded</b>.")
    path.write_text(text, encoding="utf-8")

    # Markdown of another section changes: both edits are kept
    project.report_path.write_text(REPORT.replace("Refunds were", "Refunds came to"))
    result = publish_html(ws, project)
    assert sorted(result.kept_edits) == ["s-customers", "s-next-steps"]
    page = path.read_text(encoding="utf-8")
    assert "Call Dana on Monday." in page and "<b>excluded</b>" in page
    assert "Refunds came to" in page

    # Markdown of an edited section changes: named, nothing written
    project.report_path.write_text(REPORT.replace("Talk to the", "Write to the"))
    before = path.read_bytes()
    with pytest.raises(HtmlEditConflict) as err:
        publish_html(ws, project)
    assert "s-next-steps" in err.value.message and str(path) in err.value.message
    assert path.read_bytes() == before
    refused = run_cli("report", "html", ws.root, "q3")
    assert refused.returncode == 1 and "s-next-steps" in refused.stderr
    assert "--overwrite-edits" in refused.stderr and path.read_bytes() == before

    forced = run_cli("report", "html", ws.root, "q3", "--overwrite-edits", "--json")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["overwritten_edits"] == ["s-next-steps"]
    page = path.read_text(encoding="utf-8")
    assert "Write to the" in page and "Call Dana" not in page and "<b>excluded</b>" in page


def test_invalid_hand_edited_markup_names_file_and_line_and_nothing_is_rewritten(tmp_path, run_cli):
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    path = html_path(project)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "We count 1,204" in line)
    lines[at] = lines[at].replace("</p>", "")  # an unclosed <p>
    broken = "".join(lines)
    path.write_text(broken, encoding="utf-8")

    with pytest.raises(HtmlMarkupError) as err:
        publish_html(ws, project)
    assert str(path) in err.value.message and f"(opened on line {at + 1})" in err.value.message
    with pytest.raises(HtmlMarkupError):
        patch_chunk(project, "s-refunds", "<p>fine</p>")
    done = run_cli("report", "html", ws.root, "q3")
    assert done.returncode == 1 and "report.html" in done.stderr and "line" in done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_text(encoding="utf-8") == broken


@pytest.mark.parametrize(
    ("content", "refused"),
    [
        ("<script>alert(1)</script>", "<script>"),
        ("<SCRIPT src=x></SCRIPT>", "<script>"),
        ('<p onmouseover="x()">a</p>', "onmouseover"),
        ('<a href="javascript:alert(1)">a</a>', "javascript:"),
        ('<a href="//example.com/x">a</a>', "//example.com"),
        ('<img src="logo.png">', "logo.png"),
        ('<img srcset="a.png 2x">', "srcset"),
        ('<p style="background: URL(http://x/y)">a</p>', "style="),
        ("<p style=\"background: url( 'x.png')\">a</p>", "style="),
        ("<iframe></iframe>", "<iframe>"),
        ("<style>p{}</style>", "<style>"),
        ('<link rel="stylesheet" href="#x">', "<link>"),
        ('<svg><image href="http://x/y.png"/></svg>', "<image>"),
        ('<p data-lantide-chunk="x">a</p>', "data-lantide-chunk"),
        ('<p id="lt-header">a</p>', "lt-header"),
        ('<p id="step-a1b2c3d4e5f6">a</p>', "step-a1b2c3d4e5f6"),  # a citation's target
        ('<form action="#x"></form>', "<form>"),
        ("<!--><script>alert(1)</script>-->", "<script>"),  # browsers end the comment at <!-->
        ("<!-- --!><img src=x onerror=alert(1)> -->", "onerror"),
        ('<svg><a href="javascript:alert(1)"><text>x</text></a></svg>', "javascript:"),
        ('<svg><use href="#lt-header"/></svg>', "<use>"),
    ],
)
def test_unsafe_chunk_content_is_refused(content, refused):
    with pytest.raises(UnsafeHtmlError) as err:
        check_fragment(content)
    assert refused.lower() in err.value.message.lower()


@pytest.mark.parametrize(
    "content",
    ["<p>open", "<p><b>x</p></b>", "</section><section>", "<div/>", "<p>a</div>"],
)
def test_unbalanced_chunk_content_is_refused(content):
    with pytest.raises(HtmlMarkupError):
        check_fragment(content)


def test_safe_chunk_content_passes():
    check_fragment(
        '<h2>Next</h2><p>See <a href="#step-a1">[1]</a> and <img alt="x" '
        'src="data:image/png;base64,iVBORw0KGgo=">.<br></p>'
        '<svg viewBox="0 0 4 4"><rect width="2" height="2" clip-path="url(#c)"/></svg>'
        '<p><a href="https://example.com/source">the source</a></p>'
    )


def test_patch_of_an_unknown_chunk_names_the_chunks(tmp_path):
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    before = html_path(project).read_bytes()
    with pytest.raises(Exception) as err:
        patch_chunk(project, "s-nope", "<p>x</p>")
    assert "s-nope" in str(err.value) and "s-customers" in str(err.value)
    assert html_path(project).read_bytes() == before


def test_malformed_citation_in_the_markdown_stops_the_publish(tmp_path, run_cli):
    ws, project = make_report_project(tmp_path / "ws", REPORT + "\nSee [^s: oops].\n")
    done = run_cli("report", "html", ws.root, "q3")
    assert done.returncode == 1 and "MALFORMED_CITATION" in done.stderr
    assert "line 19" in done.stderr
    assert not html_path(project).exists()


def test_images_that_would_be_fetched_are_left_out(tmp_path):
    ws, project = make_report_project(
        tmp_path / "ws", REPORT + "\n![logo](https://example.com/logo.png) ![local](pic.png)\n"
    )
    publish_html(ws, project)
    text = html_path(project).read_text(encoding="utf-8")
    assert all(u.startswith("#") for u in _refs(text).urls)
    assert "[image not embedded: https://example.com/logo.png]" in text


def test_raw_html_of_the_markdown_never_scripts_or_fetches(tmp_path):
    hostile = (
        REPORT + '\n<script>alert(1)</script>\n\nText <img src="http://x.example/p.png"> and '
        '<b onclick="x()">bold</b> and <mark data-annotation-id="a1">marked</mark>.\n\n'
        '<div data-lantide-chunk="header">spoof</div>\n'
    )
    ws, project = make_report_project(tmp_path / "ws", hostile)
    publish_html(ws, project)
    text = html_path(project).read_text(encoding="utf-8")
    body = text.split("</head>", 1)[1]
    assert "<script" not in body and "x.example" not in _refs(text).urls
    assert "onclick" not in [a for a in body.split() if a.startswith("onclick=")]
    assert "[raw HTML left out: &lt;script&gt; element;" in body
    assert "marked" in body and "<mark" not in body
    assert [c.id for c in parse_report_html(text)].count("header") == 1


def test_raw_html_left_open_in_the_markdown_is_named_and_nothing_written(tmp_path):
    ws, project = make_report_project(
        tmp_path / "ws", REPORT.replace("## Refunds", "<div>\n\n## Refunds")
    )
    with pytest.raises(Exception) as err:
        publish_html(ws, project)
    assert "report.md" in str(err.value) and "line" in str(err.value)
    assert not html_path(project).exists()


def test_a_patch_keeps_no_script_not_even_one_the_chunk_had(tmp_path):
    # pages published before charts became plain SVG held a vega-embed call per chart
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    chart = '<div class="lantide-chart" id="c1"></div>\n<script>vegaEmbed("#c1", {})</script>'
    path = html_path(project)
    text = path.read_text(encoding="utf-8")
    chunk = next(c for c in parse_report_html(text) if c.id == "s-refunds")
    path.write_text(text[: chunk.start] + chunk.content + chart + text[chunk.end :])
    before = path.read_bytes()
    with pytest.raises(UnsafeHtmlError) as err:
        patch_chunk(project, "s-refunds", "<h2>Refunds</h2><p>Reworded.</p>" + chart)
    assert "<script> element" in err.value.message and "publish" in (err.value.hint or "")
    assert path.read_bytes() == before
    patch_chunk(project, "s-refunds", '<h2>Refunds</h2><p>Reworded.</p><div id="c1"></div>')
    assert read_chunks(project, "s-refunds")["content"].endswith('<div id="c1"></div>')
