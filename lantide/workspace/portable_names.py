"""Names that become file or folder names must work on every platform.

Workspaces move between machines (a share, a zip, a git repository), so a name that
Linux accepts but Windows cannot hold (``con``, ``aux.sql``, ``report.``, ``a:b``) is
refused everywhere: on Windows the file could not be created, opened or copied, and a
workspace made on Linux would lose it on the way.
"""

from __future__ import annotations

import re

# Device names Windows reserves in every folder, with any extension ("con.txt" too).
# The superscript digits are reserved as well (COM¹ is COM1 to Windows).
_RESERVED = re.compile(
    r"^(con|prn|aux|nul|conin\$|conout\$|clock\$|(com|lpt)[0-9\u00b9\u00b2\u00b3])$", re.IGNORECASE
)
_INVALID_CHARS = re.compile(r'[\x00-\x1f<>:"/\\|?*]')


def portable_name_problem(name: str) -> str | None:
    """Why ``name`` (one path component, with or without its suffix) cannot be a file or
    folder name on every platform, or None when it can."""
    bad = _INVALID_CHARS.search(name)
    if bad:
        shown = repr(bad.group())[1:-1] if bad.group() < " " else bad.group()
        return f"{shown!r} cannot be part of a file name on Windows"
    if name.endswith((".", " ")):
        return "a name cannot end with a dot or a space on Windows"
    stem = name.split(".", 1)[0].rstrip(" ")
    if _RESERVED.match(stem):
        return f"{stem!r} is a device name reserved by Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9)"
    return None
