"""SQL tabs on disk: ``projects/NAME/sql/TAB.sql``.

A tab's file name (without ``.sql``) is also the name of its cached table. These are the
file operations only; :class:`lantide.query.service.QueryService` pairs them with the
cached table (rename it, drop it) and reports dependent tabs; a rename rewrites their
references (:func:`read_tabs_exactly`, :func:`write_rewrites`, :mod:`lantide.query.tab_refs`).
A deleted tab's file is moved to ``.lantide/trash/``, never destroyed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.errors import CorruptFileError
from lantide.query.errors import TabError
from lantide.query.names import INTERNAL_SCHEMA
from lantide.workspace import layout
from lantide.workspace.atomic import (
    atomic_create_bytes,
    atomic_write_text,
    link_or_move,
    own_writes,
)
from lantide.workspace.model import Project

if TYPE_CHECKING:
    from lantide.query.tab_refs import Rewrite
from lantide.workspace.names import name_hint, name_problem
from lantide.workspace.portable_names import portable_name_problem

_BAD_TAB = re.compile(r"[\x00-\x1f/\\:*?\"<>|]")
MAX_TAB_NAME = 100  # a tab already on disk; a new one: the shared rule's MAX_NAME


def validate_tab_name(name: str, *, existing: bool = False) -> str:
    """``name`` cleaned (no ``.sql``, no outer spaces), or :class:`TabError`.

    A new name must follow the names' rule (:mod:`lantide.workspace.names`: letters,
    digits, '_', '-', single spaces; portable); with ``existing`` (looking up a tab
    already on disk) it need not, so a file made elsewhere as ``con.sql`` or
    ``q3 (old).sql`` can still be listed, run and renamed to a name that follows it.
    """
    clean = (name or "").strip()
    if clean.lower().endswith(".sql"):
        clean = clean[:-4].strip()
    hint = name_hint(clean)  # the tab's name is its cached table's name too
    problem = None if existing else name_problem(clean)
    if (
        problem is None
        and clean
        and (
            clean.casefold().startswith(INTERNAL_SCHEMA) or clean.casefold().startswith("__lantide")
        )
    ):
        problem = "names starting like Lantide's own tables are kept for them"
    if problem is None and (
        not clean
        or clean.startswith(".")
        or clean.endswith(".")
        or _BAD_TAB.search(clean)
        or len(clean) > MAX_TAB_NAME
    ):
        problem = (portable_name_problem(clean) if clean else None) or "it cannot be a file name"
    if problem:
        raise TabError(f"invalid SQL tab name {name!r}: {problem}", code="BAD_TAB_NAME", hint=hint)
    return clean


def tab_path(project: Project, name: str) -> Path:
    """The file of a tab whose name is checked first (:func:`validate_tab_name`)."""
    return project.sql_tab_path(validate_tab_name(name))


def tab_names(project: Project) -> list[str]:
    return project.sql_tab_names()


def find_tab(project: Project, name: str, names: list[str] | None = None) -> str:
    """The tab's name as on disk (a case-insensitive match is accepted).

    ``names``: the project's tab names when the caller listed them already.
    """
    clean = validate_tab_name(name, existing=True)
    names = tab_names(project) if names is None else names
    if clean in names:
        return clean
    for candidate in names:
        if candidate.casefold() == clean.casefold():
            return candidate
    raise TabError(
        f"no SQL tab {clean!r} in project {project.name!r}",
        code="TAB_NOT_FOUND",
        hint=f"Tabs of {project.dirname}: {', '.join(names) or 'none yet'}.",
    )


def read_tab(project: Project, name: str, names: list[str] | None = None) -> str:
    path = project.sql_tab_path(find_tab(project, name, names))
    try:
        return path.read_text(encoding="utf-8-sig")  # Windows editors may start with a BOM
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise CorruptFileError(
            path,
            f"not UTF-8 text (byte {exc.start}, line {line})",
            hint="The file was left as it is. Save it as UTF-8 in a text editor; the "
            "project's other tabs are not affected.",
        ) from None
    except FileNotFoundError:  # removed since ``names`` was listed
        raise TabError(
            f"SQL tab {path.stem!r} of project {project.name!r} was removed",
            code="TAB_NOT_FOUND",
            hint="It was deleted or renamed meanwhile; reopen the project's tabs.",
        ) from None
    except OSError as exc:  # e.g. no permission: a problem of this tab, named
        raise CorruptFileError(path, f"cannot be read ({exc.strerror or exc})") from None


def check_no_tab_named(project: Project, name: str) -> None:
    if any(n.casefold() == name.casefold() for n in tab_names(project)):
        raise TabError(
            f"project {project.name!r} already has a SQL tab {name!r}",
            code="TAB_EXISTS",
            hint="Choose another name, or edit the existing tab.",
        )


def write_new_tab(project: Project, name: str, sql: str) -> Path:
    name = validate_tab_name(name)
    check_no_tab_named(project, name)
    path = project.sql_tab_path(name)
    try:  # created, never replaced: a tab made meanwhile by another window stays
        atomic_create_bytes(path, (sql if sql.endswith("\n") else sql + "\n").encode("utf-8"))
    except FileExistsError:
        raise _tab_exists(project, name) from None
    return path


def _tab_exists(project: Project, name: str) -> TabError:
    return TabError(
        f"project {project.name!r} already has a SQL tab {name!r}",
        code="TAB_EXISTS",
        hint="Choose another name, or edit the existing tab.",
    )


def rename_tab_file(project: Project, old: str, new: str) -> tuple[str, str]:
    old = find_tab(project, old)
    new = validate_tab_name(new)
    if new != old and any(n.casefold() == new.casefold() and n != old for n in tab_names(project)):
        raise TabError(
            f"project {project.name!r} already has a SQL tab {new!r}",
            code="TAB_EXISTS",
            hint="Choose another name.",
        )
    source = project.sql_tab_path(old)
    target = project.sql_tab_path(new)
    if new.casefold() == old.casefold():
        source.rename(target)  # a respelling: the same file on case-insensitive disks
    else:
        # link, then unlink: unlike rename, a link never replaces a file that appeared at
        # the new name after the check above; the text is not rewritten either way
        try:
            link_or_move(source, target)
        except FileExistsError:
            raise _tab_exists(project, new) from None
        if source.exists():
            source.unlink()
    own_writes.forget(source)
    own_writes.record(target)
    return old, new


def trash_tab_file(project: Project, name: str) -> Path:
    name = find_tab(project, name)
    source = project.sql_tab_path(name)
    target = layout.trashed_sql_tab_path(
        project.workspace_root, project.dirname, name, datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    source.rename(target)
    own_writes.forget(source)
    return target


def read_tabs_exactly(project: Project, *, exclude: str | None = None) -> dict[str, str]:
    """Every tab's text but ``exclude``'s, exactly as on disk (line ends and a byte-order
    mark kept), for rewriting; a tab that is not UTF-8 text is left out (it cannot be
    parsed, and it is never rewritten)."""
    out: dict[str, str] = {}
    for name in tab_names(project):
        if name == exclude:
            continue
        try:
            out[name] = project.sql_tab_path(name).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def write_rewrites(projects: Mapping[str, Project], rewrites: list[Rewrite]) -> None:
    """Write each rewritten tab (of ``projects``, by folder name) atomically; a tab changed
    on disk since it was read, or a failed write, puts back every tab written before and
    raises (nothing changed)."""
    written: list[Rewrite] = []
    try:
        for rewrite in rewrites:
            path = projects[rewrite.project].sql_tab_path(rewrite.tab)
            if path.read_bytes().decode("utf-8") != rewrite.old_text:
                raise TabError(
                    f"SQL tab {rewrite.tab!r} changed on disk during the rename; "
                    "nothing was changed",
                    code="TAB_CHANGED",
                    hint="Rename again.",
                )
            _write_exactly(path, rewrite.new_text)
            written.append(rewrite)
    except BaseException:
        for rewrite in reversed(written):
            _write_exactly(projects[rewrite.project].sql_tab_path(rewrite.tab), rewrite.old_text)
        raise


def _write_exactly(path: Path, text: str) -> None:
    # a text starting with a byte-order mark keeps it: the encoder writes U+FEFF as one
    atomic_write_text(path, text, encoding="utf-8")
