"""Plans and Reports: Markdown documents, their annotation marks and sidecars (DESIGN.md 5).

The public API (no Qt; the desktop app, the agent's tools and the command line call it):

- :func:`open_document` ``(project, kind) -> Document`` (:mod:`lantide.docs.document`):
  create, reply, resolve, reopen, reattach, delete and undelete annotations; a deleted
  annotation is kept, history and all, in the sidecar's ``deleted`` list
- :func:`agent_view`, :func:`resolve_annotations`, :func:`update_document`
  (:mod:`lantide.docs.agent_api`): the ``read_plan``/``read_report``,
  ``resolve_annotations`` and ``update_plan``/``update_report`` backends;
  :func:`document_listing`: the same view with whole entries (``annotations --json``)
- :func:`render_html` (:mod:`lantide.docs.render`): the preview, with marks and line map
- :class:`DocumentMonitor` (:mod:`lantide.docs.watch`): external edits -> ``DocumentChanged``

Payload types (TypedDicts): one sidecar entry is :class:`lantide.docs.sidecar.AnnotationEntry`
with its ``history`` of :class:`~lantide.docs.sidecar.AnnotationEvent`; what the agent
and ``annotations --json`` get is in :mod:`lantide.docs.agent_view_types`.
"""

from lantide.docs.agent_api import (
    agent_view,
    document_listing,
    resolve_annotations,
    update_document,
)
from lantide.docs.document import KINDS, Annotation, Document, SaveReport, open_document
from lantide.docs.render import RenderedDocument, render_html
from lantide.docs.watch import DocumentChanged, DocumentMonitor

__all__ = [
    "KINDS",
    "Annotation",
    "Document",
    "DocumentChanged",
    "DocumentMonitor",
    "RenderedDocument",
    "SaveReport",
    "agent_view",
    "document_listing",
    "open_document",
    "render_html",
    "resolve_annotations",
    "update_document",
]
