"""Question sets: one JSON file per set, checked against a schema when loaded.

```json
{"name": "sample", "workspace": "sample",
 "cases": [{"id": "customers-total", "messages": ["How many customers are there?"],
            "state": {"project": "q3-churn", "status": "executing"},
            "expect": {"values": [{"value": 1987, "tolerance": 0}],
                       "gold_sql": "SELECT count(*) FROM customers WHERE NOT is_test_account",
                       "behaviour": ["cite_step"]}}]}
```

- ``workspace``: ``sample`` (a fresh copy of the sample workspace) or a folder inside the
  set file's folder, copied for each case; an absolute path, one leading out of that folder
  (``../other``) or a folder holding a link out of it is refused before anything is copied.
- ``messages``: the analyst's messages, one turn each, in order.
- ``state``: the project focused before the first message and its status.
- ``expect.values``: numbers the final answer (or the Report) must state, each within its
  tolerance (absolute; ``relative`` for a share of the value). ``expect.table``: rows a
  result must hold, compared by value and order-insensitive unless ``ordered``.
- ``expect.gold_sql``: the SQL the values come from; a test runs it on the workspace so
  the recorded values cannot drift from the data.
- ``expect.behaviour``: ``ask_user`` (must ask a clarifying question), ``refuse`` (must not
  run what was asked, e.g. a write), ``cite_step`` (the answer names a ledger step).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import NotRequired, TypedDict

from lantide.errors import LantideError

BEHAVIOURS = ("ask_user", "refuse", "cite_step")
SAMPLE = "sample"  # the shipped sample workspace, made afresh

SCHEMA = {
    "type": "object",
    "required": ["name", "workspace", "cases"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "workspace": {"type": "string", "minLength": 1},
        "cases": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "messages", "expect"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,63}$"},
                    "kind": {"type": "string"},
                    "messages": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"type": "string", "minLength": 1},
                    },
                    "state": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"project": {"type": "string"}, "status": {"type": "string"}},
                    },
                    "expect": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "values": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["value"],
                                    "additionalProperties": False,
                                    "properties": {
                                        "value": {"type": "number"},
                                        "tolerance": {"type": "number", "minimum": 0},
                                        "relative": {"type": "number", "minimum": 0},
                                        "label": {"type": "string"},
                                    },
                                },
                            },
                            "table": {
                                "type": "object",
                                "required": ["rows"],
                                "additionalProperties": False,
                                "properties": {
                                    "rows": {"type": "array", "items": {"type": "array"}},
                                    "ordered": {"type": "boolean"},
                                },
                            },
                            "gold_sql": {"type": "string"},
                            "behaviour": {
                                "type": "array",
                                "items": {"type": "string", "enum": list(BEHAVIOURS)},
                            },
                        },
                    },
                },
            },
        },
    },
}


class ExpectedValue(TypedDict):
    """A number the answer must state (``expect.values``; the schema above)."""

    value: float
    tolerance: NotRequired[float]  # absolute
    relative: NotRequired[float]  # a share of the value
    label: NotRequired[str]


class ExpectedTable(TypedDict):
    """Rows a result must hold (``expect.table``)."""

    rows: list[list[object]]
    ordered: NotRequired[bool]


class Expect(TypedDict, total=False):
    """A case's ``expect``: every part optional (the schema above)."""

    values: list[ExpectedValue]
    table: ExpectedTable
    gold_sql: str
    behaviour: list[str]  # BEHAVIOURS


class CaseState(TypedDict, total=False):
    """The project focused before the first message, and its status."""

    project: str
    status: str


class QuestionSetError(LantideError):
    code = "EVAL_SET_INVALID"


class WorkspaceOutsideError(QuestionSetError):
    code = "EVAL_WORKSPACE_OUTSIDE"


@dataclass(frozen=True)
class Case:
    id: str
    messages: list[str]
    expect: Expect
    state: CaseState = field(default_factory=lambda: CaseState())
    kind: str = ""


@dataclass(frozen=True)
class QuestionSet:
    name: str
    path: Path
    workspace: str
    cases: list[Case]
    description: str = ""

    def workspace_source(self) -> Path | None:
        """The folder copied for each case; None for the sample workspace. Checked on every
        call (:func:`confined_workspace`), so nothing outside the set's folder is copied."""
        return None if self.workspace == SAMPLE else confined_workspace(self.path, self.workspace)


def confined_workspace(set_path: Path, name: str) -> Path:
    """The workspace folder ``name`` of the set at ``set_path``: a folder inside the set's
    own folder (DESIGN.md section 9), holding no link that leads out of it. Anything else
    (an absolute path, ``..``, a link out) would copy another workspace's tables and
    knowledge into every case and send them to the model: refused before any copy."""
    folder = set_path.parent.resolve()
    hint = (
        f'Use "{SAMPLE}" or the name of a folder inside {folder}; copy the workspace '
        "there (without links out of it) to evaluate on it."
    )
    if Path(name).is_absolute() or PureWindowsPath(name).is_absolute():
        raise WorkspaceOutsideError(
            f"{set_path}: workspace {name!r} is an absolute path; a question set's "
            "workspace must be a folder inside the set's own folder",
            hint=hint,
        )
    source = (folder / name).resolve()
    if source == folder or not source.is_relative_to(folder):
        raise WorkspaceOutsideError(
            f"{set_path}: workspace {name!r} leads to {source}, outside the set's folder "
            f"{folder}; a question set's workspace must be a folder inside it",
            hint=hint,
        )
    if source.is_dir():
        for path in source.rglob("*"):
            if path.is_symlink() and not path.resolve().is_relative_to(source):
                raise WorkspaceOutsideError(
                    f"{set_path}: workspace {name!r} holds a link out of it "
                    f"({path} -> {path.resolve()}); its target would be copied into "
                    "every case",
                    hint=hint,
                )
    return source


def builtin_sets() -> dict[str, Path]:
    from lantide.package_data import resource_path

    folder = resource_path("evals")
    return {p.stem: p for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


def load_question_set(name_or_path: str | Path) -> QuestionSet:
    """A set by file path or by the name of one that ships with Lantide (``sample``)."""
    from jsonschema import Draft202012Validator

    path = Path(name_or_path)
    if not path.is_file():
        shipped = builtin_sets()
        if str(name_or_path) not in shipped:
            raise QuestionSetError(
                f"no question set {str(name_or_path)!r}",
                hint=f"Pass a set file (.json) or one of: {', '.join(shipped) or 'none shipped'}.",
            )
        path = shipped[str(name_or_path)]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise QuestionSetError(
            f"{path}: not a readable JSON question set ({exc})",
            hint="Fix the file; it is left as it is.",
        ) from exc
    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(top)"
        raise QuestionSetError(
            f"{path}: {where}: {first.message}",
            hint="See the format in lantide/evaluation/question_set.py.",
        )
    ids = [c["id"] for c in data["cases"]]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise QuestionSetError(
            f"{path}: case id {dup!r} is used twice", hint="Give every case its own id."
        )
    qs = QuestionSet(
        name=data["name"],
        path=path,
        workspace=data["workspace"],
        description=data.get("description", ""),
        cases=[
            Case(
                id=c["id"],
                messages=list(c["messages"]),
                expect=c["expect"],
                state=c.get("state", {}),
                kind=c.get("kind", ""),
            )
            for c in data["cases"]
        ],
    )
    source = qs.workspace_source()
    if source is not None and not source.is_dir():
        raise QuestionSetError(
            f"{path}: workspace folder {source} does not exist",
            hint=f'Use "{SAMPLE}" or a folder inside the set file\'s folder.',
        )
    return qs
