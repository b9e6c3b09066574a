"""The knowledge prompt files render cleanly through the code that uses them."""

from __future__ import annotations

from knowledge_samples import HAND_WRITTEN, sized_knowledge

from lantide.knowledge import parse_knowledge, proposals, reorganize
from lantide.knowledge.layer import build_layer
from lantide.templates import list_templates


def _clean(text: str) -> None:
    assert text.strip() and "\n\n\n" not in text
    assert "{{" not in text and "{%" not in text and "{#" not in text


def test_every_knowledge_template_is_rendered_here():
    mine = [
        t
        for t in list_templates()
        if t == "knowledge.md.j2" or t.startswith("background/knowledge_")
    ]
    assert sorted(mine) == [
        "background/knowledge_propose.md.j2",
        "background/knowledge_propose_input.md.j2",
        "background/knowledge_reorganize.md.j2",
        "background/knowledge_reorganize_input.md.j2",
        "knowledge.md.j2",
    ]
    user = parse_knowledge("## Rules\n- ISO dates.\n", scope="user")
    flat = parse_knowledge(HAND_WRITTEN, scope="project")
    big = parse_knowledge(sized_knowledge(6000), scope="project")
    for docs in ([user, flat], [user, big], [flat]):
        _clean(build_layer(docs, None, project_name="q3").text)
    _clean(build_layer([user, flat], 300).text)
    for pair in (
        proposals.build_prompt(
            ["Churn is 90 days."], "", scopes=["user"], existing=[], rejected=[], project_name=None
        ),
        proposals.build_prompt(
            ["a", "b"],
            "reply",
            scopes=["user", "project"],
            existing=["x"],
            rejected=["y"],
            project_name="q3",
            headings=["Dates"],
        ),
        reorganize.build_prompt(big),
    ):
        for text in pair:
            _clean(text)
