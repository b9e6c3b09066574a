"""The agent's pending edits of a Plan, a Report or an HTML Report (DESIGN.md section 9).

An agent's change (``update_plan``, ``update_report``, ``resolve_annotations``,
``patch_html_chunk``) is not written to the document: it is stored as a pending edit,
``.lantide/edits/PROJECT/ID.json``::

    {"version": 1, "id": "e3f9a1c2b", "project": "q3-churn", "kind": "report",
     "document": "projects/q3-churn/report.md", "tool": "update_report",
     "by": "agent", "at": "2026-12-04T18:00:00Z", "conversation": "c-…" | null,
     "base_sha256": "…", "base_text": "…",          # the text on disk it was made against
     "hunks": [{"index": 0, "old_start": 4, "old": [lines], "new": [lines],
                "status": "pending" | "accepted" | "rejected" | "superseded"}],
     "resolve": [{"id", "mode", "replacement"?, "answer"?}] | null}

The analyst accepts or rejects it hunk by hunk (:mod:`lantide.docs.edit_review`); the
document files on disk hold only accepted text. An edit whose hunks are all decided is
removed; what was decided stays in ``project.json``'s history.

Annotations stay consistent with the marks this way:

- an ``update_*`` edit's accepted text is saved as the analyst's own save would be
  (:meth:`lantide.docs.document.Document.save_text`): marks present keep their
  annotations, marks an accepted hunk removed are re-anchored by quote or detached;
- a ``resolve_annotations`` edit changes the sidecar (status, history) with the text, so it
  is decided whole: accepting it runs the resolution on the document as it is then (text
  and sidecar in one atomic pair), rejecting it leaves both files untouched.

A newer ``update_*`` edit of a document supersedes the older ones still pending (it holds
the agent's whole new text, made against the accepted text).

The workspace setting ``agent_edits`` (``.lantide/workspace.json``): ``review`` (the
default) keeps edits pending; ``apply`` writes them at once and records them in the history
as accepted by the setting.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lantide.docs.edit_hunks import (
    ACCEPTED,
    PENDING,
    STATUSES,
    Hunk,
    compute_hunks,
    sha256_text,
    split_lines,
)
from lantide.errors import CorruptFileError, LantideError
from lantide.workspace import layout
from lantide.workspace.atomic import atomic_write_json
from lantide.workspace.jsonfile import read_json_object

if TYPE_CHECKING:
    from lantide.workspace.model import Project, Workspace

EDIT_VERSION = 1
REVIEW, APPLY = "review", "apply"
MODES = (REVIEW, APPLY)
SETTING = "agent_edits"  # the key of .lantide/workspace.json
SETTING_BY = "setting"  # who accepted an edit applied at once
UPDATE_TOOLS = ("update_plan", "update_report")
KINDS = ("plan", "report", "html")
_ID = re.compile(r"^e[0-9a-f]{8}$")


class EditError(LantideError):
    code = "EDIT"


class EditNotFoundError(EditError):
    code = "EDIT_NOT_FOUND"


@dataclass
class PendingEdit:
    id: str
    project: str
    kind: str
    document: str  # workspace-relative path, forward slashes
    tool: str
    by: str
    at: str
    base_text: str
    hunks: list[Hunk]
    resolve: list[dict[str, Any]] | None = None
    conversation: str | None = None
    path: Path | None = field(default=None, compare=False)

    @property
    def base_sha256(self) -> str:
        return sha256_text(self.base_text)

    def hunk_indices(self, status: str) -> list[int]:
        return [h.index for h in self.hunks if h.status == status]

    @property
    def pending(self) -> list[Hunk]:
        return [h for h in self.hunks if h.status == PENDING]

    @property
    def accepted(self) -> list[Hunk]:
        return [h for h in self.hunks if h.status == ACCEPTED]

    @property
    def decided(self) -> bool:
        """Nothing left to decide (an edit without hunks, a resolution, waits for one)."""
        return bool(self.hunks) and not self.pending

    @property
    def whole_only(self) -> bool:
        """Decided as a whole: it changes the annotations' sidecar with the text."""
        return self.resolve is not None

    def proposal(self) -> str:
        from lantide.docs.edit_hunks import apply_in_place

        return "".join(apply_in_place(split_lines(self.base_text), self.hunks))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": EDIT_VERSION,
            "id": self.id,
            "project": self.project,
            "kind": self.kind,
            "document": self.document,
            "tool": self.tool,
            "by": self.by,
            "at": self.at,
            "conversation": self.conversation,
            "base_sha256": self.base_sha256,
            "base_text": self.base_text,
            "hunks": [h.to_dict() for h in self.hunks],
            "resolve": self.resolve,
        }


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the setting -------------------------------------------------------------------------
def edit_mode(workspace_root: Path) -> str:
    """``review`` or ``apply``, read from ``.lantide/workspace.json`` now (the CLI or the app
    may have changed it). A value that means neither is ``review``: nothing is written
    unseen by mistake."""
    try:
        settings = read_json_object(layout.settings_path(workspace_root), "workspace settings")
    except LantideError:
        return REVIEW
    value = settings.get(SETTING, REVIEW)
    return value if value in MODES else REVIEW


