"""The assistant's answer while it streams: SQL fences render, a long answer keeps its
finished blocks rendered (segments) and re-renders only the tail, with the same text and
step links as one whole render; and the garbage-collector policy that keeps full
collections short (lantide.ui.startup.gc_pauses)."""

from __future__ import annotations

import gc
from itertools import pairwise

import pytest
from PySide6.QtWidgets import QTextBrowser

from lantide.ui.chat.chat_answer import SEGMENT_CHARS, AssistantMessageWidget
from lantide.ui.chat.chat_markdown import STEP_SCHEME, render_markdown, unit_starts
from lantide.ui.startup import gc_pauses

MIXED = (
    "# Churn by region\n\nThe rate is highest in **US-CA**,\nthen `DE-BY`.\n\n"
    "- first point\n- second point\n\n  still the second point\n\n1. one\n2. two\n\n"
    "> a quote\nlazily continued\n\n```sql\nSELECT region,\n\n  count(*) AS n\n"
    "FROM orders GROUP BY 1\n```\n\n    indented code\n\npara before a step\n"
    "[[QUERY_STEP]] counted churned customers by region\nafter the step\n\n---\n\n"
    "Setext heading\n===\n\n| region | n |\n|---|---:|\n| US-CA | 12 |\nlast para\n"
)


def _long_answer(sections: int = 8) -> str:
    out = []
    for i in range(sections):
        rows = "".join(f"| R{i}{j} | {j * 7} |\n" for j in range(8))
        out.append(
            f"## Section {i}\n\nChurn in section {i} is driven by **refunds** and "
            f"`late orders`; the denominator is every customer active in Q2. "
            * 3
            + f"\n\n| region | churned |\n|---|---:|\n{rows}\n"
            f"[[QUERY_STEP]] step {i}: churned customers in section {i}\n\n"
            f"```sql\nSELECT region, count(*) FROM s{i} GROUP BY 1\n```\n\n"
        )
    return "".join(out)


def _whole_plain_text(qtbot, text: str, step_lines=()) -> str:
    browser = QTextBrowser()
    qtbot.addWidget(browser)
    browser.setHtml(render_markdown(text, step_lines=list(step_lines)))
    return browser.toPlainText()


@pytest.mark.parametrize("text", [MIXED, _long_answer(3), "text\n\n```\nunclosed fence\n\nmore"])
def test_cutting_at_unit_starts_renders_like_the_whole(text):
    for end in range(1, len(text) + 1, 5):
        prefix = text[:end]
        starts = unit_starts(prefix)
        bounds = [0] + [s for s in starts if s > 0] + [len(prefix)]
        pieces = "".join(render_markdown(prefix[a:b]) for a, b in pairwise(bounds))
        assert pieces == render_markdown(prefix), f"cut differs at {end}: {prefix[-40:]!r}"
    assert len(unit_starts(text)) > 1


def test_reference_links_and_carriage_returns_are_never_cut():
    assert unit_starts("See [the docs][d].\n\nMore text.\n\n[d]: https://example.com\n") == [0]
    assert unit_starts("one\r\n\r\ntwo\r\n") == [0]


def test_sql_fence_renders_coloured(qtbot):
    widget = AssistantMessageWidget()
    qtbot.addWidget(widget)
    widget.set_text("Here:\n\n```sql\nSELECT region FROM orders\n```\n\n```\nplain code\n```\n")
    html = widget.segments[0].browser.toHtml()
    assert "SELECT region FROM orders" in widget.plain_text()
    assert "plain code" in widget.plain_text()
    assert "color:" in html.split("SELECT")[0][-400:]  # the keyword carries a colour


def test_a_long_streamed_answer_renders_only_its_tail(qtbot):
    text = _long_answer(8)
    widget = AssistantMessageWidget()
    qtbot.addWidget(widget)
    widget.resize(420, 600)
    widget.show()
    frozen_revisions: dict[int, int] = {}
    for i in range(0, len(text), 23):
        widget.append(text[i : i + 23])
        widget.render_pending()
        for segment in widget.segments[:-1]:
            revision = segment.browser.document().revision()
            # once a segment is closed off, streaming never renders it again
            assert frozen_revisions.setdefault(id(segment), revision) == revision
        assert len(text[widget.segments[-1].start : i + 23]) < 3 * SEGMENT_CHARS
    assert len(widget.segments) >= 3
    widget.set_text(text)  # the complete message, as streamed: nothing is rebuilt
    assert len(frozen_revisions) == len(widget.segments) - 1
    starts = [s.start for s in widget.segments]
    assert starts == sorted(starts) and starts[0] == 0
    assert all(s.end == n.start for s, n in pairwise(widget.segments))
    # segment by segment, the same text as one whole render
    assert widget.plain_text().split() == _whole_plain_text(qtbot, text).split()


