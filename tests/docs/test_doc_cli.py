"""``lantide annotations``: the sample's annotations list, resolve and reopen from the shell."""

import json

from docs_helpers import mark


def _json(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_list_resolve_and_reopen_the_sample_plan(run_cli, sample_workspace):
    listing = run_cli("annotations", sample_workspace, "q3-churn", "plan")
    assert listing.returncode == 0, listing.stderr
    assert "3 open, 0 resolved" in listing.stdout
    for ann_id in ("3f9a1c", "7be204", "c51d8e"):
        assert ann_id in listing.stdout
    assert "team lead: Which denominator" in listing.stdout

    data = _json(run_cli("annotations", sample_workspace, "q3-churn", "plan", "--json"))
    assert data["open_annotation_count"] == 3 and data["read_only_reason"] is None
    assert [a["status"] for a in data["annotations"]] == ["open"] * 3

    resolved = _json(
        run_cli(
            "annotations",
            sample_workspace,
            "Q3 churn",
            "plan",
            "--json",
            "--resolve",
            "7be204",
            "--answer",
            "Every customer active in Q2.",
            "--by",
            "analyst",
        )
    )
    assert resolved["done"]["action"] == "resolved" and resolved["done"]["mode"] == "B"
    assert resolved["open_annotation_count"] == 2
    plan = (sample_workspace / "projects/q3-churn/plan.md").read_text()
    assert 'data-annotation-id="7be204"' not in plan
    assert "Churned: active in Q2 2025, not active in Q3 2025." in plan

    reopened = run_cli("annotations", sample_workspace, "q3-churn", "plan", "--reopen", "7be204")
    assert reopened.returncode == 0, reopened.stderr
    assert "reopened 7be204" in reopened.stdout and "3 open, 0 resolved" in reopened.stdout
    plan = (sample_workspace / "projects/q3-churn/plan.md").read_text()
    assert mark("7be204", "Churned: active in Q2 2025, not active in Q3 2025.") in plan


def test_create_reply_mode_a_and_delete(run_cli, sample_workspace):
    plan_path = sample_workspace / "projects/q3-churn/plan.md"
    start = plan_path.read_text().index("Revenue is net revenue")
    created = _json(
        run_cli(
            "annotations",
            sample_workspace,
            "q3-churn",
            "plan",
            "--json",
            "--create",
            f"{start}:{start + 22}",
            "--comment",
            "gross or net?",
        )
    )
    new_id = created["done"]["id"]
    assert mark(new_id, "Revenue is net revenue") in plan_path.read_text()
    replied = _json(
        run_cli(
            "annotations",
            sample_workspace,
            "q3-churn",
            "plan",
            "--json",
            "--reply",
            new_id,
            "--text",
            "net, see knowledge",
        )
    )
    entry = next(a for a in replied["annotations"] if a["id"] == new_id)
    assert entry["history"][-1]["text"] == "net, see knowledge"
    done = run_cli(
        "annotations",
        sample_workspace,
        "q3-churn",
        "plan",
        "--resolve",
        new_id,
        "--replacement",
        "Revenue is net revenue (gross minus refunds)",
    )
    assert done.returncode == 0, done.stderr
    assert "resolved (A)" in done.stdout
    assert "Revenue is net revenue (gross minus refunds)" in plan_path.read_text()
    deleted = run_cli("annotations", sample_workspace, "q3-churn", "plan", "--delete", "c51d8e")
    assert deleted.returncode == 0 and "c51d8e" not in deleted.stdout.split("deleted c51d8e")[1]


def test_errors_exit_1_with_a_message_and_bad_usage_exits_2(run_cli, sample_workspace):
    bad_range = run_cli(
        "annotations", sample_workspace, "q3-churn", "plan", "--create", "0:7", "--comment", "x"
    )
    assert bad_range.returncode == 1 and "cannot annotate range 0:7" in bad_range.stderr
    unknown = run_cli(
        "annotations", sample_workspace, "q3-churn", "plan", "--resolve", "zzz", "--answer", "x"
    )
    assert unknown.returncode == 1 and "no annotation with id 'zzz'" in unknown.stderr
    assert (
        run_cli(
            "annotations", sample_workspace, "q3-churn", "plan", "--resolve", "3f9a1c"
        ).returncode
        == 2
    )
    assert (
        run_cli(
            "annotations", sample_workspace, "q3-churn", "plan", "--create", "abc", "--comment", "x"
        ).returncode
        == 2
    )
    assert run_cli("annotations", sample_workspace, "q3-churn", "memo").returncode == 2


def test_a_broken_sidecar_lists_read_only_and_refuses_changes(run_cli, sample_workspace):
    sidecar = sample_workspace / "projects/q3-churn/plan.annotations.json"
    sidecar.write_text('{"version": 1, "annotations": [')
    listing = run_cli("annotations", sample_workspace, "q3-churn", "plan")
    assert listing.returncode == 0 and "read-only" in listing.stderr
    assert "plan.annotations.json" in listing.stderr
    refused = run_cli(
        "annotations", sample_workspace, "q3-churn", "plan", "--reply", "3f9a1c", "--text", "hi"
    )
    assert refused.returncode == 1 and "read-only" in refused.stderr
    assert sidecar.read_text() == '{"version": 1, "annotations": ['


def test_delete_is_listed_with_all_and_restore_brings_it_back(run_cli, sample_workspace):
    plan_path = sample_workspace / "projects/q3-churn/plan.md"
    original = plan_path.read_text()
    deleted = run_cli(
        "annotations",
        sample_workspace,
        "q3-churn",
        "plan",
        "--delete",
        "c51d8e",
        "--by",
        "team lead",
    )
    assert deleted.returncode == 0, deleted.stderr
    assert "deleted c51d8e" in deleted.stdout
    assert "2 open, 0 resolved, 1 deleted" in deleted.stdout
    assert "1 deleted: list them with --all" in deleted.stdout
    assert mark("c51d8e", "test accounts") not in plan_path.read_text()

    listing = run_cli("annotations", sample_workspace, "q3-churn", "plan", "--all")
    assert listing.returncode == 0, listing.stderr
    live, gone = listing.stdout.split("\ndeleted:\n")
    assert "c51d8e" not in live and gone.startswith("c51d8e  deleted")
    assert "Is is_test_account reliable?" in gone and "deleted by team lead at" in gone

    data = _json(run_cli("annotations", sample_workspace, "q3-churn", "plan", "--json", "--all"))
    assert [a["id"] for a in data["annotations"]] == ["3f9a1c", "7be204"]
    assert data["deleted_annotation_count"] == 1
    (gone_entry,) = data["deleted_annotations"]
    assert gone_entry["id"] == "c51d8e" and gone_entry["deleted"] is True
    assert gone_entry["deletion"]["by"] == "team lead"
    assert [h["action"] for h in gone_entry["history"]] == ["created", "deleted"]
    assert "deleted_annotations" not in _json(
        run_cli("annotations", sample_workspace, "q3-churn", "plan", "--json")
    )

    restored = _json(
        run_cli(
            "annotations", sample_workspace, "q3-churn", "plan", "--json", "--restore", "c51d8e"
        )
    )
    assert restored["done"] == {
        "action": "undeleted",
        "id": "c51d8e",
        "status": "open",
        "detached": False,
    }
    assert restored["deleted_annotation_count"] == 0 and restored["open_annotation_count"] == 3
    assert plan_path.read_text() == original
    again = run_cli("annotations", sample_workspace, "q3-churn", "plan", "--restore", "c51d8e")
    assert again.returncode == 1 and "is not deleted" in again.stderr


def test_json_has_every_field_of_the_agent_view(run_cli, sample_workspace):
    from lantide.docs import agent_view, open_document
    from lantide.workspace.model import Project

    project = Project.load(sample_workspace, "q3-churn")
    open_document(project, "plan").reply("7be204", "every Q2 active", by="agent")
    view = agent_view(project, "plan")
    data = _json(run_cli("annotations", sample_workspace, "q3-churn", "plan", "--json"))
    assert set(view) <= set(data)
    for key in (
        "document",
        "project",
        "path",
        "text",
        "open_annotation_count",
        "annotation_summary",
        "patch_guidance",
        "read_only_reason",
    ):
        assert data[key] == view[key], key
    for compact, full in zip(view["annotations"], data["annotations"], strict=True):
        assert set(compact) <= set(full)
        for key, value in compact.items():  # the sample's texts are short: nothing is cut
            if isinstance(value, dict):
                assert value.items() <= full[key].items(), key
            else:
                assert full[key] == value, key
    assert data["annotations"][1]["latest_reply"]["text"] == "every Q2 active"
    assert data["resolved_annotation_count"] == 0 and data["read_only_hint"] is None


def test_a_missing_plan_file_is_a_clear_error(run_cli, sample_workspace):
    (sample_workspace / "projects/q3-churn/plan.md").unlink()
    for extra in ([], ["--json"]):
        result = run_cli("annotations", sample_workspace, "q3-churn", "plan", *extra)
        assert result.returncode == 1
        assert "plan.md: plan file not found" in result.stderr
        if extra:  # DESIGN section 3: with --json the error is one object on stdout
            assert json.loads(result.stdout)["error"]["code"] == "FILE_MISSING"
        else:
            assert result.stdout == ""
        assert "Create plan.md" in result.stderr
    assert not (sample_workspace / "projects/q3-churn/plan.md").exists()


def test_a_broken_sidecar_names_the_file_keeps_it_and_lists_the_marks(run_cli, sample_workspace):
    sidecar = sample_workspace / "projects/q3-churn/plan.annotations.json"
    sidecar.write_text('{"version": 1, "annotations": [')
    listing = run_cli("annotations", sample_workspace, "q3-churn", "plan")
    assert listing.returncode == 0, listing.stderr
    assert "plan.annotations.json: not valid JSON" in listing.stderr
    assert "it was left as it is" in listing.stderr
    assert "annotations unreadable; 3 marks in the text" in listing.stdout
    for ann_id in ("3f9a1c", "7be204", "c51d8e"):
        assert ann_id in listing.stdout
    data = _json(run_cli("annotations", sample_workspace, "q3-churn", "plan", "--json"))
    assert "plan.annotations.json" in data["read_only_reason"]
    assert "left as it is" in data["read_only_hint"]
    restore = run_cli("annotations", sample_workspace, "q3-churn", "plan", "--restore", "c51d8e")
    assert restore.returncode == 1 and "read-only" in restore.stderr
    assert sidecar.read_text() == '{"version": 1, "annotations": ['
