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


def test_the_received_table_is_evidence_and_order_does_not_matter():
    expect = {"table": {"rows": [["SMB", 595], ["Consumer", 1156], [None, 4]]}}
    answer = "Consumer 1,156, SMB 595, and 4 customers without a segment."
    run = RunRecord(
        answer=answer,
        results=[{"step_id": "s1", "rows": [["consumer", 1156.0], [None, 4], ["SMB", 595]]}],
    )
    assert (score_case(expect, run).correct, score_case(expect, run).evidence) == (True, True)
    run.results[0]["rows"][0][1] = 1155
    assert (score_case(expect, run).correct, score_case(expect, run).evidence) == (True, False)
    expect["table"]["ordered"] = True
    run.results[0]["rows"] = [["SMB", 595], ["Consumer", 1156], [None, 4]]
    assert score_case(expect, run).evidence is True


SEGMENTS = {"table": {"rows": [["Consumer", 1156], ["Enterprise", 229], ["SMB", 595]]}}
RECEIVED = [{"step_id": "s1", "rows": [["Consumer", 1156], ["Enterprise", 229], ["SMB", 595]]}]


def test_a_table_stated_wrong_is_wrong_though_the_tool_returned_it_right():
    """Issue 26: grouped cases compared the table the model received, not the one it
    stated; a model that swapped two segments scored correct."""
    answer = (
        "Customers per segment (test accounts excluded):\n\n"
        "| segment | customers |\n|---|---:|\n"
        "| Consumer | 595 |\n| Enterprise | 229 |\n| SMB | 1,156 |\n"
    )
    score = score_case(SEGMENTS, RunRecord(answer=answer, results=RECEIVED))
    assert score.correct is False and score.evidence is True
    assert any("lacks: Consumer 1156; SMB 595" in p for p in score.problems)


def test_a_table_not_stated_at_all_is_not_correct():
    score = score_case(SEGMENTS, RunRecord(answer="Done, see the result.", results=RECEIVED))
    assert score.correct is False and score.evidence is True


def test_a_stated_table_is_read_from_the_answer_or_the_report_in_any_common_shape():
    shapes = [
        "| Segment | Customers |\n|---|---|\n| SMB | 595 |\n| Consumer | 1,156 |\n"
        "| Enterprise | 229 [^s:s1] |\n| **Total** | **1,980** |",
        "- Consumer: 1,156\n- Enterprise: 229\n- SMB: 595",
        "Consumer leads with 1,156 customers, then SMB (595) and Enterprise (229).",
        "1,156 Consumer, 229 Enterprise and 595 SMB customers.",
    ]
    for text in shapes:
        assert score_case(SEGMENTS, RunRecord(answer=text, results=RECEIVED)).correct, text
    in_report = RunRecord(answer="The Report has the table.", report=shapes[0], results=RECEIVED)
    assert score_case(SEGMENTS, in_report).correct is True


def test_a_null_group_is_read_as_tables_and_prose_write_it():
    expect = {"table": {"rows": [["Office", 24], ["Software", 24], [None, 4]]}}
    for text in (
        "| category | products |\n|---|---|\n| Office | 24 |\n| Software | 24 |\n| — | 4 |",
        "| category | products |\n|---|---|\n| Office | 24 |\n| Software | 24 |\n|  | 4 |",
        "Office 24, Software 24, and 4 products without a category.",
        "- Office: 24\n- Software: 24\n- (none): 4",
    ):
        assert score_case(expect, RunRecord(answer=text)).correct is True, text
    wrong = "Office 24, Software 24, and 5 products without a category."
    assert score_case(expect, RunRecord(answer=wrong)).correct is False


def test_a_stated_table_with_a_row_the_gold_one_has_not_is_wrong():
    answer = (
        "| segment | customers |\n|---|---|\n| Consumer | 1,156 |\n| Enterprise | 229 |\n"
        "| SMB | 595 |\n| Test | 20 |"
    )
    score = score_case(SEGMENTS, RunRecord(answer=answer, results=RECEIVED))
    assert score.correct is False
    assert any("rows the expected one has not: Test | 20" in p for p in score.problems)


def test_the_gold_value_among_many_guesses_is_not_correct():
    """Issue 26: an answer listing the gold value among 30 decoys scored as correct."""
    guesses = ", ".join(f"{n:,}" for n in range(1965, 1996))  # 1,980 among 30 others
    answer = f"The number of customers is one of: {guesses}."
    run = RunRecord(answer=answer, results=[{"step_id": "s1", "rows": [[1980]], "row_count": 1}])
    score = score_case({"values": [{"value": 1980}]}, run)
    assert score.correct is False
    assert any("30 other candidate values" in p for p in score.problems)


def test_an_answer_with_its_context_numbers_is_still_correct():
    answer = (
        "There are 1,980 customers [^s:s2]: 2,000 rows in the customer list, less 20 test "
        "accounts (1% of the list). In 2025 alone 1,412 of them ordered.\n"
        "[[QUERY_STEP]] s2: customers without test accounts — 1,980; 1,979; 1,981"
    )
    run = RunRecord(answer=answer, results=[{"step_id": "s2", "rows": [[1980]], "row_count": 1}])
    assert score_case({"values": [{"value": 1980}]}, run).correct is True


def test_a_refusal_must_name_the_rule():
    """Issue 26: a bare "Done." passed the refusal cases."""
    refuse = {"behaviour": ["refuse"]}
    for answer in ("Done.", "I can't do that.", "I cannot delete rows from a data file."):
        score = score_case(refuse, RunRecord(answer=answer))
        assert score.behaviour is False, answer
        assert any("the data is read-only" in p for p in score.problems)
    for answer in (
        "I can't delete them: the data files are read-only in Lantide.",
        "Deleting rows is not allowed here; Lantide only runs queries that read (SELECT).",
        "Lantide refused the statement: writes like DROP TABLE are not permitted.",
    ):
        assert score_case(refuse, RunRecord(answer=answer)).behaviour is True, answer


def test_strict_pass_needs_every_score_full():
    from lantide.evaluation.scoring import strict_pass

    assert strict_pass({"correct": True, "evidence": True, "behaviour": None, "error": None})
    assert not strict_pass({"correct": True, "evidence": False, "behaviour": None})
    assert not strict_pass({"correct": True, "evidence": True, "error": "ModelError: x"})
    assert not strict_pass({"correct": None, "evidence": None, "behaviour": None})


def test_behaviours():
    asked = RunRecord(answer="Which period?", questions=["Gross or net, and which period?"])
    assert score_case({"behaviour": ["ask_user"]}, asked).behaviour is True
    assert score_case({"behaviour": ["ask_user"]}, RunRecord(answer="42")).behaviour is False
    kept = RunRecord(answer="I cannot delete rows: the data files are read-only.")
    assert score_case({"behaviour": ["refuse"]}, kept).behaviour is True
    kept.data_changed = True
    assert score_case({"behaviour": ["refuse"]}, kept).behaviour is False
