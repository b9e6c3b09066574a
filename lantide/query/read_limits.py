"""The bounds on reading data files, apart from the checks that apply them.

:class:`ReadLimits` is made when the query layer opens (from the ``query.*`` settings); the
workbook checks that use it (:mod:`lantide.query.workbook_limits`, with ``zipfile``) load
only when a workspace holds a workbook, the JSON one with :mod:`lantide.query.sources`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lantide.workspace.settings import QuerySettings


@dataclass(frozen=True)
class ReadLimits:
    """The bounds on reading data files (``query.*`` settings of the same names); the JSON
    one is checked in :mod:`lantide.query.sources`."""

    max_workbook_mb: int = 1024
    max_sheet_cells: int = 10_000_000
    max_json_object_mb: int = 16

    @classmethod
    def from_settings(cls, settings: QuerySettings) -> ReadLimits:
        defaults = cls()
        return cls(
            *(int(getattr(settings, f.name, getattr(defaults, f.name))) for f in fields(cls))
        )