def set_edit_mode(workspace: Workspace, mode: str) -> None:
    """Set ``agent_edits`` in the workspace's settings (``review`` or ``apply``)."""
    if mode not in MODES:
        raise EditError(f"unknown agent_edits {mode!r}", hint="Use 'review' or 'apply'.")
    workspace.update_settings(lambda data: data.__setitem__(SETTING, mode))


# -- reading and writing edit files -------------------------------------------------------
def document_file(project: Project, kind: str) -> Path:
    if kind == "html":
        return layout.report_html_path(project.dir)
    return project.document_path(kind)


def check_edit_id(project: Project, edit_id: str) -> Path:
    """The file of ``edit_id``; an id that is not one of ours (``../x``) is unknown."""
    if not isinstance(edit_id, str) or not _ID.match(edit_id):
        raise EditNotFoundError(
            f"no pending edit {edit_id!r} in project {project.dirname}",
            hint=f"List the pending edits: lantide edits WORKSPACE {project.dirname}",
        )
    return layout.edit_path(project.workspace_root, project.dirname, edit_id)


def load_edit(project: Project, edit_id: str) -> PendingEdit:
    path = check_edit_id(project, edit_id)
    if not path.is_file():
        raise EditNotFoundError(
            f"no pending edit {edit_id!r} in project {project.dirname} (decided already, "
            "or never made)",
            hint=f"List the pending edits: lantide edits WORKSPACE {project.dirname}",
        )
    return read_edit_file(path)


def list_edits(project: Project) -> tuple[list[PendingEdit], list[CorruptFileError]]:
    """The project's pending edits, oldest first, and the files that could not be read
    (left as they are, each error naming its file)."""
    folder = layout.edits_dir(project.workspace_root, project.dirname)
    edits: list[PendingEdit] = []
    problems: list[CorruptFileError] = []
    if not folder.is_dir():
        return edits, problems
    for path in sorted(folder.glob("*.json")):
        if not _ID.match(path.stem):
            continue  # not ours (a temporary file, a copy the analyst made)
        try:
            edits.append(read_edit_file(path))
        except CorruptFileError as exc:
            problems.append(exc)
    edits.sort(key=lambda e: (e.at, e.id))
    return edits, problems


def pending_for(project: Project, kind: str | None = None) -> list[PendingEdit]:
    """The readable pending edits of ``project`` (of one document kind)."""
    edits, _problems = list_edits(project)
    return [e for e in edits if kind is None or e.kind == kind]


def read_edit_file(path: Path) -> PendingEdit:
    """An edit file, checked; anything malformed is a :class:`CorruptFileError` naming it
    (the file is never rewritten)."""
    data = read_json_object(path, "pending edit")

    def bad(problem: str) -> CorruptFileError:
        return CorruptFileError(
            path,
            f"not a readable pending edit: {problem}",
            hint="The file was left as it is. Move it aside (the document is unchanged); the "
            "agent can propose the edit again.",
        )

    strings = ("id", "project", "kind", "document", "tool", "by", "at", "base_text")
    for key in strings:
        if not isinstance(data.get(key), str):
            raise bad(f"{key!r} must be a string")
    if data["id"] != path.stem:
        raise bad(f"its id {data['id']!r} is not its file name")
    if data["kind"] not in KINDS:
        raise bad(f"kind {data['kind']!r} is not one of {', '.join(KINDS)}")
    if data.get("base_sha256") != sha256_text(data["base_text"]):
        raise bad("base_text does not match base_sha256")
    raw_hunks = data.get("hunks")
    if not isinstance(raw_hunks, list):
        raise bad("'hunks' must be a list")
    base_count = len(split_lines(data["base_text"]))
    hunks: list[Hunk] = []
    for n, raw in enumerate(raw_hunks):
        hunks.append(_read_hunk(raw, n, base_count, bad))
    for a, b in zip(hunks, hunks[1:], strict=False):
        if b.old_start <= a.old_end:  # difflib keeps an unchanged line between two hunks
            raise bad(f"hunks {a.index} and {b.index} overlap")
    resolve = data.get("resolve")
    if resolve is not None and not (
        isinstance(resolve, list) and all(isinstance(i, dict) for i in resolve)
    ):
        raise bad("'resolve' must be a list of objects or null")
    conversation = data.get("conversation")
    return PendingEdit(
        id=data["id"],
        project=data["project"],
        kind=data["kind"],
        document=data["document"],
        tool=data["tool"],
        by=data["by"],
        at=data["at"],
        base_text=data["base_text"],
        hunks=hunks,
        resolve=resolve,
        conversation=conversation if isinstance(conversation, str) else None,
        path=path,
    )


