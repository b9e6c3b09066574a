"""The HTML Report runs no script a Report or an agent slipped in (issue 28, item 1).

The corpus (``data/xss_payloads.txt``: the OWASP filter-evasion list, the comment tricks
that Python's parser and browsers end at different places, mutation-XSS shapes) reaches the
page by both ways an agent has: raw HTML of the Markdown Report (``update_report``, then
publishing) and ``patch_html_chunk``. Each payload marks the page's title or fetches a
loopback URL this test listens on; one headless Chromium run over the page (and one over the
same page without its Content-Security-Policy, so the sanitizer alone is tested too) pokes
every element (mouse, focus, click, toggle, animation events) and the marker never shows.
"""

from __future__ import annotations

import html.parser
import http.server
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lantide.agent.report_html import (
    html_path,
    patch_chunk,
    publish_html,
    raw_html_left_out,
    read_chunks,
)
from lantide.docs.html_markup import HtmlMarkupError, UnsafeHtmlError, parse_report_html
from lantide.docs.html_report import HtmlEditConflict, ReportSource, build_report_html
from tests.agent.scripted_model import reply
from tests.browser.cdp import open_page
from tests.docs.html_report_helpers import REPORT, make_report_project

pytestmark = pytest.mark.security

CORPUS = Path(__file__).parent / "data" / "xss_payloads.txt"
MARK = "top.document.title=/PWNED/.source"
TITLE = "q3: Report"
# runs every inline handler a payload may have left: events of every kind on every element,
# links clicked (a javascript: URL would run), details toggled
POKE = """(() => {
  const kinds = ['mouseover', 'mouseenter', 'mousemove', 'focus', 'blur', 'click', 'load',
    'error', 'toggle', 'animationstart', 'begin', 'start'];
  for (const e of Array.from(document.querySelectorAll('body *'))) {
    for (const kind of kinds) { try { e.dispatchEvent(new Event(kind)); } catch (_) {} }
    if (e.tagName === 'A' || e.tagName === 'a') { try { e.click(); } catch (_) {} }
    if (e.tagName === 'DETAILS') { e.open = !e.open; }
  }
  return document.title;
})()"""


def payloads() -> list[str]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("# ")]


