"""Text edits: the mark is the truth, the quote the fallback; nothing is lost or doubled."""

from docs_helpers import disk_text, entry, mark, read_sidecar

from lantide.docs import open_document


def _project(make_project, text, *entries):
    return make_project(text, {"version": 1, "annotations": list(entries)})


def test_an_edit_that_keeps_the_marks_keeps_every_annotation_and_refreshes_spans(sample_project):
    doc = open_document(sample_project, "plan")
    new_text = "Intro line added at the top.\n\n" + doc.text.replace(
        "## Checks", "## Sanity checks"
    )
    report = doc.save_text(new_text, by="user")
    assert report.text == new_text and not report.text_adjusted
    assert report.repairs == [] and sorted(report.kept) == ["3f9a1c", "7be204", "c51d8e"]
    text = disk_text(sample_project)
    for e in read_sidecar(sample_project)["annotations"]:
        start, end = e["anchor"]["span"]
        assert text[start:end] == e["quote"]


def test_a_lost_mark_is_reanchored_when_its_quote_occurs_once(make_project):
    text = f"Churn counts {mark('ra0001', 'active customers')} in Q2.\n"
    project = _project(make_project, text, entry("ra0001", "active customers"))
    doc = open_document(project, "plan")
    edited = "Churn counts active customers in Q2 and Q3.\n"  # another editor dropped the tags
    report = doc.save_text(edited)
    assert report.ids("reanchored") == ["ra0001"] and report.text_adjusted
    assert (
        disk_text(project) == f"Churn counts {mark('ra0001', 'active customers')} in Q2 and Q3.\n"
    )
    saved = read_sidecar(project)["annotations"][0]
    assert saved["status"] == "open" and "detached" not in saved
    assert saved["history"][-1]["action"] == "reanchored"


def test_a_lost_mark_whose_quote_is_ambiguous_or_gone_is_detached_not_deleted(make_project):
    text = f"{mark('dt0001', 'churn')} and {mark('dt0002', 'revenue')} matter.\n"
    project = _project(make_project, text, entry("dt0001", "churn"), entry("dt0002", "revenue"))
    doc = open_document(project, "plan")
    report = doc.save_text("churn and churn matter; sales too.\n")
    assert sorted(report.ids("detached")) == ["dt0001", "dt0002"]
    saved = {e["id"]: e for e in read_sidecar(project)["annotations"]}
    assert saved["dt0001"]["detached"] is True and saved["dt0001"]["status"] == "open"
    assert "more than once" in saved["dt0001"]["history"][-1]["text"]
    assert "no longer in the text" in saved["dt0002"]["history"][-1]["text"]
    assert disk_text(project) == "churn and churn matter; sales too.\n"


def test_a_quote_that_now_sits_in_code_is_detached(make_project):
    text = f"Use {mark('cd0001', 'clean_orders')} first.\n"
    project = _project(make_project, text, entry("cd0001", "clean_orders"))
    doc = open_document(project, "plan")
    report = doc.save_text("Use `clean_orders` first.\n")
    assert report.ids("detached") == ["cd0001"]
    assert "cannot stand" in report.repairs[0].detail


def test_a_mark_without_entry_gets_a_recreated_entry(make_project):
    text = f"Known {mark('kn0001', 'one')}.\n"
    project = _project(make_project, text, entry("kn0001", "one"))
    doc = open_document(project, "plan")
    report = doc.save_text(text + f"Pasted {mark('zz9999', 'from elsewhere')}.\n")
    assert report.ids("recreated") == ["zz9999"]
    saved = {e["id"]: e for e in read_sidecar(project)["annotations"]}
    assert saved["zz9999"]["recreated"] is True and saved["zz9999"]["status"] == "open"
    assert saved["zz9999"]["quote"] == "from elsewhere" and saved["zz9999"]["comment"] == ""


def test_a_copied_mark_is_not_duplicated(make_project):
    text = f"Keep {mark('dp0001', 'this')} here.\n"
    project = _project(make_project, text, entry("dp0001", "this"))
    doc = open_document(project, "plan")
    pasted = text + f"Copy: {mark('dp0001', 'this one too')}.\n"
    report = doc.save_text(pasted)
    assert report.ids("duplicate_removed") == ["dp0001"]
    assert disk_text(project) == text + "Copy: this one too.\n"
    assert len(read_sidecar(project)["annotations"]) == 1


def test_a_resolved_annotation_whose_mark_comes_back_is_reopened(make_project):
    text = "Plain text.\n"
    project = _project(make_project, text, entry("rs0001", "text", status="resolved"))
    doc = open_document(project, "plan")
    report = doc.save_text(f"Plain {mark('rs0001', 'text')}.\n")  # e.g. undo in an editor
    assert report.ids("reopened") == ["rs0001"]
    assert read_sidecar(project)["annotations"][0]["status"] == "open"


def test_a_dangling_opening_tag_is_removed_and_the_quote_reanchored(make_project):
    text = f"A {mark('st0001', 'marked phrase')} here.\n"
    project = _project(make_project, text, entry("st0001", "marked phrase"))
    doc = open_document(project, "plan")
    report = doc.save_text('A <mark data-annotation-id="st0001">marked phrase here.\n')
    assert report.ids("stray_tag_removed") == ["st0001"]
    assert report.ids("reanchored") == ["st0001"]
    assert disk_text(project) == text  # the phrase is marked again, the stray tag is gone


def test_repairs_found_on_open_are_shown_but_written_only_on_save(make_project):
    text = "Text without the mark.\n"
    project = _project(make_project, text, entry("op0001", "the mark"))
    doc = open_document(project, "plan")
    assert [r.action for r in doc.repairs] == ["reanchored"] and doc.dirty
    assert disk_text(project) == text  # opening never writes
    assert doc.save_repairs() is True
    assert disk_text(project) == f"Text without {mark('op0001', 'the mark')}.\n"
    assert open_document(project, "plan").repairs == []


def test_a_detached_annotation_is_reattached_when_its_mark_returns(make_project):
    text = "Nothing marked.\n"
    project = _project(make_project, text, entry("rt0001", "gone", detached=True))
    doc = open_document(project, "plan")
    assert doc.repairs == []  # already detached: not re-anchored behind the analyst's back
    report = doc.save_text(f"Now {mark('rt0001', 'marked again')}.\n")
    assert report.ids("reattached") == ["rt0001"]
    assert "detached" not in read_sidecar(project)["annotations"][0]


def test_a_mistyped_id_around_the_quote_is_restored(make_project):
    text = f"We count {mark('3f9a1c', 'active customers')} only.\n"
    project = _project(make_project, text, entry("3f9a1c", "active customers"))
    doc = open_document(project, "plan")
    report = doc.save_text(f"We count {mark('3f9a1e', 'active customers')} only, in Q2.\n")
    assert report.ids("id_restored") == ["3f9a1c"] and report.ids("recreated") == []
    assert disk_text(project) == f"We count {mark('3f9a1c', 'active customers')} only, in Q2.\n"
    assert [e["id"] for e in read_sidecar(project)["annotations"]] == ["3f9a1c"]
