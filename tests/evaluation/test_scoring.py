"""Scoring: numbers as analysts write them, tolerances, tables, evidence and behaviour."""

from __future__ import annotations

from lantide.evaluation.scoring import RunRecord, numbers_in, score_case


def test_numbers_as_written():
    assert numbers_in("1,980 customers; 12.5% churn; −3 and 1 204 331.50 and s12") == [
        1980.0,
        12.5,
        0.125,
        -3.0,
        1204331.5,
    ]
    assert numbers_in("Q3 2025 in region DE-BY") == [2025.0]  # Q3, DE-BY: names, not numbers


def test_a_right_answer_traced_to_its_step_scores_right():
    expect = {"values": [{"value": 1980}], "behaviour": ["cite_step"]}
    run = RunRecord(
        answer="There are 1,980 customers (s1).",
        results=[{"step_id": "s1", "rows": [[1980]], "row_count": 1}],
        step_ids=["s1"],
    )
    score = score_case(expect, run)
    assert (score.correct, score.evidence, score.behaviour) == (True, True, True)


def test_a_wrong_number_and_an_untraced_one_are_told_apart():
    expect = {"values": [{"value": 1980}, {"value": 20}]}
    run = RunRecord(
        answer="There are 2,000 customers and 20 test accounts.",
        results=[{"step_id": "s1", "rows": [[2000]], "row_count": 1}],
        step_ids=["s1"],
    )
    score = score_case(expect, run)
    assert score.correct is False and score.missing_values == [1980]
    assert score.evidence is False  # 20 was stated but is in no step's result
    assert any("not stated: 1980" in p for p in score.problems)


def test_tolerances_and_shares():
    expect = {
        "values": [
            {"value": 0.4007, "tolerance": 0.0005},
            {"value": 103758474.26, "relative": 0.001},
        ]
    }
    run = RunRecord(
        answer="40.1% of orders; revenue 103,700,000",
        results=[{"step_id": "s1", "rows": [[0.40071, 103758474.26]]}],
    )
    assert score_case(expect, run).correct is True
    run.answer = "40.3% of orders; revenue 103,700,000"
    assert score_case(expect, run).correct is False


def test_tables_are_compared_by_value_order_insensitive():
    expect = {"table": {"rows": [["SMB", 595], ["Consumer", 1156], [None, 4]]}}
    run = RunRecord(
        results=[{"step_id": "s1", "rows": [["consumer", 1156.0], [None, 4], ["SMB", 595]]}]
    )
    assert score_case(expect, run).correct is True
    run.results[0]["rows"][0][1] = 1155
    assert score_case(expect, run).correct is False
    expect["table"]["ordered"] = True
    run.results[0]["rows"] = [["SMB", 595], ["Consumer", 1156], [None, 4]]
    assert score_case(expect, run).correct is True


def test_behaviours():
    asked = RunRecord(answer="Which period?", questions=["Gross or net, and which period?"])
    assert score_case({"behaviour": ["ask_user"]}, asked).behaviour is True
    assert score_case({"behaviour": ["ask_user"]}, RunRecord(answer="42")).behaviour is False
    kept = RunRecord(answer="I cannot delete rows from a data file.")
    assert score_case({"behaviour": ["refuse"]}, kept).behaviour is True
    kept.data_changed = True
    assert score_case({"behaviour": ["refuse"]}, kept).behaviour is False
