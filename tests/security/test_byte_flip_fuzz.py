"""Byte-flip fuzz over the sample workspace's data files (fixed seed, bounded count).

Each mutant is a copy of a sample file with a few bytes flipped, put in data/ beside the
originals. Listing the tables and reading every column of every mutant must end either in
a result or in a clear error (a LantideError, never a traceback or a crash); the sample's
own tables keep working; and no file in data/ changes.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

pytestmark = [pytest.mark.security, pytest.mark.slow]

SEED = 20261201
MUTANTS_PER_FILE = 8
SOURCES = ("customers.csv", "products.csv", "orders.parquet", "targets.xlsx")


def _mutate(content: bytes, rng: random.Random) -> bytes:
    data = bytearray(content)
    for _ in range(rng.randint(1, 16)):
        at = rng.randrange(len(data))
        data[at] ^= rng.randint(1, 255)
    return bytes(data)


def _digests(data: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(data.iterdir())}


def test_byte_flipped_sample_files_fail_clearly_and_alone(sample_workspace, open_service):
    from lantide.errors import LantideError

    data = sample_workspace / "data"
    rng = random.Random(SEED)
    mutants = {}
    for source in SOURCES:
        original = (data / source).read_bytes()
        stem, suffix = source.split(".", 1)
        for i in range(MUTANTS_PER_FILE):
            name = f"fuzz_{i:02d}_{stem}.{suffix}"
            (data / name).write_bytes(_mutate(original, rng))
            mutants[f"data/{name}"] = name
    before = _digests(data)
    svc = open_service(sample_workspace)
    listing = svc.show_tables()
    listed = {}
    for table in listing["tables"]:
        listed.setdefault(table.get("source"), []).append(table["qualified_name"])
    failed = {p["source"]: p["error"] for p in listing["problems"]}
    outcomes = {"read": 0, "error": 0, "problem": 0}
    for source in mutants:
        assert source in listed or source in failed, f"{source} neither listed nor a problem"
        if source in failed:
            assert failed[source] and "Traceback" not in failed[source], source
            outcomes["problem"] += 1
        for name in listed.get(source, []):
            try:  # every column of every row, not just the footer's count
                svc.run_query(f"SELECT count(*), sum(hash(COLUMNS(*))) FROM {name}")
                outcomes["read"] += 1
            except LantideError as exc:
                assert exc.message and exc.hint, (source, exc.message)
                assert "Traceback" not in exc.message, source
                outcomes["error"] += 1
    assert sum(outcomes.values()) >= len(mutants)
    assert svc.run_query("SELECT count(*) FROM orders")["preview"] == [[120_000]]
    assert svc.run_query("SELECT count(*) FROM customers")["preview"] == [[2_000]]
    assert svc.run_query('SELECT count(*) FROM "targets"."Regional"')["preview"] == [[40]]
    assert _digests(data) == before