def _read_hunk(raw: object, n: int, base_count: int, bad: Any) -> Hunk:
    if not isinstance(raw, dict):
        raise bad(f"hunk {n} is not an object")
    index, start = raw.get("index"), raw.get("old_start")
    if index != n:
        raise bad(f"hunk {n} has index {index!r} (hunks are numbered 0, 1, … in order)")
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise bad(f"hunk {n}: old_start must be a line number")
    old, new = raw.get("old"), raw.get("new")
    for name, lines in (("old", old), ("new", new)):
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            raise bad(f"hunk {n}: {name!r} must be a list of lines")
    assert isinstance(old, list) and isinstance(new, list)
    if start + len(old) > base_count:
        raise bad(f"hunk {n} reaches past the end of base_text")
    if raw.get("status") not in STATUSES:
        raise bad(f"hunk {n}: status {raw.get('status')!r} is not one of {', '.join(STATUSES)}")
    return Hunk(n, start, list(old), list(new), str(raw["status"]))


def write_edit(project: Project, edit: PendingEdit) -> Path:
    path = layout.edit_path(project.workspace_root, project.dirname, edit.id)
    atomic_write_json(path, edit.to_dict())
    edit.path = path
    return path


def new_edit_id(project: Project) -> str:
    while True:
        edit_id = "e" + secrets.token_hex(4)
        if not layout.edit_path(project.workspace_root, project.dirname, edit_id).exists():
            return edit_id


# -- making an edit -----------------------------------------------------------------------
def propose(
    project: Project,
    kind: str,
    base: str,
    proposal: str,
    *,
    tool: str,
    by: str = "agent",
    conversation: str | None = None,
    resolve: list[dict[str, Any]] | None = None,
) -> PendingEdit | None:
    """Store the change from ``base`` (the document on disk) to ``proposal`` as a pending
    edit; None when there is nothing to review (the same text, no resolution)."""
    from lantide.docs.edit_review import supersede

    hunks = compute_hunks(base, proposal)
    if not hunks and resolve is None:
        return None
    path = document_file(project, kind)
    edit = PendingEdit(
        id=new_edit_id(project),
        project=project.dirname,
        kind=kind,
        document=relative_path(project, path),
        tool=tool,
        by=by,
        at=_now(),
        base_text=base,
        hunks=hunks,
        resolve=json.loads(json.dumps(resolve)) if resolve is not None else None,
        conversation=conversation,
    )
    if tool in UPDATE_TOOLS:  # the newest whole text replaces what was still pending
        for older in pending_for(project, kind):
            if older.tool in UPDATE_TOOLS:
                supersede(project, older, by=by, newer=edit.id)
    write_edit(project, edit)
    return edit


def relative_path(project: Project, path: Path) -> str:
    try:
        return path.relative_to(project.workspace_root).as_posix()
    except ValueError:
        return str(path)


def edit_summary(edit: PendingEdit) -> dict[str, Any]:
    """What the agent is told about its pending edit (kept small: no text)."""
    from lantide.docs.edit_hunks import line_span

    return {
        "edit_id": edit.id,
        "hunks": [{"index": h.index, "lines": line_span(h)} for h in edit.pending],
    }


def describe(edit: PendingEdit) -> dict[str, Any]:
    """An edit as ``lantide edits --json`` prints it and the app shows it."""
    from lantide.docs.edit_hunks import line_span, unified_diff

    return {
        "id": edit.id,
        "project": edit.project,
        "document": edit.document,
        "kind": edit.kind,
        "tool": edit.tool,
        "by": edit.by,
        "at": edit.at,
        "base_sha256": edit.base_sha256,
        "whole_only": edit.whole_only,
        "resolve": [i.get("id") for i in edit.resolve or []],
        "hunks": [
            {**h.to_dict(), "lines": line_span(h), "diff": unified_diff(edit.base_text, [h])}
            for h in edit.hunks
        ],
        "diff": unified_diff(edit.base_text, edit.pending, label=edit.document),
    }
