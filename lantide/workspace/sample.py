"""The sample workspace: realistic, slightly messy sales data and a "Q3 churn" project.

Everything is generated here, deterministically (a seeded ``random.Random``), so every
install gets the same rows and nothing is downloaded. The warts are deliberate, the kind
an analyst meets on day one: nulls, a date column in mixed formats, customers that share a
name, test accounts mixed in with real ones, refunds and cancellations.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import tempfile
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

from lantide.workspace import layout
from lantide.workspace.atomic import atomic_create_bytes
from lantide.workspace.model import Workspace, WorkspaceError

SEED = 20261130
N_CUSTOMERS = 2_000
N_PRODUCTS = 120
N_ORDERS = 120_000
PROJECT = "q3-churn"

_FIRST = [
    "Ana",
    "Ben",
    "Chloé",
    "David",
    "Emma",
    "Farid",
    "Grace",
    "Hugo",
    "Ines",
    "Jonas",
    "Kemal",
    "Lena",
    "Mateo",
    "Nora",
    "Oskar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Yara",
    "Zoë",
]
_LAST = [
    "Andersen",
    "Bauer",
    "Costa",
    "Dubois",
    "Evans",
    "Fischer",
    "García",
    "Hansen",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Müller",
    "Nowak",
    "O'Brien",
    "Petrov",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Weber",
]
_REGIONS = [
    "US-CA",
    "US-NY",
    "US-TX",
    "DE-BY",
    "DE-BE",
    "FR-IDF",
    "GB-ENG",
    "ES-MD",
    "IT-25",
    "NL-NH",
]
_SEGMENTS = ["Consumer", "SMB", "Enterprise"]
_CATEGORIES = ["Office", "Electronics", "Furniture", "Software", "Services"]
_CHANNELS = ["web", "store", "partner", "phone"]


class _Customer(TypedDict):
    """A row of customers.csv (dates and flags as the file's text)."""

    customer_id: int
    name: str
    email: str
    region: str
    segment: str
    signup_date: str
    is_test_account: str


class _Product(TypedDict):
    """A row of products.csv."""

    product_id: int
    product_name: str
    category: str
    list_price: float


def _customers(rng: random.Random) -> list[_Customer]:
    rows: list[_Customer] = []
    start = date(2022, 1, 1)
    for cid in range(1, N_CUSTOMERS + 1):
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"  # 500 names for 2,000 people
        signup = start + timedelta(days=rng.randrange(0, 3 * 365))
        fmt = rng.random()
        if fmt < 0.6:
            signup_text = signup.isoformat()
        elif fmt < 0.8:
            signup_text = signup.strftime("%d/%m/%Y")
        elif fmt < 0.95:
            signup_text = signup.strftime("%b %d, %Y")
        else:
            signup_text = ""  # unknown
        is_test = rng.random() < 0.012
        rows.append(
            {
                "customer_id": cid,
                "name": "Test Account" if is_test and rng.random() < 0.5 else name,
                "email": ""
                if rng.random() < 0.07
                else f"{name.split()[0].lower()}.{cid}@example.{rng.choice(['com', 'de', 'fr'])}",
                "region": "" if rng.random() < 0.03 else rng.choice(_REGIONS),
                "segment": rng.choices(_SEGMENTS, weights=[6, 3, 1])[0],
                "signup_date": signup_text,
                "is_test_account": "true" if is_test else "false",
            }
        )
    return rows


def _products(rng: random.Random) -> list[_Product]:
    rows: list[_Product] = []
    for pid in range(1, N_PRODUCTS + 1):
        category = rng.choice(_CATEGORIES)
        singular = category[:-1] if category.endswith("s") else category
        rows.append(
            {
                "product_id": pid,
                "product_name": f"{singular} item {pid:03d}",
                "category": "" if rng.random() < 0.04 else category,
                "list_price": round(rng.uniform(4, 900), 2),
            }
        )
    return rows


def _write_csv(path: Path, rows: Sequence[Mapping[str, object]]) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    _create(path, buf.getvalue().encode("utf-8"))


def _orders_table(
    rng: random.Random, customers: list[_Customer], products: list[_Product]
) -> dict[str, tuple[str, list[Any]]]:
    start = date(2024, 1, 1)
    days = (date(2025, 12, 31) - start).days + 1
    # Customers churn: each one is active for a window of quarters, so Q2 -> Q3 moves.
    active_until = {
        c["customer_id"]: start + timedelta(days=rng.randrange(200, days + 200)) for c in customers
    }
    cols: dict[str, list[Any]] = {
        k: []
        for k in (
            "order_id",
            "customer_id",
            "product_id",
            "order_date",
            "quantity",
            "unit_price",
            "discount",
            "status",
            "refund_amount",
            "channel",
        )
    }
    prices = {p["product_id"]: p["list_price"] for p in products}
    for oid in range(1, N_ORDERS + 1):
        cid = rng.randint(1, N_CUSTOMERS)
        limit = min((active_until[cid] - start).days, days)
        day = start + timedelta(days=rng.randrange(0, max(limit, 30)))
        pid = rng.randint(1, N_PRODUCTS)
        qty = rng.choices([1, 2, 3, 5, 10], weights=[50, 25, 12, 8, 5])[0]
        price = round(prices[pid] * rng.uniform(0.9, 1.1), 2)
        status = rng.choices(["completed", "refunded", "cancelled"], weights=[90, 6, 4])[0]
        cols["order_id"].append(oid)
        cols["customer_id"].append(cid)
        cols["product_id"].append(pid)
        cols["order_date"].append(day)
        cols["quantity"].append(qty)
        cols["unit_price"].append(price)
        cols["discount"].append(None if rng.random() < 0.6 else rng.choice([0.05, 0.1, 0.15, 0.2]))
        cols["status"].append(status)
        cols["refund_amount"].append(
            round(qty * price * rng.uniform(0.3, 1.0), 2) if status == "refunded" else 0.0
        )
        cols["channel"].append(None if rng.random() < 0.02 else rng.choice(_CHANNELS))
    types = (
        "BIGINT",
        "INTEGER",
        "INTEGER",
        "DATE",
        "INTEGER",
        "DOUBLE",
        "DOUBLE",
        "VARCHAR",
        "DOUBLE",
        "VARCHAR",
    )
    return {
        name: (type_name, values)
        for (name, values), type_name in zip(cols.items(), types, strict=True)
    }


def _write_parquet(path: Path, table: dict[str, tuple[str, list[Any]]]) -> None:
    """``{column: (DuckDB type, values)}`` as zstd Parquet: an in-memory DuckDB writes it
    into a scratch folder (the column lists unnested side by side, no Arrow), then the
    workspace file is created from its bytes."""
    import duckdb

    columns = ", ".join(f'"{name}" {type_name}' for name, (type_name, _) in table.items())
    unnest = ", ".join(
        f"unnest(${i}::{type_name}[])" for i, (type_name, _) in enumerate(table.values(), start=1)
    )
    with tempfile.TemporaryDirectory(prefix="lantide-sample-") as scratch:
        target = Path(scratch) / "table.parquet"
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"CREATE TABLE t ({columns})")
            con.execute(f"INSERT INTO t SELECT {unnest}", [values for _, values in table.values()])
            con.execute(
                f"COPY t TO '{str(target).replace(chr(39), chr(39) * 2)}' "
                "(FORMAT parquet, COMPRESSION zstd)"
            )
        finally:
            con.close()
        _create(path, target.read_bytes())


