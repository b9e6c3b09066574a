"""Why a file in ``data/`` is not a table: the checks made before (or instead of)
registering it, each a :class:`QueryError` that becomes the file's problem line.

- a folder of data files that cannot be one table (several formats, workbooks);
- a link to a file or folder outside ``data/`` (refused, and never walked);
- an empty file (no columns to make a table of);
- a JSON file whose first objects are too large to read in reasonable time;
- a reader's error, cut to one line (:func:`brief`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.query.errors import QueryError
from lantide.query.names import data_format, quote_literal

if TYPE_CHECKING:
    from lantide.query.engine import Cursor

_FOLDER_FORMATS = {
    "csv": "csv",
    "tsv": "tsv",
    "parquet": "parquet",
    "json": "json",
    "ndjson": "ndjson",
}


UNREADABLE_FOLDER = "folder"  # a folder of data files that is not one table
OUTSIDE_LINK = "link"  # a link in data/ to a file or folder outside it: refused, never walked


def folder_data_formats(path: Path) -> set[str]:
    """The data formats of the (not hidden) files in a folder, at any depth."""
    return {
        fmt
        for p in path.rglob("*")
        if p.is_file() and not p.name.startswith(".") and (fmt := data_format(p.name)) is not None
    }


def folder_format(path: Path) -> str | None:
    """The format of a folder of data files of one kind; :data:`UNREADABLE_FOLDER` for one
    that holds data files but cannot be one table (several formats, workbooks), so it is
    listed with the reason rather than left out unseen; None for a folder of no data."""
    formats = folder_data_formats(path)
    if len(formats) == 1 and next(iter(formats)) in _FOLDER_FORMATS:
        return _FOLDER_FORMATS[formats.pop()]
    return UNREADABLE_FOLDER if formats else None


def folder_problem(path: Path) -> QueryError:
    formats = sorted(folder_data_formats(path))
    if formats == ["excel"]:
        return QueryError(
            f"the folder {path.name}/ holds workbooks; a folder becomes one "
            "table only for CSV, TSV, Parquet or JSON files",
            code="DATA_FOLDER_UNREADABLE",
            hint="Put each workbook directly in data/ (each becomes a schema "
            "with a table per sheet).",
        )
    return QueryError(
        f"the folder {path.name}/ mixes {', '.join(formats)} files; a folder "
        "becomes one table of one format",
        code="DATA_FOLDER_UNREADABLE",
        hint="Put each format in its own folder (or the files directly in data/).",
    )


def outside_link_problem(path: Path) -> QueryError:
    target = os.path.realpath(path)
    return QueryError(
        f"a link to {target}, outside the workspace's data/ "
        "folder; Lantide reads only what is inside data/",
        code="DATA_LINK_OUTSIDE",
        hint="Copy the file (or folder) into data/ instead of linking to it.",
    )


def brief(message: str) -> str:
    """One line of a reader's error: its headline and its cause, without DuckDB's list of
    reader options ("CSV Error on Line: 2" alone says nothing)."""
    lines = []
    for line in message.splitlines():
        if not line.strip() or line.startswith("Possible"):
            break
        if not line.startswith("Original Line"):
            lines.append(line.strip())
    return " — ".join(lines[:3]) or message.splitlines()[0]


_JSON_SAMPLE = 20480  # the objects DuckDB reads to learn a JSON file's columns


def check_json_objects(cur: Cursor, path: Path, fmt: str, limit_mb: int) -> None:
    """Refuse a JSON file whose first objects (those the view's schema is learnt from)
    are larger than the limit: DuckDB takes time growing with the square of an object's
    size (30 MB: 16 s) and does not enforce its own maximum_object_size."""
    option = ", format = 'newline_delimited'" if fmt == "ndjson" else ""
    largest = (
        cur.execute(
            f"SELECT max(strlen(json::VARCHAR)) FROM (SELECT json FROM read_json_objects("
            f"{quote_literal(str(path))}{option}) LIMIT {_JSON_SAMPLE})"
        ).fetchall()[0][0]  # an aggregate: one row
        or 0
    )
    if largest > limit_mb << 20:
        raise QueryError(
            f"a JSON object of {largest / (1 << 20):.1f} MB, above the limit of {limit_mb} MB "
            "(setting query.max_json_object_mb); the file was not read",
            code="DATA_FILE_TOO_LARGE",
            hint="If the file is genuine, raise query.max_json_object_mb in settings.json "
            "(reading it takes long), or save the data as Parquet or newline-delimited "
            "JSON of small objects.",
        )


def is_empty(path: Path, size: int) -> bool:
    """0 bytes, or only a byte-order mark and blanks: no columns to make a table of."""
    if size > 64:
        return False
    try:
        text = path.read_bytes()
    except OSError:
        return False
    return not text.lstrip(b"\xef\xbb\xbf\xff\xfe").strip(b" \t\r\n\x00")
