"""The agent edits the HTML Report with real tools while it is the active tab: a scripted
model (real ``openai`` client, loopback server) lists the chunks, is refused an unsafe
patch, patches one chunk; the state layer names the tools; a regeneration keeps the edit."""

from __future__ import annotations

import json

from lantide.agent.report_html import html_path, publish_html, read_chunks
from lantide.docs.edit_review import decide
from lantide.docs.html_markup import parse_report_html
from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn

REPORT = (
    "# Report: Q3 churn\n\n## Customers\n\nThe customer base is stable.\n\n"
    "## Revenue\n\nRevenue grew in the quarter.\n"
)


def _html_tab_active(root, project="q3-churn", path="report.html"):
    (root / ".lantide" / "session.json").write_text(
        json.dumps(
            {
                "focused_project": project,
                "open_tabs": [
                    {"type": "report", "path": f"projects/{project}/report.md"},
                    {"type": "report", "path": f"projects/{project}/{path}"},
                ],
                "active_tab": 1,
            }
        )
    )


def _tool_names(body):
    return {t["function"]["name"] for t in body.get("tools") or []}


def test_agent_patches_a_chunk_of_the_active_html_report(session_factory, fake_openai, open_ws):
    project = open_ws.project("q3-churn")
    project.report_path.write_text(REPORT, encoding="utf-8")
    publish_html(open_ws, project)
    _html_tab_active(open_ws.root)
    published = html_path(project).read_text(encoding="utf-8")
    new = "<h2>Customers</h2>\n<p>The customer base is <em>stable</em> across regions.</p>\n"
    fake_openai.script(
        Turn(tool_calls=[ToolCall("read_html_report", {})]),
        Turn(
            tool_calls=[
                ToolCall(
                    "patch_html_chunk",
                    {"chunk": "s-customers", "content": '<p onclick="steal()">x</p>'},
                ),
                ToolCall(
                    "patch_html_chunk",
                    {"chunk": "s-customers", "content": '<img src="https://evil.example/p.png">'},
                ),
                ToolCall("patch_html_chunk", {"chunk": "s-customers", "content": "<p>open"}),
                ToolCall("patch_html_chunk", {"chunk": "s-customers", "content": new}),
            ]
        ),
        Turn(text="Reworded the Customers section."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Say the customer base is stable across regions")
    fake_openai.assert_done()

    first = fake_openai.chat_requests[0]
    assert {"read_html_report", "patch_html_chunk"} <= _tool_names(first)
    system = "\n".join(m["content"] for m in first["messages"] if m["role"] == "system")
    assert "read_html_report" in system and "patch_html_chunk" in system
    active = [m["content"] for m in first["messages"] if m["role"] == "user"][-2]
    assert active.startswith("# Active tab: report projects/q3-churn/report.html")
    assert '"id": "s-customers"' in active  # the outline, not the Markdown Report

    results = results_by_tool(fake_openai.chat_requests[-1])
    listed = results["read_html_report"][0]
    assert [c["id"] for c in listed["chunks"]] == [
        "header",
        "s-report-q3-churn",
        "s-customers",
        "s-revenue",
        "appendix",
    ]
    refused = results["patch_html_chunk"][:3]
    assert [r["error"] for r in refused] == ["HTML_REFUSED", "HTML_REFUSED", "HTML_INVALID"]
    assert "onclick" in refused[0]["message"] and "evil.example" in refused[1]["message"]
    done = results["patch_html_chunk"][3]
    assert "error" not in done and done["path"] == "projects/q3-churn/report.html"
    # pending the analyst's review: the page keeps its text until the edit is accepted
    assert done["pending_review"] is True and "analyst's review" in done["review"]
    assert html_path(project).read_text(encoding="utf-8") == published
    decide(project, done["edit_id"], "accept")

    text = html_path(project).read_text(encoding="utf-8")
    chunks = {c.id: c for c in parse_report_html(text)}
    assert chunks["s-customers"].content == new and chunks["s-customers"].edited
    assert not chunks["s-revenue"].edited
    assert "steal()" not in text and "evil.example" not in text

    # publishing again from the unchanged Markdown keeps the agent's edit
    result = publish_html(open_ws, project)
    assert result.kept_edits == ["s-customers"]
    assert read_chunks(project, "s-customers")["content"] == new


def test_html_tools_are_not_offered_when_the_markdown_report_is_active(
    session_factory, fake_openai, open_ws
):
    project = open_ws.project("q3-churn")
    project.report_path.write_text(REPORT, encoding="utf-8")
    publish_html(open_ws, project)
    _html_tab_active(open_ws.root, path="report.md")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("patch_html_chunk", {"chunk": "s-customers", "content": "x"})]),
        Turn(text="Not available."),
    )
    before = html_path(project).read_bytes()
    s = live_session(session_factory, fake_openai)
    run(s, "Edit the HTML")
    first = fake_openai.chat_requests[0]
    assert not {"read_html_report", "patch_html_chunk"} & _tool_names(first)
    system = "\n".join(m["content"] for m in first["messages"] if m["role"] == "system")
    assert "patch_html_chunk" not in system
    (result,) = results_by_tool(fake_openai.chat_requests[-1])["patch_html_chunk"]
    assert "error" in result
    assert html_path(project).read_bytes() == before


def test_a_patch_is_refused_while_the_analysts_html_tab_has_unsaved_edits(
    session_factory, fake_openai, open_ws
):
    project = open_ws.project("q3-churn")
    project.report_path.write_text(REPORT, encoding="utf-8")
    publish_html(open_ws, project)
    (open_ws.root / ".lantide" / "session.json").write_text(
        json.dumps(
            {
                "focused_project": "q3-churn",
                "open_tabs": [
                    {"type": "report", "path": "projects/q3-churn/report.html", "dirty": True}
                ],
                "active_tab": 0,
            }
        )
    )
    before = html_path(project).read_bytes()
    fake_openai.script(
        Turn(
            tool_calls=[ToolCall("patch_html_chunk", {"chunk": "s-revenue", "content": "<p>x</p>"})]
        ),
        Turn(text="Please save first."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Shorten the revenue section")
    (result,) = results_by_tool(fake_openai.chat_requests[-1])["patch_html_chunk"]
    assert result["error"] == "TAB_DIRTY" and "unsaved" in result["message"]
    assert html_path(project).read_bytes() == before
