"""``lantide knowledge`` through the real command line."""

from __future__ import annotations

import json

from knowledge_samples import sized_knowledge

KNOWLEDGE = "projects/q3-churn/knowledge.md"


def test_lists_entries_with_numbers_and_status(sample_workspace, run_cli):
    out = run_cli("knowledge", sample_workspace)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"Project knowledge  {KNOWLEDGE}  (flat mode: ")
    assert "  3  QUEUED   Rules: The fiscal year starts on 1 April." in lines
    assert (
        "  1  enabled  Rules: Revenue means net revenue: gross minus discounts and refunds."
    ) in lines
    assert any(line.startswith("User knowledge") and "(no file yet)" in line for line in lines)
    assert "1 queued: approve with --approve N, reject with --reject N." in lines


def test_json_listing(sample_workspace, run_cli):
    out = run_cli("knowledge", sample_workspace, "--json")
    data = json.loads(out.stdout)
    assert data["project"] == "Q3 churn" and data["mode"] == "flat" and data["action"] is None
    project = next(f for f in data["files"] if f["scope"] == "project")
    assert [(e["ref"], e["status"]) for e in project["entries"]] == [
        ("1", "enabled"),
        ("2", "enabled"),
        ("3", "queued"),
        ("4", "enabled"),
        ("5", "enabled"),
    ]


def test_approve_and_reject(sample_workspace, run_cli):
    path = sample_workspace / KNOWLEDGE
    before = path.read_text(encoding="utf-8")
    out = run_cli("knowledge", sample_workspace, "--approve", "3")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Approved 3: The fiscal year starts on 1 April.")
    after = path.read_text(encoding="utf-8")
    assert after == before.replace("- [queued] The fiscal year", "- The fiscal year")
    assert "  3  enabled  Rules: The fiscal year starts on 1 April." in out.stdout

    out = run_cli("knowledge", sample_workspace, "--reject", "3")
    assert out.returncode == 1
    assert "entry 3 is Enabled; only Queued entries can be rejected" in out.stderr
    assert path.read_text(encoding="utf-8") == after

    out = run_cli(
        "knowledge", sample_workspace, "--add", "Churn is 90 days without orders.", "--json"
    )
    added = json.loads(out.stdout)["action"]["entries"][0]
    assert (added["ref"], added["section"], added["status"]) == ("4", "Rules", "enabled")


def test_reject_a_queued_entry(sample_workspace, run_cli):
    out = run_cli("knowledge", sample_workspace, "--reject", "3", "--json")
    data = json.loads(out.stdout)
    assert data["action"]["entries"][0]["text"] == "The fiscal year starts on 1 April."
    text = (sample_workspace / KNOWLEDGE).read_text(encoding="utf-8")
    assert "fiscal year" not in text and "Revenue means net revenue" in text


def test_edit_remove_and_user_knowledge(sample_workspace, run_cli, isolated_user_dirs):
    out = run_cli(
        "knowledge", sample_workspace, "--edit", "4", "customers.region holds ISO 3166-2 codes."
    )
    assert out.returncode == 0, out.stderr
    assert "Edited 4: customers.region holds ISO 3166-2 codes." in out.stdout
    out = run_cli(
        "knowledge",
        sample_workspace,
        "--user",
        "--add",
        "Prefer ISO 8601 dates.",
        "--section",
        "info",
    )
    assert out.returncode == 0, out.stderr
    user_file = isolated_user_dirs / "config" / "knowledge.md"
    assert "## Info\n- Prefer ISO 8601 dates.\n" in user_file.read_text(encoding="utf-8")
    out = run_cli("knowledge", sample_workspace, "--remove", "u1")
    assert out.returncode == 0 and "Removed u1: Prefer ISO 8601 dates." in out.stdout
    assert "Prefer" not in user_file.read_text(encoding="utf-8")


def test_errors_exit_1_with_a_hint(sample_workspace, run_cli):
    out = run_cli("knowledge", sample_workspace, "--approve", "42")
    assert out.returncode == 1
    assert "no knowledge entry 42" in out.stderr and "lantide knowledge" in out.stderr
    out = run_cli("knowledge", sample_workspace, "--project", "nope")
    assert out.returncode == 1 and "no project 'nope'" in out.stderr
    out = run_cli("knowledge", sample_workspace, "--approve", "1", "--reject", "2")
    assert out.returncode == 2  # one action at a time


def test_layer_shows_enabled_not_queued_and_catalog_over_the_threshold(sample_workspace, run_cli):
    out = run_cli("knowledge", sample_workspace, "--layer")
    assert out.returncode == 0, out.stderr
    assert '"Revenue means net revenue: gross minus discounts and refunds."' in out.stdout
    assert "fiscal year" not in out.stdout
    assert out.stdout.startswith("# knowledge layer: flat mode")

    (sample_workspace / KNOWLEDGE).write_text(sized_knowledge(5200), encoding="utf-8")
    out = run_cli("knowledge", sample_workspace, "--layer", "--json")
    layer = json.loads(out.stdout)["layer"]
    assert layer["mode"] == "catalog" and layer["offers_tool"]
    assert '- "Rules" (Rules, ' in layer["text"]
    out = run_cli("knowledge", sample_workspace)
    assert "catalog mode: 5,200 of 5,000 characters" in out.stdout
    assert "no ### headings" in out.stdout
    out = run_cli("knowledge", sample_workspace, "--expand", "Rules", "--json")
    assert json.loads(out.stdout)["count"] > 50


def test_problems_are_listed_with_line_numbers(sample_workspace, run_cli):
    (sample_workspace / KNOWLEDGE).write_text(
        "## Rules\n- fine\nNot an entry, just prose.\n\nAnother paragraph.\n", encoding="utf-8"
    )
    out = run_cli("knowledge", sample_workspace)
    assert out.returncode == 0
    assert "  warning: line 5: text under '## Rules' that is not a list item" in out.stdout


def test_lantide_prompt_shows_enabled_not_queued_and_the_catalog_over_5000(
    sample_workspace, run_cli
):
    out = run_cli("prompt", sample_workspace)
    assert out.returncode == 0, out.stderr
    assert '"Revenue means net revenue: gross minus discounts and refunds."' in out.stdout
    assert "fiscal year starts on 1 April" not in out.stdout
    assert "expand_knowledge_catalog" not in out.stdout.split("===== tools", 1)[1]
    (sample_workspace / KNOWLEDGE).write_text(sized_knowledge(5200), encoding="utf-8")
    out = run_cli("prompt", sample_workspace)
    assert out.returncode == 0, out.stderr
    assert '- "Rules" (Rules, ' in out.stdout  # the catalog index, not the entries
    assert "Fact 0:" not in out.stdout
    tools_section = out.stdout.split("===== tools", 1)[1]
    assert "expand_knowledge_catalog" in tools_section
