"""The analyst's rules for reading a data file, kept in the workspace, never in the file.

``.lantide/data_files.json``::

    {"version": 1, "files": {"data/sales.csv": {"header_row": 3, "encoding": "latin-1"}}}

``header_row`` is the line (1-based) of a CSV or TSV file that holds the column names:
the lines above it are skipped and DuckDB's detection of a header and of a title above the
table is overruled. ``0`` means the file has no header line (every line is data). Without
a rule, the reader's own detection applies and what it skipped is reported (see
:mod:`lantide.query.reading_notes`).

``encoding`` is the text encoding of a CSV or TSV file (``utf-8``, ``utf-16`` or
``latin-1``); without it the encoding is detected (:mod:`lantide.query.text_encodings`).

The file is written atomically; one that cannot be read is reported, never overwritten.
Set rules with ``lantide file header`` / ``lantide file encoding``, or
:func:`set_header_row` / :func:`set_encoding`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from lantide.errors import LantideError
from lantide.query.errors import QueryError
from lantide.query.names import data_format
from lantide.workspace import layout

RULES_FILE = "data_files.json"
_MAX_HEADER_ROW = 100_000


class ReadingRule(TypedDict, total=False):
    """A file's rule once checked (a value out of range or of another type is dropped)."""

    header_row: int
    encoding: str


class HeaderRowSet(TypedDict):
    """What :func:`set_header_row` set (None: removed, detected again)."""

    file: str  # data/...
    header_row: int | None


class EncodingSet(TypedDict):
    """What :func:`set_encoding` set (None: removed, detected again)."""

    file: str
    encoding: str | None


def rules_path(root: Path) -> Path:
    return layout.lantide_dir(root) / RULES_FILE


def rules_stamp(root: Path) -> tuple[int, int] | None:
    """(size, mtime_ns) of the rules file, None when there is none: cheap to compare."""
    try:
        st = os.stat(rules_path(root))
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def load_rules(root: Path) -> dict[str, dict[str, object]]:
    """``{"data/x.csv": {"header_row": n}}`` as the file holds it (unchecked: read each
    rule with :func:`header_row_of` and :func:`encoding_of`); raises CorruptFileError for
    a broken file."""
    from lantide.workspace.jsonfile import read_json_object

    path = rules_path(root)
    if not path.exists():
        return {}
    files = read_json_object(path, "data file rules").get("files") or {}
    return (
        {str(k): v for k, v in files.items() if isinstance(v, dict)}
        if isinstance(files, dict)
        else {}
    )


def header_row_of(rule: Mapping[str, object] | None) -> int | None:
    value = (rule or {}).get("header_row")
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_HEADER_ROW
        else None
    )


def encoding_of(rule: Mapping[str, object] | None) -> str | None:
    """The rule's encoding, one of ``text_encodings.ENCODINGS``; None for none (or junk)."""
    value = (rule or {}).get("encoding")
    if not isinstance(value, str):
        return None
    from lantide.query.text_encodings import normalized  # a rule names one: a text file

    return normalized(value)


def chosen_encodings(root: Path, rules: dict[str, dict[str, object]]) -> dict[str, str]:
    """``{absolute path of the file: encoding}`` for the rules that choose one."""
    data = layout.data_dir(root)
    return {
        str(data / rel.removeprefix(f"{layout.DATA_DIR}/")): encoding
        for rel, rule in rules.items()
        if (encoding := encoding_of(rule)) is not None
    }


_chosen: dict[str, str] = {}  # absolute path -> the analyst's encoding (set_chosen_encodings)
_chosen_lock = threading.Lock()


def set_chosen_encodings(paths: dict[str, str], under: Path) -> None:
    """The analyst's encodings for the files under ``under`` (a workspace's data folder):
    ``{absolute path: encoding}``; earlier choices under ``under`` are forgotten. The
    readers of :mod:`lantide.query.text_encodings` take only a path (they also run on the
    sniff-ahead thread): they look the choice up with :func:`chosen_encoding`."""
    prefix = os.path.join(str(under), "")
    with _chosen_lock:
        for key in [k for k in _chosen if k.startswith(prefix)]:
            del _chosen[key]
        _chosen.update(paths)


