"""A first open (the cache database does not exist yet) skips reading what a new database
cannot hold: its catalog tables are made in one transaction and start known empty, its row
counts too. These tests check that everything after such an open reads and writes as after
a reopen: files added, changed and removed, a cached table made, counts, a second open."""

from __future__ import annotations

import os


def _tables(svc) -> dict[str, dict]:
    return {t["qualified_name"]: t for t in svc.show_tables()["tables"]}


def test_a_first_open_then_changes_then_a_reopen(sample_workspace, open_service):
    db = sample_workspace / ".lantide" / "cache.duckdb"
    db.unlink(missing_ok=True)
    svc = open_service(sample_workspace)
    assert svc.engine.created
    first = _tables(svc)
    assert first['"customers"']["row_count"] == 2000
    assert first['"targets"."Regional"']["row_count"] == 40

    data = sample_workspace / "data"
    (data / "products.csv").unlink()
    (data / "extra.csv").write_text("k,v\n1,a\n2,b\n3,c\n")
    customers = data / "customers.csv"
    lines = customers.read_text().splitlines(keepends=True)
    customers.write_text("".join(lines[:11]))  # header + 10 rows
    st = customers.stat()
    os.utime(customers, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    report = svc.sources.refresh()
    assert report["removed"] == [str(data / "products.csv")]
    assert report["added"] == [str(data / "extra.csv")]
    assert report["changed"] == [str(customers)]

    svc.source_run_sql_tab("q3-churn", "clean_orders")  # makes a cached table
    after = _tables(svc)
    assert '"products"' not in after
    assert after['"extra"']["row_count"] == 3 and after['"customers"']["row_count"] == 10
    assert any(t["kind"] == "cached_table" and t["name"] == "clean_orders" for t in after.values())
    svc.close()
    svc.workspace.close()

    again = open_service(sample_workspace)
    assert not again.engine.created
    reopened = _tables(again)
    assert {k: v.get("row_count") for k, v in reopened.items()} == {
        k: v.get("row_count") for k, v in after.items()
    }
    assert again.sources.refresh() == {"added": [], "changed": [], "removed": [], "failed": []}


def test_a_reopen_reads_the_catalog_of_data_files_once(sample_workspace, open_service):
    """Unchanged files take their tables from the one read of the catalog (it was read
    again for every file: a query per file on every open of a workspace)."""
    first = open_service(sample_workspace)
    listed = _tables(first)
    first.close()
    first.workspace.close()
    again = open_service(sample_workspace)
    reads = []
    real = again.catalog.source_rows
    again.catalog.source_rows = lambda: reads.append(1) or real()
    assert again.sources.refresh() == {"added": [], "changed": [], "removed": [], "failed": []}
    assert len(reads) == 1
    assert _tables(again) == listed
