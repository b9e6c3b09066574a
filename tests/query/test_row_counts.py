"""Row counts of data files in show_tables: counted once per version of a file, large text
files in the background, never a slow listing."""

from __future__ import annotations

import os

from lantide.query import row_counts


def _entries(service):
    return {
        t["qualified_name"]: t
        for t in service.show_tables()["tables"]
        if t["kind"] in ("data_file", "excel_sheet")
    }


def _csv(path, rows: int, start: int = 0) -> None:
    path.write_text(
        "id,kind\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(start, start + rows))
    )


def test_every_kind_of_data_file_has_its_row_count(sample_workspace, open_service):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = sample_workspace / "data"
    _csv(data / "small.csv", 25)
    (data / "events.ndjson").write_text("".join(f'{{"n": {i}}}\n' for i in range(7)))
    (data / "parts").mkdir()
    for part in range(3):
        pq.write_table(pa.table({"x": list(range(10))}), data / "parts" / f"p{part}.parquet")
    svc = open_service(sample_workspace)
    entries = _entries(svc)
    expected = {
        '"small"': 25,
        '"events"': 7,
        '"parts"': 30,
        '"orders"': 120_000,
        '"targets"."Regional"': 40,
    }
    for name, count in expected.items():
        assert entries[name]["row_count"] == count, name
        assert entries[name]["row_count_pending"] is False
    exact = svc.run_query('SELECT count(*) FROM "targets"."Segments"')["preview"][0][0]
    assert entries['"targets"."Segments"']["row_count"] == exact


def test_a_large_file_is_counted_in_the_background_once(empty_workspace, open_service, monkeypatch):
    monkeypatch.setattr(row_counts, "INLINE_BYTES", 100)  # every file here is "large"
    _csv(empty_workspace / "data" / "big.csv", 5000)
    svc = open_service(empty_workspace)
    first = _entries(svc)['"big"']
    assert first["row_count"] is None and first["row_count_pending"] is True
    assert svc.wait_for_row_counts(30)
    counted = _entries(svc)['"big"']
    assert counted["row_count"] == 5000 and counted["row_count_pending"] is False
    svc.close()
    svc.workspace.close()
    # kept in the cache database: a new service knows it without counting again
    again = open_service(empty_workspace)
    assert _entries(again)['"big"']["row_count"] == 5000
    assert again.row_counts.pending == 0 and again.row_counts._thread is None


def test_a_changed_file_is_counted_again(empty_workspace, open_service):
    path = empty_workspace / "data" / "grows.csv"
    _csv(path, 10)
    svc = open_service(empty_workspace)
    assert _entries(svc)['"grows"']["row_count"] == 10
    with path.open("a") as f:
        f.write("".join(f"{i},a\n" for i in range(10, 15)))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert _entries(svc)['"grows"']["row_count"] == 15


def test_a_file_that_cannot_be_counted_is_not_counted_on_every_listing(
    empty_workspace, open_service
):
    # registers (DuckDB samples the first lines) but cannot be read to the end
    path = empty_workspace / "data" / "broken.ndjson"
    path.write_text("".join(f'{{"n": {i}}}\n' for i in range(30_000)) + '{"n": oops\n')
    svc = open_service(empty_workspace)
    entry = _entries(svc).get('"broken"')
    assert entry is not None and entry["row_count"] is None and entry["row_count_pending"] is False
    known = svc.row_counts._known[str(path)]
    assert known.row_count is None and "Malformed JSON" in (known.error or "")
    assert _entries(svc)['"broken"']["row_count"] is None
    assert svc.row_counts._known[str(path)] is known  # the same failed count, not a new one


def test_listing_counts_small_files_within_a_budget(empty_workspace, open_service, monkeypatch):
    for name in ("a", "b", "c", "d"):
        _csv(empty_workspace / "data" / f"{name}.csv", 50)
    size = (empty_workspace / "data" / "a.csv").stat().st_size
    monkeypatch.setattr(row_counts, "INLINE_BUDGET", 2 * size)
    svc = open_service(empty_workspace)
    entries = _entries(svc)
    now = [n for n, e in entries.items() if e["row_count"] == 50]
    later = [n for n, e in entries.items() if e["row_count_pending"]]
    assert len(now) == 2 and len(later) == 2
    assert svc.wait_for_row_counts(30)
    assert all(e["row_count"] == 50 for e in _entries(svc).values())


def test_closing_stops_the_background_counting(empty_workspace, open_service, monkeypatch):
    monkeypatch.setattr(row_counts, "INLINE_BYTES", 0)
    for name in ("a", "b", "c"):
        _csv(empty_workspace / "data" / f"{name}.csv", 20_000)
    svc = open_service(empty_workspace)
    assert all(e["row_count_pending"] for e in _entries(svc).values())
    counter = svc.row_counts
    svc.close()
    assert counter._thread is None and counter.pending == 0
    assert counter.wait(0)


def test_a_count_stored_again_replaces_the_stored_one(empty_workspace, open_service):
    """Storing a path's count over one already on disk (another service counted it
    meanwhile) keeps one row, the newest, for each path."""
    a, b = empty_workspace / "data" / "a.csv", empty_workspace / "data" / "b.csv"
    _csv(a, 3)
    _csv(b, 4)
    svc = open_service(empty_workspace)
    assert _entries(svc)['"a"']["row_count"] == 3
    counts = svc.row_counts
    counts._store_many(
        [(str(a), row_counts.Count((1, 2), 30)), (str(b), row_counts.Count((3, 4), None, "bad"))]
    )
    counts._store_many([(str(a), row_counts.Count((5, 6), 31))])
    stored = svc.engine.execute(
        'SELECT path, size, mtime_ns, row_count, error FROM "_lantide".row_counts ORDER BY path'
    )
    assert stored == [(str(a), 5, 6, 31, None), (str(b), 3, 4, None, "bad")]


def test_a_new_rule_recounts_a_file_counted_on_a_first_open_also_after_a_reopen(
    empty_workspace, open_service
):
    """On a first open the counts are known in memory alone (the database is new); a file
    read anew under the same stamp (a header rule) is counted again, in memory and on
    disk, so a reopen does not bring the old count back."""
    from lantide.query.file_rules import set_header_row

    path = empty_workspace / "data" / "export.csv"
    path.write_text("exported 2025-01-03\nby: finance\nid,amount\n1,10\n2,32\n")
    assert not (empty_workspace / ".lantide" / "cache.duckdb").exists()
    svc = open_service(empty_workspace)
    first = _entries(svc)['"export"']["row_count"]
    set_header_row(empty_workspace, "data/export.csv", 0)  # every line is data: 5 rows
    assert first != 5
    assert svc.sources.refresh()["changed"] == [str(path)]  # read anew, not listed (counted)
    svc.close()
    svc.workspace.close()
    again = open_service(empty_workspace)
    assert _entries(again)['"export"']["row_count"] == 5
    stored = again.engine.execute('SELECT row_count FROM "_lantide".row_counts')
    assert stored == [(5,)]
