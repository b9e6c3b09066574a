"""One bad file is a problem for itself only (issue 11, item 9, and its neighbours):
a tab that is not UTF-8 does not block Source Run, the tab list or lineage of the other
tabs; a broken project.json does not hide the other projects; a bad line in one log does
not hide the others. The bad file is kept byte for byte."""

from __future__ import annotations

import json

BAD_TAB = b"SELECT 'caf\xe9' AS latin1_text\n"  # saved as Latin-1 by some editor


def _add_bad_tab(ws, name="broken"):
    path = ws / "projects" / "q3-churn" / "sql" / f"{name}.sql"
    path.write_bytes(BAD_TAB)
    return path


def test_tab_list_shows_every_tab_and_names_the_bad_one(sample_workspace, run_cli):
    bad = _add_bad_tab(sample_workspace)
    out = run_cli("tab", "list", sample_workspace, "q3-churn", "--json")
    assert out.returncode == 0, out.stderr
    tabs = {t["tab"]: t for t in json.loads(out.stdout)["tabs"]}
    assert set(tabs) == {"broken", "clean_orders", "customer_quarters", "q3_churn_by_region"}
    assert "not UTF-8" in tabs["broken"]["error"]["message"]
    assert str(bad) in tabs["broken"]["error"]["message"]
    assert tabs["clean_orders"]["error"] is None
    text = run_cli("tab", "list", sample_workspace, "q3-churn")
    assert text.returncode == 0, text.stderr
    assert "broken" in text.stdout and "not UTF-8" in text.stdout + text.stderr
    assert bad.read_bytes() == BAD_TAB


def test_lineage_of_the_other_tabs_survives_a_bad_tab(sample_workspace, run_cli):
    _add_bad_tab(sample_workspace)
    out = run_cli("tab", "lineage", sample_workspace, "q3-churn", "--json")
    assert out.returncode == 0, out.stderr
    graph = json.loads(out.stdout)
    assert {"from": "clean_orders", "to": "customer_quarters"} in graph["edges"]
    broken = next(t for t in graph["tabs"] if t["tab"] == "broken")
    assert "not UTF-8" in broken["error"]["message"]
    assert graph["order"].index("clean_orders") < graph["order"].index("q3_churn_by_region")


def test_source_run_of_another_tab_succeeds_and_the_bad_tab_fails_alone(sample_workspace, run_cli):
    bad = _add_bad_tab(sample_workspace)
    out = run_cli("tab", "source-run", sample_workspace, "q3-churn", "q3_churn_by_region", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] and report["order"] == [
        "clean_orders",
        "customer_quarters",
        "q3_churn_by_region",
    ]
    run = run_cli("tab", "run", sample_workspace, "q3-churn", "broken")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "not UTF-8" in run.stderr and str(bad) in run.stderr
    assert bad.read_bytes() == BAD_TAB


def test_a_tab_that_reads_the_bad_tab_is_not_run_and_says_why(sample_workspace, run_cli):
    _add_bad_tab(sample_workspace, "aaa_bad")
    assert (
        run_cli(
            "tab", "create", sample_workspace, "q3-churn", "reads_bad", "SELECT * FROM aaa_bad"
        ).returncode
        == 0
    )
    out = run_cli("tab", "source-run", sample_workspace, "q3-churn", "reads_bad", "--json")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert not report["ok"]


def test_project_list_shows_the_good_projects_and_names_the_broken_one(sample_workspace, run_cli):
    assert run_cli("project", sample_workspace, "create", "pricing").returncode == 0
    broken = sample_workspace / "projects" / "pricing" / "project.json"
    broken.write_bytes(b'{"name": "pricing", "status": ')
    out = run_cli("project", sample_workspace, "list")
    assert out.returncode == 0, out.stderr
    assert "q3-churn" in out.stdout
    assert str(broken) in out.stderr and "not valid JSON" in out.stderr
    data = json.loads(run_cli("project", sample_workspace, "list", "--json").stdout)
    assert [p["dir"] for p in data["projects"]] == ["q3-churn"]
    assert data["problems"][0]["dir"] == "pricing"
    assert "not valid JSON" in data["problems"][0]["message"]
    assert broken.read_bytes() == b'{"name": "pricing", "status": '
    # a project with a bad status (a newer version's) is a problem of its own, too
    broken.write_text('{"name": "pricing", "status": "someday"}')
    out = run_cli("project", sample_workspace, "list")
    assert out.returncode == 0 and "q3-churn" in out.stdout and "someday" in out.stderr


def test_a_non_utf8_line_in_one_ledger_does_not_hide_the_others(sample_workspace, run_cli):
    ledger = sample_workspace / ".lantide" / "ledger"
    ledger.mkdir(parents=True, exist_ok=True)
    good = {
        "step_id": "s1",
        "conversation_id": "c-good",
        "tool": "run_query",
        "summary": "counted the customers",
    }
    (ledger / "c-good.jsonl").write_text(json.dumps(good) + "\n")
    (ledger / "c-bad.jsonl").write_bytes(
        json.dumps({**good, "step_id": "s2", "conversation_id": "c-bad"}).encode()
        + b"\n"
        + b'{"step_id": "s3", "summary": "caf\xe9"}\n'
    )
    out = run_cli("ledger", sample_workspace, "--json")
    assert out.returncode == 0, out.stderr
    steps = {s["step_id"] for s in json.loads(out.stdout)["steps"]}
    assert {"s1", "s2"} <= steps


def test_a_non_utf8_conversation_does_not_hide_the_others(sample_workspace):
    from lantide.agent.conversation import list_conversations

    conversations = sample_workspace / ".lantide" / "conversations"
    conversations.mkdir(parents=True, exist_ok=True)
    ids = ["20261130-100000-aaaa", "20261130-110000-bbbb"]
    for cid in ids:
        (conversations / f"{cid}.jsonl").write_text(
            json.dumps(
                {
                    "type": "conversation",
                    "id": cid,
                    "created_at": "2026-11-30T10:00:00Z",
                    "version": 1,
                }
            )
            + "\n"
        )
    with open(conversations / f"{ids[0]}.jsonl", "ab") as fh:
        fh.write(b'{"type": "title", "title": "caf\xe9"}\n')
    listed = [c.id for c in list_conversations(conversations)]
    assert listed == ids


def test_a_conversation_with_a_line_that_is_not_an_object_is_listed_with_the_others(
    sample_workspace, run_cli
):
    from lantide.agent.conversation import list_conversations

    conversations = sample_workspace / ".lantide" / "conversations"
    conversations.mkdir(parents=True, exist_ok=True)
    ids = ["20261130-100000-aaaa", "20261130-110000-bbbb"]
    for cid in ids:
        (conversations / f"{cid}.jsonl").write_text(
            json.dumps(
                {
                    "type": "conversation",
                    "id": cid,
                    "created_at": "2026-11-30T10:00:00Z",
                    "version": 1,
                }
            )
            + "\n"
        )
    with open(conversations / f"{ids[0]}.jsonl", "a") as fh:
        fh.write('["a list, not a record"]\n"a string"\n{"type": "message", "turn": "x"}\n')
    assert [c.id for c in list_conversations(conversations)] == ids
    out = run_cli("ledger", sample_workspace, "--json")
    assert out.returncode == 0, out.stderr
