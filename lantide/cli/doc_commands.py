"""``lantide annotations``: list and handle a Plan's or Report's annotations without the app.

```
lantide annotations WS PROJECT plan|report [--json] [--all]    list them (--all: deleted too)
  --create START:END --comment TEXT     mark [START, END) (character offsets) and comment
  --reply ID --text TEXT                 reply
  --resolve ID --answer TEXT             resolve, keeping the text (mode B)
  --resolve ID --replacement TEXT        resolve, replacing the marked text (mode A)
  --reopen ID                            reopen a resolved one
  --delete ID / --restore ID             delete one (kept in the sidecar) / bring it back
  --reattach ID --range START:END        give a detached annotation a new mark
  --by NAME                              who acts, for the history (default: user)
```
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from lantide.cli.common import Subparsers, add_command, open_workspace
from lantide.cli.output import print_json
from lantide.errors import UsageError

if TYPE_CHECKING:
    from lantide.docs.document import Annotation, Document


def register(subparsers: Subparsers) -> None:
    p = add_command(
        subparsers,
        "annotations",
        "list and handle the annotations of a Plan or Report",
        run_annotations,
    )
    p.add_argument("workspace")
    p.add_argument("project", help="project folder or name")
    p.add_argument("document", choices=["plan", "report"])
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--all",
        action="store_true",
        help="also list the deleted annotations (--restore ID brings one back)",
    )
    p.add_argument("--by", default="user", help="who acts, recorded in the history")
    action = p.add_mutually_exclusive_group()
    action.add_argument(
        "--create", metavar="START:END", help="annotate the text between two character offsets"
    )
    action.add_argument("--reply", metavar="ID", help="reply to an annotation (with --text)")
    action.add_argument(
        "--resolve",
        metavar="ID",
        help="resolve: --answer TEXT keeps the text (mode B), "
        "--replacement TEXT replaces it (mode A)",
    )
    action.add_argument("--reopen", metavar="ID", help="reopen a resolved annotation")
    action.add_argument(
        "--delete",
        metavar="ID",
        help="delete an annotation: its mark goes (the text stays), the "
        "annotation and its history are kept and can be restored",
    )
    action.add_argument(
        "--restore",
        metavar="ID",
        help="bring back a deleted annotation (marked again where its text "
        "is still found, else detached)",
    )
    action.add_argument(
        "--reattach", metavar="ID", help="mark a detached annotation again (with --range START:END)"
    )
    p.add_argument("--comment", help="the comment of --create")
    p.add_argument("--text", help="the reply of --reply")
    p.add_argument("--answer", help="the answer of --resolve")
    p.add_argument("--replacement", help="the new text of --resolve in mode A")
    p.add_argument("--range", metavar="START:END", help="the range of --reattach")


def _range(value: str, option: str) -> tuple[int, int]:
    try:
        start, end = value.split(":")
        return int(start), int(end)
    except ValueError:
        raise UsageError(
            f"{option} takes START:END (character offsets), got {value!r}",
            hint="For example: --create 120:131",
        ) from None


def _need(args: argparse.Namespace, option: str, *names: str) -> None:
    missing = [n for n in names if getattr(args, n) is None]
    if missing:
        raise UsageError(f"{option} needs " + " and ".join("--" + n for n in missing))


def _act(doc: Document, args: argparse.Namespace) -> dict[str, Any] | None:
    by = args.by
    if args.create is not None:
        _need(args, "--create", "comment")
        start, end = _range(args.create, "--create")
        ann_id = doc.create_annotation(start, end, args.comment, by=by)
        return {"action": "created", "id": ann_id}
    if args.reply is not None:
        _need(args, "--reply", "text")
        doc.reply(args.reply, args.text, by=by)
        return {"action": "replied", "id": args.reply}
    if args.resolve is not None:
        if args.replacement is None and args.answer is None:
            raise UsageError(
                "--resolve needs --answer TEXT (mode B) or --replacement TEXT (mode A)"
            )
        mode = "A" if args.replacement is not None else "B"
        change = doc.resolve(
            args.resolve, mode, replacement=args.replacement, answer=args.answer, by=by
        )
        return {"action": "resolved", **change}
    if args.reopen is not None:
        ann = doc.reopen(args.reopen, by=by)
        return {"action": "reopened", "id": ann.id, "detached": ann.detached}
    if args.delete is not None:
        doc.delete(args.delete, by=by)
        return {"action": "deleted", "id": args.delete}
    if args.restore is not None:
        ann = doc.undelete(args.restore, by=by)
        return {"action": "undeleted", "id": ann.id, "status": ann.status, "detached": ann.detached}
    if args.reattach is not None:
        _need(args, "--reattach", "range")
        start, end = _range(args.range, "--range")
        doc.reattach(args.reattach, start, end, by=by)
        return {"action": "reattached", "id": args.reattach}
    stray = [
        n
        for n in ("comment", "text", "answer", "replacement", "range")
        if getattr(args, n) is not None
    ]
    if stray:
        raise UsageError("--" + stray[0] + " goes with an action such as --create or --resolve")
    return None


def run_annotations(args: argparse.Namespace) -> int:
    from lantide.docs.agent_api import document_listing
    from lantide.docs.document import open_document

    ws = open_workspace(args.workspace)
    try:
        doc = open_document(ws.project(args.project), args.document)
        done = _act(doc, args)
        if args.json:
            out: dict[str, object] = {**document_listing(doc, include_deleted=args.all)}
            if done:
                out["done"] = done
            print_json(out)
        else:
            _print_human(doc, done, args.all)
    finally:
        ws.close()
    return 0


def _line(doc: Document, span: tuple[int, int] | None) -> str:
    return f"line {doc.scan.structure.line_of(span[0]) + 1}" if span else "no mark"


def _clip(text: str, limit: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_human(doc: Document, done: dict[str, Any] | None, show_deleted: bool) -> None:
    err = sys.stderr
    if doc.recovery:
        err.write(f"lantide: {doc.recovery.message}\n")
    if doc.read_only_reason:
        err.write(f"lantide: annotations are read-only: {doc.read_only_reason}\n")
        if doc.read_only_error and doc.read_only_error.hint:
            err.write(f"  {doc.read_only_error.hint}\n")
    for repair in doc.repairs:
        err.write(f"lantide: {repair.id}: {repair.detail} (not saved yet)\n")
    if done:
        extra = " (detached: its text is gone)" if done.get("detached") else ""
        print(f"{done['action']} {done['id']}{extra}")
    if doc.read_only_reason:
        _print_marks_only(doc)
        return
    anns, deleted = doc.annotations, doc.deleted_annotations
    resolved = sum(1 for a in anns if not a.is_open)
    counts = f"{doc.open_count} open, {resolved} resolved"
    if deleted:
        counts += f", {len(deleted)} deleted"
    print(f"{doc.relative_path()}: {counts}")
    for ann in anns:
        _print_annotation(doc, ann)
    if deleted and show_deleted:
        print("deleted:")
        for ann in deleted:
            _print_annotation(doc, ann)
    elif deleted:
        print(f"({len(deleted)} deleted: list them with --all, bring one back with --restore ID)")


def _print_marks_only(doc: Document) -> None:
    """Without a readable sidecar only the marks in the text are known."""
    marks = doc.marks
    print(
        f"{doc.relative_path()}: annotations unreadable; {len(marks)} "
        f"mark{'' if len(marks) == 1 else 's'} in the text"
    )
    for m in marks:
        print(
            f"{m.id}  {'?':<8}  {_line(doc, (m.inner_start, m.inner_end)):<8}  "
            f'"{_clip(m.inner(doc.text), 70)}"'
        )


def _print_annotation(doc: Document, ann: Annotation) -> None:
    flags = "".join(f" [{f}]" for f in ("detached", "recreated") if getattr(ann, f))
    status = "deleted" if ann.deleted else ann.status
    print(f'{ann.id}  {status:<8}  {_line(doc, ann.span):<8}  "{_clip(ann.quote, 70)}"{flags}')
    created = next((h for h in ann.history if h.get("action") in ("created", "recreated")), None)
    who = created.get("by", "?") if created else "?"
    if ann.comment:
        print(f"    {who}: {_clip(ann.comment)}")
    if ann.latest_reply:
        print(
            f"    reply by {ann.latest_reply.get('by', '?')}: "
            f"{_clip(ann.latest_reply.get('text', ''))}"
        )
    if ann.resolution:
        res = ann.resolution
        what = (
            f'replaced with "{_clip(res.get("replacement", ""), 60)}"'
            if res.get("mode") == "A"
            else _clip(res.get("text", ""))
        )
        print(f"    resolved ({res.get('mode')}) by {res.get('by', '?')}: {what}")
    if ann.deleted:
        gone = ann.deletion or {}
        print(
            f"    deleted by {gone.get('by', '?')} at {gone.get('at', '?')} "
            f"(was {ann.status}); --restore {ann.id} brings it back"
        )
