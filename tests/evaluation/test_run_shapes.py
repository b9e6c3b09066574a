"""The JSON of an evaluation run has the shape its TypedDicts declare (issue 31)."""

from __future__ import annotations

from dataclasses import asdict

from lantide.evaluation import report
from lantide.evaluation.runner import CaseResult, CaseResultDict
from tests.query.shape_check import assert_shape


def _result(**changes: object) -> CaseResult:
    fields: dict[str, object] = {
        "case": "customers-total",
        "kind": "lookup",
        "repeat": 1,
        "correct": True,
        "evidence": None,
        "behaviour": False,
        "tool_errors": 0,
        "iterations": 3,
        "tokens": 1200,
        "tokens_outside_cache": None,
        "seconds": 2.5,
        "agent_seconds": 2.0,
        "finish": ["stop"],
        "problems": ["behaviour cite_step not seen"],
        "error": None,
        **changes,
    }
    return CaseResult(**fields)


def test_a_case_result_is_written_as_all_its_fields():
    result = _result()
    written = result.to_dict()
    assert written == asdict(result)  # every field, in the dataclass's order
    assert list(written) == list(asdict(result))
    assert set(written) == set(CaseResultDict.__annotations__)
    assert_shape(written, CaseResultDict)


def test_a_run_document_and_its_summary():
    doc = report.document(
        "sample", "model-x", [_result().to_dict(), _result(error="boom").to_dict()]
    )
    assert doc["summary"]["cases"] == 2 and doc["summary"]["errors"] == 1
    assert doc["summary"]["correct"] == 1.0 and doc["summary"]["correct_of"] == 2
    assert doc["summary"]["evidence"] is None
    assert_shape(doc, report.EvalRun)