def _write_targets(path: Path, rng: random.Random) -> None:
    import xlsxwriter

    buf = io.BytesIO()
    book = xlsxwriter.Workbook(buf, {"in_memory": True})
    regional = book.add_worksheet("Regional")
    regional.write_row(0, 0, ["region", "quarter", "target_revenue", "owner"])
    row = 1
    for region in _REGIONS:
        for q in ("2025-Q1", "2025-Q2", "2025-Q3", "2025-Q4"):
            regional.write_row(
                row,
                0,
                [
                    region,
                    q,
                    round(rng.uniform(150_000, 900_000), -3),
                    rng.choice(["Ana", "Ben", "Lena", None]),
                ],
            )
            row += 1
    segments = book.add_worksheet("Segments")
    segments.write_row(0, 0, ["segment", "year", "target_customers", "note"])
    for i, seg in enumerate(_SEGMENTS):
        for j, year in enumerate((2024, 2025)):
            segments.write_row(
                1 + i * 2 + j,
                0,
                [seg, year, rng.randint(100, 1500), "stretch goal" if year == 2025 else None],
            )
    book.close()
    _create(path, buf.getvalue())


# -- the sample project -------------------------------------------------------------

_PLAN = """# Plan: Q3 churn

## Question
Which regions lost the most customers between Q2 and Q3 2025, and {m1}?

## Definitions
- A customer is *active* in a quarter when they placed at least one order that was not cancelled.
- {m2}
- Revenue is net revenue: gross minus discounts and refunds.

## Steps
1. `clean_orders`: orders without cancellations and {m3}, with net revenue per order.
2. `customer_quarters`: orders and revenue per customer and quarter.
3. `q3_churn_by_region`: churned customers and churn rate per region.

## Checks
- Customer counts per quarter are plausible against `customers.csv`.
- Regional targets (`"targets"."Regional"`) are only context, not a denominator.
"""

