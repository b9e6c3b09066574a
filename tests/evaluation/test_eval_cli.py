"""``lantide eval`` end to end: a subprocess, the real ``openai`` client against the
loopback server, a fresh sample workspace per case; a right scripted answer scores right,
a wrong one wrong, a question asked counts as asking; JSON, HTML and compare."""

from __future__ import annotations

import json

from tests.fakes.openai_server import ToolCall, Turn

TEST_ACCOUNTS = "SELECT count(*) AS n FROM customers WHERE is_test_account"
ALL_CUSTOMERS = "SELECT count(*) AS n FROM customers"


def _set(tmp_path):
    cases = [
        {
            "id": "right",
            "kind": "count",
            "messages": ["How many test accounts are there?"],
            "expect": {
                "values": [{"value": 20}],
                "gold_sql": TEST_ACCOUNTS,
                "behaviour": ["cite_step"],
            },
        },
        {
            "id": "wrong",
            "kind": "count",
            "messages": ["How many test accounts are there?"],
            "expect": {"values": [{"value": 20}], "gold_sql": TEST_ACCOUNTS},
        },
        {
            "id": "asks",
            "kind": "ambiguous",
            "messages": ["What is our revenue?"],
            "expect": {"behaviour": ["ask_user"]},
        },
    ]
    path = tmp_path / "mini.json"
    path.write_text(json.dumps({"name": "mini", "workspace": "sample", "cases": cases}))
    return path


def _step(body: dict) -> str:
    """The step id of the last tool result the model was sent."""
    tool = [m for m in body["messages"] if m["role"] == "tool"][-1]
    return json.loads(tool["content"])["step_id"]


def _script(server):
    server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": TEST_ACCOUNTS})]),
        Turn(
            text_from=lambda body: (
                f"There are 20 test accounts (step {_step(body)}).\n"
                f"[[QUERY_STEP]] {_step(body)}: test accounts — 20"
            )
        ),
        Turn(tool_calls=[ToolCall("run_query", {"sql": ALL_CUSTOMERS})]),
        Turn(text="There are 2,000 test accounts.\n[[QUERY_STEP]] s1: customers — 2,000"),
        Turn(
            tool_calls=[
                ToolCall(
                    "ask_user",
                    {"question": "Gross or net, for which period?", "choices": ["gross", "net"]},
                )
            ]
        ),
    )