def test_step_links_follow_their_lines_across_segments(qtbot):
    text = _long_answer(6)
    widget = AssistantMessageWidget()
    qtbot.addWidget(widget)
    for i in range(0, len(text), 40):
        widget.append(text[i : i + 40])
        widget.render_pending()
    ids = [f"step-{n}" for n in range(6)]
    widget.set_step_lines([(i, "parsed") for i in ids])
    linked = []
    for segment in widget.segments:
        html = segment.browser.toHtml()
        linked += [part.split('"')[0] for part in html.split(f'href="{STEP_SCHEME}:')[1:]]
    assert linked == ids
    # a replayed answer (set at once) is cut the same way and links the same steps
    replayed = AssistantMessageWidget()
    qtbot.addWidget(replayed)
    replayed.step_lines = [(i, "parsed") for i in ids]
    replayed.set_text(text)
    assert len(replayed.segments) > 1
    assert (
        replayed.plain_text().split() == _whole_plain_text(qtbot, text, replayed.step_lines).split()
    )
    clicked = []
    replayed.sig_step_clicked.connect(clicked.append)
    from PySide6.QtCore import QUrl

    replayed.segments[-1].browser.anchorClicked.emit(QUrl(f"{STEP_SCHEME}:step-5"))
    assert clicked == ["step-5"]


def test_a_short_answer_is_cut_only_before_its_table(qtbot):
    widget = AssistantMessageWidget()
    qtbot.addWidget(widget)
    widget.set_text(MIXED)
    # the table (to the end: "last para" is one of its rows) is a box of its own that
    # scrolls sideways; everything before it stays one segment
    assert [s.browser.wide for s in widget.segments] == [False, True]
    assert MIXED[widget.segments[1].start :].startswith("| region | n |")
    assert widget.plain_text().split() == _whole_plain_text(qtbot, MIXED).split()


@pytest.fixture
def pauses():
    assert gc_pauses.active() is None and gc.get_freeze_count() == 0
    installed = gc_pauses.GcPauses(slow_ms=0.0).install()
    yield installed
    installed.uninstall()
    assert gc.get_freeze_count() == 0 and gc_pauses.active() is None


def test_a_slow_full_collection_freezes_its_survivors(pauses):
    survivor = [{"kept": i} for i in range(1000)]
    gc.collect()
    assert pauses.freezes >= 1
    assert gc.get_freeze_count() >= len(survivor)
    # the next full collection walks only what was made since
    assert not any(obj is survivor for obj in gc.get_objects(2))
    fresh = [[i] for i in range(10)]
    cycle = []
    cycle.append(cycle)
    del cycle
    assert gc.collect() >= 1  # garbage made after the freeze is still collected
    assert fresh


def test_milestones_freeze_once():
    pauses = gc_pauses.GcPauses(slow_ms=10_000).install()
    try:
        pauses.milestone("libraries")
        pauses.milestone("libraries")
        assert pauses.freezes == 1 and gc.get_freeze_count() > 0
        pauses.thaw()
        assert gc.get_freeze_count() == 0
    finally:
        pauses.uninstall()


def test_loading_keeps_the_collector_quiet_then_freezes_what_was_loaded():
    with gc_pauses.loading_long_lived("not installed"):
        assert gc.isenabled()  # without the app's policy nothing changes
    assert gc.get_freeze_count() == 0
    pauses = gc_pauses.GcPauses(slow_ms=10_000).install()
    try:
        with gc_pauses.loading_long_lived("library"):
            assert not gc.isenabled()
            with gc_pauses.loading_long_lived("another library"):  # e.g. a second worker
                assert not gc.isenabled()
            assert not gc.isenabled()  # the outer load is still running
            loaded = [{"module": i} for i in range(100)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(loaded)
        assert pauses.freezes == 2  # each milestone once
    finally:
        pauses.uninstall()
        gc.enable()


def test_a_second_policy_replaces_the_first_without_deadlocking():
    """A second app controller (a test's, or a window started after another) installs its
    policy while the first is still active: the first is uninstalled, not waited on
    forever (install held the module lock while uninstall took it again)."""
    import threading

    first = gc_pauses.GcPauses(slow_ms=10_000).install()
    second = gc_pauses.GcPauses(slow_ms=10_000)
    done = threading.Thread(target=second.install, daemon=True)
    done.start()
    done.join(5)
    if done.is_alive():  # the module lock stays taken: nothing can be cleaned up
        pytest.fail("installing the second policy deadlocked")
    try:
        assert gc_pauses.active() is second
        assert first._after_collection not in gc.callbacks
    finally:
        second.uninstall()
        first.uninstall()