_ANNOTATIONS = [
    (
        "m1",
        "3f9a1c",
        "how much revenue left with them",
        "Q2 revenue of the churned customers, or the Q3 shortfall against Q2? Pick one.",
    ),
    (
        "m2",
        "7be204",
        "Churned: active in Q2 2025, not active in Q3 2025.",
        "Which denominator: every customer active in Q2, or only those who signed up before Q2?",
    ),
    (
        "m3",
        "c51d8e",
        "test accounts",
        "Is is_test_account reliable? Some test customers seem to be named 'Test Account' only.",
    ),
]

_SQL_TABS = {
    "clean_orders": """-- Orders that count: not cancelled, not from test accounts, with net revenue.
SELECT
    o.order_id,
    o.customer_id,
    o.order_date,
    o.status,
    o.quantity * o.unit_price * (1 - coalesce(o.discount, 0))
        - coalesce(o.refund_amount, 0) AS net_revenue
FROM orders AS o
JOIN customers AS c ON c.customer_id = o.customer_id
WHERE o.status <> 'cancelled'
  AND NOT c.is_test_account
""",  # noqa: E501 (the SQL text of a sample file, kept as the sample writes it)
    "customer_quarters": """-- Activity of each customer per calendar quarter.
SELECT
    customer_id,
    date_trunc('quarter', order_date) AS quarter,
    count(*) AS orders,
    sum(net_revenue) AS revenue
FROM clean_orders
GROUP BY customer_id, date_trunc('quarter', order_date)
""",
    "q3_churn_by_region": """-- Customers active in Q2 2025 but not in Q3 2025, per region.
WITH q2 AS (
    SELECT customer_id, revenue FROM customer_quarters WHERE quarter = DATE '2025-04-01'
), q3 AS (
    SELECT customer_id FROM customer_quarters WHERE quarter = DATE '2025-07-01'
)
SELECT
    coalesce(c.region, '(unknown)') AS region,
    count(*) AS q2_customers,
    count(*) FILTER (WHERE q3.customer_id IS NULL) AS churned,
    round(count(*) FILTER (WHERE q3.customer_id IS NULL) / count(*), 3) AS churn_rate,
    round(sum(q2.revenue) FILTER (WHERE q3.customer_id IS NULL), 2) AS q2_revenue_lost
FROM q2
JOIN customers AS c ON c.customer_id = q2.customer_id
LEFT JOIN q3 ON q3.customer_id = q2.customer_id
GROUP BY 1
ORDER BY churn_rate DESC
""",
}

_KNOWLEDGE = """# Project knowledge

## Rules
- Revenue means net revenue: gross minus discounts and refunds.
- Exclude test accounts (customers.is_test_account) from every customer count.
- [queued] The fiscal year starts on 1 April.

## Info
- customers.region holds ISO 3166-2 codes; an empty region means unknown.
- customers.signup_date mixes ISO, DD/MM/YYYY and "Mon DD, YYYY" formats.
"""


def _plan_with_marks() -> tuple[str, list[dict[str, Any]]]:
    """The Plan text with id-only marks, and sidecar entries whose spans match it."""
    text = _PLAN
    for key, ann_id, quote, _comment in _ANNOTATIONS:
        text = text.replace("{" + key + "}", f'<mark data-annotation-id="{ann_id}">{quote}</mark>')
    entries = []
    for _key, ann_id, quote, comment in _ANNOTATIONS:
        opening = f'<mark data-annotation-id="{ann_id}">'
        start = text.index(opening) + len(opening)
        entries.append(
            {
                "id": ann_id,
                "status": "open",
                "quote": quote,
                "comment": comment,
                "anchor": {"span": [start, start + len(quote)]},
                "history": [
                    {
                        "at": "2026-11-30T09:00:00Z",
                        "by": "team lead",
                        "action": "created",
                        "text": comment,
                    }
                ],
            }
        )
    return text, entries