def chosen_encoding(path: Path) -> str | None:
    with _chosen_lock:
        return _chosen.get(str(path))


def _relative(root: Path, file: str) -> tuple[str, Path]:
    text = str(file).replace("\\", "/")
    path = Path(text)
    if not path.is_absolute():
        path = layout.data_dir(root) / text.removeprefix(f"{layout.DATA_DIR}/")
    data_dir = Path(os.path.realpath(layout.data_dir(root)))
    try:
        rel = Path(os.path.realpath(path)).relative_to(data_dir)
    except ValueError:
        raise QueryError(
            f"{file} is not a file in the workspace's data/ folder",
            code="NOT_A_DATA_FILE",
            hint="Name a file of data/, e.g. data/sales.csv.",
        ) from None
    return f"data/{rel.as_posix()}", path


def _text_file(root: Path, file: str, what: str) -> tuple[str, Path]:
    rel, path = _relative(root, file)
    if not path.is_file() or data_format(path.name) not in ("csv", "tsv"):
        raise QueryError(
            f"{rel} is not a CSV or TSV file in data/",
            code="NOT_A_DATA_FILE",
            hint=f"{what} can be chosen for .csv, .tsv and .txt files.",
        )
    return rel, path


def set_header_row(root: Path, file: str, header_row: int | None) -> HeaderRowSet:
    """Set (or with None remove) the header row of a CSV/TSV file in data/. Returns
    ``{"file", "header_row"}``. The data file itself is never touched."""
    rel, _path = _text_file(root, file, "A header row")
    if header_row is not None and not 0 <= header_row <= _MAX_HEADER_ROW:
        raise QueryError(
            f"header row {header_row} is out of range",
            code="BAD_HEADER_ROW",
            hint="Give the line number of the column names (1 is the first "
            "line), 0 for a file without a header line, or 'auto'.",
        )
    _set_rule(root, rel, "header_row", header_row)
    return {"file": rel, "header_row": header_row}


def set_encoding(root: Path, file: str, encoding: str | None) -> EncodingSet:
    """Set (or with None remove: detect it again) the text encoding of a CSV/TSV file in
    data/. Returns ``{"file", "encoding"}``. The data file itself is never touched."""
    from lantide.query.text_encodings import ENCODINGS, normalized

    rel, _path = _text_file(root, file, "An encoding")
    chosen = None if encoding is None else normalized(encoding)
    if encoding is not None and chosen is None:
        raise QueryError(
            f"{encoding!r} is not an encoding Lantide can read a file with",
            code="BAD_ENCODING",
            hint=f"Choose one of {', '.join(ENCODINGS)}, or 'auto' to detect it again.",
        )
    _set_rule(root, rel, "encoding", chosen)
    return {"file": rel, "encoding": chosen}


def _set_rule(root: Path, rel: str, key: str, value: object) -> None:
    """Set (None: remove) one entry of ``rel``'s rule, keeping the others."""
    from lantide.workspace.atomic import atomic_write_json
    from lantide.workspace.jsonfile import read_json_object

    target = rules_path(root)
    data: dict[str, Any] = {"version": 1, "files": {}}
    if target.exists():
        try:
            data = read_json_object(target, "data file rules")
        except LantideError as exc:
            raise QueryError(
                f"{exc.message}; it is not overwritten, so the rule was not set",
                code="RULES_UNREADABLE",
                hint=f"Fix or move aside {target}, then set the rule again.",
            ) from None
        if not isinstance(data.get("files"), dict):
            data["files"] = {}
    rule = dict(data["files"].get(rel) or {})
    if value is None:
        rule.pop(key, None)
    else:
        rule[key] = value
    if rule:
        data["files"][rel] = rule
    else:
        data["files"].pop(rel, None)
    data.setdefault("version", 1)
    atomic_write_json(target, data)
