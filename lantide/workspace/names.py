"""One rule for the names an analyst or the agent gives: SQL tabs, charts and projects.

A name becomes a file or folder name (``sql/NAME.sql``, ``charts/NAME.vl.json``,
``projects/NAME/``) and, for a tab, its cached table's name. So a new name is letters and
digits (any script), ``_``, ``-`` and single spaces, starts with a letter or digit, is at
most :data:`MAX_NAME` characters and can be a file name on every platform
(:mod:`lantide.workspace.portable_names`). The New SQL tab dialog, renaming, the agent's
tools and saving a chart all ask :func:`name_problem`; each layer raises its own error with
:data:`NAME_HINT`. Names already on disk are looked up without the rule, so a file made
by hand keeps working and can be renamed.

A name with spaces is written percent-encoded in a Markdown link
(:func:`lantide.workspace.layout.chart_link`): CommonMark ends a link target at a space.
"""

from __future__ import annotations

import re

from lantide.workspace.portable_names import portable_name_problem

MAX_NAME = 80
NAME_HINT = (
    "Use letters, digits, '_', '-' or single spaces, starting with a letter or digit, "
    f"at most {MAX_NAME} characters (e.g. orders_by_region)."
)


def name_problem(name: str) -> str | None:
    """Why ``name`` (already stripped of outer spaces and its suffix) cannot be a new
    tab's, chart's or project's name, or None when it can."""
    if not name:
        return "it is empty"
    if len(name) > MAX_NAME:
        return f"it is {len(name)} characters long (at most {MAX_NAME})"
    portable = portable_name_problem(name)
    if portable:
        return portable
    if not name[0].isalnum():
        return f"it starts with {name[0]!r}: start with a letter or digit"
    bad = next((c for c in name if not (c.isalnum() or c in "_- ")), None)
    if bad is not None:
        return f"{bad!r} is not allowed in a name"
    if "  " in name:
        return "it has two spaces in a row"
    return None


def name_hint(name: str) -> str:
    """:data:`NAME_HINT`, with a name the rule accepts made from ``name`` when there is one."""
    suggestion = suggested_name(name)
    if suggestion != name and name_problem(suggestion) is None:
        return f"{NAME_HINT} Try {suggestion!r}."
    return NAME_HINT


def suggested_name(name: str) -> str:
    """A name the rule accepts, made from ``name`` (for a hint): other characters become
    ``_``, outer ``_`` and spaces go; ``name`` itself when nothing is left."""
    clean = re.sub(r"[^\w\- ]+", "_", name.strip())
    clean = re.sub(r" {2,}", " ", clean).strip(" _-")
    return clean[:MAX_NAME].rstrip() or name
