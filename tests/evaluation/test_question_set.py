"""The shipped question set: at least 30 cases of every kind the issue asks for, and gold
values that still hold on the sample data (run through the real query service), so the
set cannot rot; bad set files get clear errors and are left as they are."""

from __future__ import annotations

import pytest

from lantide.evaluation.question_set import QuestionSetError, load_question_set
from lantide.evaluation.scoring import matches, table_found


def test_the_sample_set_covers_what_the_issue_asks_for():
    qs = load_question_set("sample")
    assert len(qs.cases) >= 30
    kinds = {c.kind for c in qs.cases}
    assert {"count", "sum", "grouped", "churn", "ambiguous", "fan-out", "refuse"} <= kinds
    assert all("ask_user" in c.expect["behaviour"] for c in qs.cases if c.kind == "ambiguous")
    assert all("refuse" in c.expect["behaviour"] for c in qs.cases if c.kind == "refuse")
    with_values = [c for c in qs.cases if c.expect.get("values") or c.expect.get("table")]
    assert all(c.expect.get("gold_sql") for c in with_values)


@pytest.mark.slow
def test_every_gold_value_still_holds_on_the_sample_data(tmp_path):
    from lantide.query import QueryService
    from lantide.workspace.sample import create_sample
    from lantide.workspace.settings import QuerySettings

    ws = create_sample(tmp_path / "ws")
    service = QueryService(ws, QuerySettings())
    try:
        for case in load_question_set("sample").cases:
            gold = case.expect.get("gold_sql")
            if not gold:
                continue
            rows = service.run_query(gold)["preview"]
            if "table" in case.expect:
                assert table_found(case.expect["table"], [rows]), (case.id, rows)
            got = [r[0] for r in rows]
            for value, found in zip(case.expect.get("values", []), got, strict=False):
                exact = {"value": value["value"], "relative": 1e-9}
                assert matches(float(found), exact), (case.id, found, value)
            assert len(case.expect.get("values", [])) in (0, len(got)), case.id
    finally:
        service.close()
        ws.close()


@pytest.mark.parametrize(
    "content, words",
    [
        ("{not json", "not a readable JSON"),
        ('{"name": "x", "workspace": "sample", "cases": []}', "cases"),
        (
            '{"name": "x", "workspace": "sample", "cases": [{"id": "a", "messages": ["q"], '
            '"expect": {"behaviour": ["dance"]}}]}',
            "dance",
        ),
        (
            '{"name": "x", "workspace": "sample", "cases": [{"id": "a", "messages": ["q"], '
            '"expect": {}}, {"id": "a", "messages": ["r"], "expect": {}}]}',
            "used twice",
        ),
        (
            '{"name": "x", "workspace": "nowhere", "cases": [{"id": "a", "messages": ["q"], '
            '"expect": {}}]}',
            "does not exist",
        ),
    ],
)
def test_a_bad_set_file_is_named_and_kept(tmp_path, content, words):
    path = tmp_path / "set.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QuestionSetError) as err:
        load_question_set(path)
    assert str(path) in err.value.message and words in err.value.message
    assert err.value.hint
    assert path.read_text(encoding="utf-8") == content


def test_an_unknown_set_name_lists_the_shipped_ones():
    with pytest.raises(QuestionSetError) as err:
        load_question_set("no-such-set")
    assert "sample" in err.value.hint
