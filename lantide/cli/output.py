"""Printing results: human text by default, JSON with ``--json``."""

from __future__ import annotations

import json
import sys
from typing import Any

from lantide.untrusted import clean_text


def print_json(obj: Any) -> None:
    # clean_text: a lone surrogate from outside must not make the print itself fail
    sys.stdout.write(clean_text(json.dumps(obj, ensure_ascii=False, default=str)) + "\n")
    sys.stdout.flush()


def print_table(columns: list[str], rows: list[list[Any]], *, max_width: int = 40) -> None:
    """A plain fixed-width table, like psql's."""

    def cell(v: Any) -> str:
        text = "NULL" if v is None else clean_text(str(v))
        text = text.replace("\n", " ")
        return text if len(text) <= max_width else text[: max_width - 1] + "…"

    cells = [[cell(v) for v in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in cells:
        for i, v in enumerate(row):
            widths[i] = max(widths[i], len(v))
    out = sys.stdout
    out.write(" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)) + "\n")
    out.write("-+-".join("-" * w for w in widths) + "\n")
    for row in cells:
        # a row shorter than the header prints the cells it has
        out.write(" | ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)) + "\n")
