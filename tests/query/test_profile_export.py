"""Column profiles and exports for the desktop table browser."""

from __future__ import annotations

import pytest


def test_profile_of_customers(sample_service):
    profile = sample_service.profile_table("customers")
    assert profile["row_count"] == 2000
    cols = {c["name"]: c for c in profile["columns"]}
    assert cols["customer_id"]["distinct_count"] == 2000
    assert (cols["customer_id"]["min"], cols["customer_id"]["max"]) == (1, 2000)
    assert sum(b["count"] for b in cols["customer_id"]["histogram"]["bins"]) == 2000
    segment = cols["segment"]["histogram"]
    assert segment["kind"] == "top_values"
    assert {v["value"] for v in segment["values"]} == {"Consumer", "SMB", "Enterprise"}
    assert sum(v["count"] for v in segment["values"]) + segment["other_count"] == 2000
    region = cols["region"]
    direct = sample_service.run_query("SELECT count(*) FROM customers WHERE region IS NULL")
    assert region["null_count"] == direct["preview"][0][0] > 0
    orders = sample_service.profile_table("orders")
    dates = next(c for c in orders["columns"] if c["name"] == "order_date")
    assert dates["min"] == "2024-01-01" and dates["histogram"]["kind"] == "numeric"
    assert sum(b["count"] for b in dates["histogram"]["bins"]) == 120_000


@pytest.mark.parametrize("suffix", ["csv", "parquet", "xlsx"])
@pytest.mark.slow
def test_export_round_trips(sample_service, tmp_path, suffix):
    sample_service.run_sql_tab("q3-churn", "clean_orders")
    target = tmp_path / "out" / f"clean orders.{suffix}"
    result = sample_service.export_table("clean_orders", target)
    assert result["row_count"] == 113_852 and target.exists()
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".lantide-tmp")]
    if suffix == "xlsx":
        from python_calamine import CalamineWorkbook

        rows = CalamineWorkbook.from_path(str(target)).get_sheet_by_name("data").to_python()
        assert rows[0] == ["order_id", "customer_id", "order_date", "status", "net_revenue"]
        assert len(rows) == 113_853
    else:
        import duckdb

        reader = "read_csv" if suffix == "csv" else "read_parquet"
        n, total = (
            duckdb.connect()
            .execute(f"SELECT count(*), round(sum(net_revenue), 2) FROM {reader}('{target}')")
            .fetchone()
        )
        expected = sample_service.run_query("SELECT round(sum(net_revenue), 2) FROM clean_orders")[
            "preview"
        ][0][0]
        assert n == 113_852 and total == expected


def test_export_failure_keeps_existing_file(sample_service, tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("mine")
    with pytest.raises(Exception) as info:
        sample_service.export_table("customers", target)
    assert info.value.code == "EXPORT_FORMAT" and target.read_text() == "mine"
