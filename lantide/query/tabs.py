"""SQL tabs on disk: ``projects/NAME/sql/TAB.sql``.

A tab's file name (without ``.sql``) is also the name of its cached table. These are the
file operations only; :class:`lantide.query.service.QueryService` pairs them with the
cached table (rename it, drop it) and reports dependent tabs, which it never edits.
A deleted tab's file is moved to ``.lantide/trash/``, never destroyed.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from lantide.errors import CorruptFileError
from lantide.query.errors import TabError
from lantide.query.names import INTERNAL_SCHEMA
from lantide.workspace.atomic import atomic_write_text, own_writes
from lantide.workspace.model import Project

_BAD_TAB = re.compile(r"[\x00-\x1f/\\:*?\"<>|]")
MAX_TAB_NAME = 100


def validate_tab_name(name: str) -> str:
    clean = (name or "").strip()
    if clean.lower().endswith(".sql"):
        clean = clean[:-4].strip()
    if (not clean or clean.startswith(".") or clean.endswith(".") or _BAD_TAB.search(clean)
            or len(clean) > MAX_TAB_NAME or clean.casefold().startswith(INTERNAL_SCHEMA)
            or clean.casefold().startswith("__lantide")):
        raise TabError(
            f"invalid SQL tab name {name!r}",
            code="BAD_TAB_NAME",
            hint="Use letters, digits, '_' or '-' (it becomes the cached table's name), "
                 f"at most {MAX_TAB_NAME} characters, no slashes or leading dot.")
    return clean


def tab_path(project: Project, name: str) -> Path:
    return project.sql_dir / f"{validate_tab_name(name)}.sql"


def tab_names(project: Project) -> list[str]:
    return project.sql_tab_names()


def find_tab(project: Project, name: str, names: list[str] | None = None) -> str:
    """The tab's name as on disk (a case-insensitive match is accepted).

    ``names``: the project's tab names when the caller listed them already.
    """
    clean = validate_tab_name(name)
    names = tab_names(project) if names is None else names
    if clean in names:
        return clean
    for candidate in names:
        if candidate.casefold() == clean.casefold():
            return candidate
    raise TabError(f"no SQL tab {clean!r} in project {project.name!r}",
                   code="TAB_NOT_FOUND",
                   hint=f"Tabs of {project.dirname}: {', '.join(names) or 'none yet'}.")


def read_tab(project: Project, name: str, names: list[str] | None = None) -> str:
    path = project.sql_dir / f"{find_tab(project, name, names)}.sql"
    try:
        return path.read_text(encoding="utf-8-sig")  # Windows editors may start with a BOM
    except UnicodeDecodeError as exc:
        raise CorruptFileError(path, f"not UTF-8 text (byte {exc.start})") from None
    except FileNotFoundError:  # removed since ``names`` was listed
        raise TabError(f"SQL tab {path.stem!r} of project {project.name!r} was removed",
                       code="TAB_NOT_FOUND",
                       hint="It was deleted or renamed meanwhile; reopen the project's tabs.") from None


def check_no_tab_named(project: Project, name: str) -> None:
    if any(n.casefold() == name.casefold() for n in tab_names(project)):
        raise TabError(f"project {project.name!r} already has a SQL tab {name!r}",
                       code="TAB_EXISTS", hint="Choose another name, or edit the existing tab.")


def write_new_tab(project: Project, name: str, sql: str) -> Path:
    name = validate_tab_name(name)
    check_no_tab_named(project, name)
    path = project.sql_dir / f"{name}.sql"
    atomic_write_text(path, sql if sql.endswith("\n") else sql + "\n")
    return path


def rename_tab_file(project: Project, old: str, new: str) -> tuple[str, str]:
    old = find_tab(project, old)
    new = validate_tab_name(new)
    if new != old and any(n.casefold() == new.casefold() and n != old for n in tab_names(project)):
        raise TabError(f"project {project.name!r} already has a SQL tab {new!r}",
                       code="TAB_EXISTS", hint="Choose another name.")
    source = project.sql_dir / f"{old}.sql"
    target = project.sql_dir / f"{new}.sql"
    source.rename(target)  # a rename is atomic; the text is not rewritten
    own_writes.forget(source)
    own_writes.record(target)
    return old, new


def trash_tab_file(project: Project, name: str, trash_dir: Path) -> Path:
    name = find_tab(project, name)
    source = project.sql_dir / f"{name}.sql"
    target_dir = trash_dir / project.dirname / "sql"
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / f"{name}-{datetime.now().strftime('%Y%m%d-%H%M%S-%f')}.sql"
    source.rename(target)
    own_writes.forget(source)
    return target
