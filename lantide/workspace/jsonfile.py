"""Reading the small JSON files Lantide keeps (project.json, workspace.json, settings).

A file that cannot be parsed is reported with its path, line and column, and is never
rewritten: callers refuse to save over a file they could not read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lantide.errors import CorruptFileError, MissingFileError


def read_json_object(path: Path, what: str = "file") -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingFileError(path, what) from None
    except UnicodeDecodeError as exc:
        raise CorruptFileError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise CorruptFileError(path, f"cannot be read ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptFileError(
            path, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    if not isinstance(data, dict):
        raise CorruptFileError(path, f"expected a JSON object, found {type(data).__name__}")
    return data
