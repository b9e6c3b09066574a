"""Helpers shared by the document tests (imported as ``docs_helpers``)."""

from __future__ import annotations

import json

from lantide.workspace.model import Project


def read_sidecar(project: Project, kind: str = "plan") -> dict:
    return json.loads((project.dir / f"{kind}.annotations.json").read_text(encoding="utf-8"))


def disk_text(project: Project, kind: str = "plan") -> str:
    return project.document_path(kind).read_bytes().decode("utf-8")


def mark(ann_id: str, inner: str) -> str:
    return f'<mark data-annotation-id="{ann_id}">{inner}</mark>'


def entry(ann_id: str, quote: str, status: str = "open", comment: str = "why?", **extra) -> dict:
    out = {
        "id": ann_id,
        "status": status,
        "quote": quote,
        "comment": comment,
        "anchor": {"span": [0, 0]},
        "history": [
            {"at": "2026-11-30T10:00:00Z", "by": "user", "action": "created", "text": comment}
        ],
    }
    out.update(extra)
    return out