class _Beacon(http.server.BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def beacon() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    handler = type("Beacon", (_Beacon,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def armed(payload: str, url: str) -> str:
    return payload.replace("$XSS", MARK).replace("$BEACON", url)


def test_the_corpus_is_large_and_holds_the_comment_tricks():
    corpus = payloads()
    assert len(corpus) >= 40
    assert any(p.startswith("<!-->") for p in corpus)
    assert any("--!>" in p for p in corpus)


def html_payloads() -> list[str]:
    return [p for p in payloads() if "<" in p]  # the rest are Markdown links: text in HTML


_ACTIVE_TAGS = {"script", "iframe", "frame", "frameset", "object", "embed", "base", "meta",
                "link", "style", "form", "button", "input", "use", "image", "animate", "set",
                "foreignobject", "noscript", "template", "math"}  # fmt: skip


class _Active(html.parser.HTMLParser):
    """What of a page could run or fetch, read from markup the sanitizer wrote (html5ever's
    serialization: no comment, every attribute quoted, ``<`` escaped in text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _ACTIVE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            url = "".join((value or "").split()).lower()
            if name.startswith("on") or name in ("srcdoc", "style", "srcset", "xlink:href"):
                self.found.append(f"{name}= on <{tag}>")
            elif name in ("href", "src") and not url.startswith(("#", "data:image/png")):
                self.found.append(f"{name}={value!r} on <{tag}>")

    def handle_comment(self, data: str) -> None:
        self.found.append("comment")


def active_parts(markup: str) -> list[str]:
    parser = _Active()
    parser.feed(markup)
    parser.close()
    return parser.found


@pytest.mark.parametrize("payload", html_payloads())
def test_patch_html_chunk_writes_nothing_active(tmp_path, payload):
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    before = html_path(project).read_bytes()
    try:
        patch_chunk(project, "s-refunds", "<h2>Refunds</h2>" + armed(payload, "http://x"))
    except (UnsafeHtmlError, HtmlMarkupError):
        assert html_path(project).read_bytes() == before  # refused: nothing written
        return
    # accepted only when the sanitizer left nothing out: what it wrote is inert
    assert active_parts(read_chunks(project, "s-refunds")["content"]) == []


def _exported(markdown: str) -> str:
    source = ReportSource("q3", "report.md", markdown, "executing", {}, {"ok": True})
    return "".join(build_report_html(source).chunks.values())


@pytest.mark.parametrize("payload", html_payloads())
def test_update_report_refuses_each_raw_html_payload_or_it_is_text(payload):
    # the same rule as patch_html_chunk, on the raw HTML the edit adds; what Markdown reads
    # as text (a tag CommonMark does not recognise) is escaped on the page
    armed_payload = armed(payload, "http://x")
    new = REPORT + "\n" + armed_payload + "\n"
    if raw_html_left_out(REPORT, new) == []:
        try:
            page = _exported(new)
        except HtmlEditConflict:  # a lone tag left open or closed: nothing is published
            return
        assert active_parts(page) == []


def _page_markdown(corpus: list[str]) -> tuple[str, list[int]]:
    """The Report with one section per payload, leaving out those whose raw HTML the
    publish refuses as unbalanced (REPORT_HTML_UNBALANCED: nothing would be written; some
    raw HTML blocks run to the end of the document, so this is asked of the whole page)."""
    kept = list(range(len(corpus)))
    while True:
        starts, lines = {}, REPORT.count("\n") + 2
        sections = []
        for n in kept:
            starts[lines] = n
            section = f"## P{n}\n\n{corpus[n]}\n\nText {corpus[n]} inline.\n"
            sections.append(section)
            lines += section.count("\n") + 1
        markdown = REPORT + "\n" + "\n".join(sections)
        try:
            _exported(markdown)
        except HtmlEditConflict as exc:
            line = int(re.search(r"starting on line (\d+)", exc.message).group(1))
            kept.remove(starts[line])
            continue
        return markdown, kept


@pytest.mark.slow
def test_no_payload_runs_in_chromium(tmp_path, beacon):
    url, hits = beacon
    corpus = [armed(p, f"{url}/{n}") for n, p in enumerate(payloads())]
    markdown, kept = _page_markdown(corpus)
    assert len(kept) >= 40, len(kept)
    ws, project = make_report_project(tmp_path / "ws", markdown)
    publish_html(ws, project)
    accepted = []
    for n in kept:  # the agent's other way in: each payload as a chunk's new content
        try:
            patch_chunk(project, f"s-p{n}", f"<h2>P{n}</h2>{corpus[n]}")
            accepted.append(corpus[n])
        except (UnsafeHtmlError, HtmlMarkupError):
            pass
    page = html_path(project)
    text = page.read_text(encoding="utf-8")
    assert "script-src 'none'" in text
    bare = tmp_path / "without-csp.html"  # the sanitizer alone, as if the CSP were lost
    bare.write_text(
        "".join(line for line in text.splitlines(True) if "Content-Security-Policy" not in line)
    )
    for shown in (page, bare):
        report = open_page(
            shown,
            settle=0.8,
            probes={
                "poked": POKE,
                "title": "document.title",
                "scripts": "document.scripts.length",
                "handlers": "Array.from(document.querySelectorAll('*')).flatMap(e =>"
                " Array.from(e.attributes).map(a => a.name)).filter(n => n.startsWith('on'))",
                "sections": "document.querySelectorAll('section[data-lantide-chunk]').length",
            },
        )
        assert report.values["title"] == TITLE, (shown.name, report.values)
        assert report.values["poked"] == TITLE
        assert report.values["scripts"] == 0 and report.values["handlers"] == []
        assert report.values["sections"] >= len(kept)  # the page is whole: nothing swallowed
        assert [r for r in report.requests if r.startswith(url)] == [], report.requests
    assert hits == []
    # what patch_html_chunk accepted (the sanitizer left nothing out) is inert, as is the
    # whole body: read from the page as written
    assert len(accepted) < len(kept) // 4, accepted
    assert active_parts(text.split("<body>", 1)[1]) == []


def test_update_report_through_the_agent_refuses_a_hidden_script(
    session_factory, scripted, open_ws
):
    project = open_ws.project("q3-churn")
    project.approve_plan()  # update_report is offered while executing
    before = project.report_path.read_bytes()
    hostile = before.decode() + "\n<!--><script>top.document.title=/PWNED/.source</script>-->\n"
    from lantide.agent.reflection import CHECKLIST

    passed = {"ok": True, "checklist": {i: {"ok": True, "note": "fine"} for i in CHECKLIST}}
    scripted.add(reply("", ("update_report", {"content": hostile})))
    scripted.add(reply(json.dumps({**passed, "problems": []})))  # the review before reporting
    scripted.add(reply("I will leave the script out."))
    events = list(session_factory().run_turn("write the report"))
    (result,) = [e.result for e in events if e.name == "tool_returned"]
    assert result["error"] == "HTML_REFUSED", result
    assert "<script> element" in result["message"]
    assert project.report_path.read_bytes() == before


def test_a_chunk_edited_before_the_sanitizer_loses_its_script_when_regenerated(tmp_path):
    # a page patched under the old rule (or by hand) keeps its edited chunk on regeneration
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    path = html_path(project)
    text = path.read_text(encoding="utf-8")
    chunk = next(c for c in parse_report_html(text) if c.id == "s-refunds")
    hidden = "<p>Edited.</p><!--><script>top.document.title=/PWNED/.source</script>-->"
    path.write_text(text[: chunk.start] + hidden + text[chunk.end :], encoding="utf-8")
    result = publish_html(ws, project)
    assert result.kept_edits == ["s-refunds"]
    kept = read_chunks(project, "s-refunds")["content"]
    assert "Edited." in kept and "<script" not in kept and "PWNED" not in kept
