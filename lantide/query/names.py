"""Names of tables: quoting, names of data files, names of cached results.

Every name Lantide writes into SQL is a quoted identifier, so file names with spaces,
dots, non-ASCII letters or SQL keywords (``order.csv``) work as they are.
"""

from __future__ import annotations

import re
import unicodedata

INTERNAL_SCHEMA = "_lantide"

# Data file suffixes and how DuckDB (or calamine) reads them; longest first.
DATA_SUFFIXES: dict[str, str] = {
    ".csv.gz": "csv",
    ".tsv.gz": "tsv",
    ".ndjson.gz": "ndjson",
    ".jsonl.gz": "ndjson",
    ".json.gz": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".xlsx": "excel",
    ".xlsm": "excel",
    ".xlsb": "excel",
    ".xls": "excel",
    ".ods": "excel",
}


def quote_ident(name: str) -> str:
    """``name`` as a DuckDB quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def qualified(schema: str | None, name: str) -> str:
    return f"{quote_ident(schema)}.{quote_ident(name)}" if schema else quote_ident(name)


def quoted_path(*parts: str | None) -> str:
    """A dotted name, each part quoted: ``("book", "Sheet1")`` -> ``"book"."Sheet1"``;
    empty parts (no schema) are left out."""
    return ".".join(quote_ident(p) for p in parts if p)


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def data_format(filename: str) -> str | None:
    """The format of a data file by its suffix, or None when it is not a data file."""
    lower = filename.lower()
    for suffix, fmt in DATA_SUFFIXES.items():
        if lower.endswith(suffix):
            return fmt
    return None


def table_name_for(filename: str) -> str:
    """``sales.csv`` -> ``sales``; ``q3 sales.csv.gz`` -> ``q3 sales``."""
    lower = filename.lower()
    for suffix in DATA_SUFFIXES:
        if lower.endswith(suffix):
            return filename[: -len(suffix)] or filename
    return filename


def slug(text: str, *, max_len: int = 60) -> str:
    """A plain identifier for a result label: ``Q2 active customers`` -> ``q2_active_customers``."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    clean = re.sub(r"[^0-9a-zA-Z]+", "_", folded).strip("_").lower()
    if not clean:
        clean = "result"
    if clean[0].isdigit():
        clean = "r_" + clean
    return clean[:max_len].rstrip("_")


def same_name(a: str, b: str) -> bool:
    """DuckDB identifiers compare case-insensitively."""
    return a.casefold() == b.casefold()