SAMPLE_DATA_FILES = ("customers.csv", "products.csv", "orders.parquet", "targets.xlsx")


class SampleInTheWayError(WorkspaceError):
    code = "SAMPLE_IN_THE_WAY"

    def __init__(self, root: Path, in_the_way: list[str]):
        self.in_the_way = in_the_way
        super().__init__(
            f"{root} already has files the sample would use: {', '.join(in_the_way)}; "
            f"nothing was written",
            hint=f"Lantide never replaces your files. To make this folder a workspace with "
            f"your own data, run the command without --sample: lantide init {root}. "
            f"For the sample, choose an empty folder.",
        )


def files_in_the_way(root: Path | str) -> list[str]:
    """What in ``root`` the sample would overwrite or shadow, as paths relative to it.

    A data file counts when it would be the same file on a case-insensitive disk or give
    the same table name (``customers.parquet`` next to the sample's ``customers.csv``).
    """
    root = Path(root)
    tables = {name.split(".")[0] for name in SAMPLE_DATA_FILES}
    found = []
    for folder, wanted in ((layout.data_dir(root), tables), (layout.projects_dir(root), {PROJECT})):
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            if entry.name.split(".")[0].lower() in wanted:
                found.append(entry.relative_to(root).as_posix())
    return found


def _create(path: Path, data: bytes) -> None:
    """Write a new sample file; one that appeared meanwhile is never replaced."""
    try:
        atomic_create_bytes(path, data)
    except FileExistsError:
        raise SampleInTheWayError(path.parent, [path.name]) from None


def _create_text(path: Path, text: str) -> None:
    _create(path, text.encode("utf-8"))


def create_sample(root: Path | str) -> Workspace:
    """Create the sample workspace in ``root`` and return it (not locked).

    ``root`` may hold other files; when any sample file or the sample project is already
    there, nothing is written and :class:`SampleInTheWayError` lists what is in the way.
    """
    root = Path(root).resolve()
    if Workspace.is_workspace(root):
        Workspace.create(root)  # raises "already a Lantide workspace"
    in_the_way = files_in_the_way(root)
    if in_the_way:
        raise SampleInTheWayError(root, in_the_way)
    ws = Workspace.create(root, name="Sample workspace")
    rng = random.Random(SEED)
    customers = _customers(rng)
    products = _products(rng)
    _write_csv(ws.data_dir / "customers.csv", customers)
    _write_csv(ws.data_dir / "products.csv", products)
    _write_parquet(ws.data_dir / "orders.parquet", _orders_table(rng, customers, products))
    _write_targets(ws.data_dir / "targets.xlsx", rng)

    plan, entries = _plan_with_marks()
    project = ws.create_project(
        PROJECT, plan_text=plan, report_text="# Report: Q3 churn\n\n_Not written yet._\n"
    )
    project.update(lambda data: data.__setitem__("name", "Q3 churn"))
    _create_text(
        layout.sidecar_path(project.plan_path),
        json.dumps({"version": 1, "annotations": entries}, indent=2, ensure_ascii=False) + "\n",
    )
    for tab, sql in _SQL_TABS.items():
        _create_text(project.sql_tab_path(tab), sql)
    _create_text(project.knowledge_path, _KNOWLEDGE)
    ws.focus_project(project.dirname)
    return ws


def ensure_sample_workspace(target: Path) -> Path:
    """The first-run sample in ``target`` (Lantide's own folder), built whole or not at all.

    It is built in a sibling folder and renamed into place, so a crash never leaves a half
    sample behind; a folder left there by an older version's crash is moved aside (kept),
    not overwritten.
    """
    target = Path(target)
    if Workspace.is_workspace(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    building = target.with_name(f".{target.name}.building-{os.getpid()}")
    create_sample(building)
    if target.exists():
        stamp = datetime.now().strftime("%Y%m%d%H%M%S")
        target.rename(target.with_name(f"{target.name}.incomplete-{stamp}"))
    os.rename(building, target)
    return target