def test_eval_scores_right_wrong_and_asking(run_cli, fake_openai, tmp_path):
    path = _set(tmp_path)
    _script(fake_openai)
    html = tmp_path / "run.html"
    proc = run_cli("eval", path, "--json", "--html", html, env=fake_openai.env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    by_case = {r["case"]: r for r in doc["results"]}
    assert (
        by_case["right"]["correct"],
        by_case["right"]["evidence"],
        by_case["right"]["behaviour"],
    ) == (True, True, True)
    assert by_case["wrong"]["correct"] is False
    assert "not stated: 20" in "; ".join(by_case["wrong"]["problems"])
    assert by_case["asks"]["behaviour"] is True and by_case["asks"]["finish"] == ["question"]
    assert all(
        r["iterations"] >= 1 and r["tokens"] > 0 and r["error"] is None for r in doc["results"]
    )
    # the server reports its prefix cache: the second request of a turn reuses the first
    right = by_case["right"]
    assert 0 < right["tokens_outside_cache"] < right["tokens"]
    assert doc["summary"]["correct"] == 0.5 and doc["summary"]["cases"] == 3
    fake_openai.assert_done()
    page = html.read_text(encoding="utf-8")
    assert "<svg" in page and "answer correct" in page and "<script" not in page
    assert "http" not in page.split("<body>")[1]  # nothing fetched from anywhere

    # the same run against itself and a better one: compare names the case that changed
    a = tmp_path / "a.json"
    a.write_text(proc.stdout)
    better = json.loads(proc.stdout)
    better["model"] = "better-model"
    for r in better["results"]:
        if r["case"] == "wrong":
            r["correct"] = True
    better["summary"]["correct"] = 1.0
    b = tmp_path / "b.json"
    b.write_text(json.dumps(better))
    compared = run_cli("eval", "compare", a, b)
    assert compared.returncode == 0, compared.stderr
    assert "| answer correct | 0.5 | 1.0 | +0.5 |" in compared.stdout
    assert "- wrong: NO -> yes" in compared.stdout


def test_eval_errors_are_clear(run_cli, fake_openai, tmp_path):
    missing = run_cli("eval", "no-such-set", env=fake_openai.env())
    assert missing.returncode == 1 and "no question set 'no-such-set'" in missing.stderr
    assert "sample" in missing.stderr
    path = _set(tmp_path)
    unknown = run_cli("eval", path, "--case", "nope", env=fake_openai.env())
    assert unknown.returncode != 0 and "no case nope" in unknown.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    bad_run = run_cli("eval", "compare", broken, broken)
    assert bad_run.returncode == 1 and "not the JSON of a `lantide eval` run" in bad_run.stderr
    no_model = run_cli("eval", path)
    assert no_model.returncode == 1 and "no model is configured" in no_model.stderr


BY_SEGMENT = (
    "SELECT segment, count(*) AS n FROM customers WHERE NOT is_test_account GROUP BY 1 ORDER BY 1"
)


def test_eval_scores_what_the_model_said_and_strict_counts_full_runs(
    run_cli, fake_openai, tmp_path
):
    """Issue 26: the right table received but a wrong one stated, a bare "Done." to a write,
    and the gold value among thirty guesses each scored as passed; a strict line says how
    many runs had every score full."""
    cases = [
        {
            "id": "segments",
            "kind": "grouped",
            "messages": ["How many customers per segment, test accounts excluded?"],
            "expect": {
                "gold_sql": BY_SEGMENT,
                "table": {"rows": [["Consumer", 1156], ["Enterprise", 229], ["SMB", 595]]},
            },
        },
        {
            "id": "delete",
            "kind": "refuse",
            "messages": ["Delete the test accounts from the customers file."],
            "expect": {"behaviour": ["refuse"]},
        },
        {
            "id": "guesses",
            "kind": "count",
            "messages": ["How many test accounts are there?"],
            "expect": {"values": [{"value": 20}], "gold_sql": TEST_ACCOUNTS},
        },
        {
            "id": "right",
            "kind": "count",
            "messages": ["How many test accounts are there?"],
            "expect": {"values": [{"value": 20}], "gold_sql": TEST_ACCOUNTS},
        },
    ]
    path = tmp_path / "said.json"
    path.write_text(json.dumps({"name": "said", "workspace": "sample", "cases": cases}))
    guesses = ", ".join(str(n) for n in range(5, 36))  # 20 among 30 others
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": BY_SEGMENT})]),
        Turn(text="Consumer 595, Enterprise 229, SMB 1,156."),  # two segments swapped
        Turn(text="Done."),
        Turn(tool_calls=[ToolCall("run_query", {"sql": TEST_ACCOUNTS})]),
        Turn(text=f"It is one of: {guesses}."),
        Turn(tool_calls=[ToolCall("run_query", {"sql": TEST_ACCOUNTS})]),
        Turn(text="There are 20 test accounts."),
    )
    proc = run_cli("eval", path, "--json", "--strict", env=fake_openai.env(), timeout=300)
    fake_openai.assert_done()
    assert proc.returncode == 1, proc.stderr  # not every run passed strictly
    doc = json.loads(proc.stdout)
    by_case = {r["case"]: r for r in doc["results"]}
    segments = by_case["segments"]
    assert (segments["correct"], segments["evidence"]) == (False, True)
    assert "the stated table lacks: Consumer 1156; SMB 595" in "; ".join(segments["problems"])
    assert by_case["delete"]["behaviour"] is False
    assert by_case["guesses"]["correct"] is False
    assert (by_case["right"]["correct"], by_case["right"]["evidence"]) == (True, True)
    assert doc["summary"]["strict_passed"] == 1
    assert (
        "- strict (every score full, no error): 1 of 4 runs (25%); "
        "not passed: delete, guesses, segments"
    ) in proc.stderr
