"""What a statement reads: the guard's parse, and each table it names resolved.

:class:`InputResolver` is the first stage of every statement, before the
:class:`~lantide.query.runner.StatementRunner` executes it: the guard
(:func:`lantide.query.guard.check`), then each table name resolved to an input of
:mod:`lantide.query.lineage` (another tab, a data file or sheet, a cached table, a table
of an external connection, or unknown), then the inputs checked (a workbook named
instead of its sheet, a data file that could not be read). SQL tabs, Source Run and the
grid's browsing resolve names the same way through it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lantide.query import lineage as lin
from lantide.query.catalog import Catalog
from lantide.query.connection_names import ConnectionNames
from lantide.query.errors import DataFileUnreadable, TableNotFound
from lantide.query.guard import ParsedQuery, TableRef, check
from lantide.query.names import same_name
from lantide.query.sources import DataSources, DataTable

if TYPE_CHECKING:
    from lantide.workspace.model import Workspace


class InputResolver:
    """Guard and name resolution of one workspace's statements."""

    def __init__(
        self,
        workspace: Workspace,
        sources: DataSources,
        catalog: Catalog,
        external: ConnectionNames,
    ):
        """``external``: the workspace's connections by name (an
        :class:`~lantide.query.external.ExternalSources` is one too)."""
        self.workspace = workspace
        self.sources = sources
        self.catalog = catalog
        self.external = external

    def refresh_if_stale(self) -> None:
        """Re-register the data files when data/ changed: a watcher event can be missed
        (network drives, editors); a stat of data/ is cheap."""
        if self.sources.needs_refresh():
            self.sources.refresh()

    def guard(self, sql: str) -> ParsedQuery:
        """The guard's parse of one read-only statement (or its refusal)."""
        return check(
            sql,
            data_dir=self.workspace.data_dir,
            workspace_root=self.workspace.root,
            known_table=lambda ref: self.resolve(ref).kind != lin.UNKNOWN,
        )

    def resolve(self, ref: TableRef, project_tabs: Iterable[str] = ()) -> lin.Input:
        """What ``ref`` names; ``project_tabs``: the tabs of the project it is read from."""
        display = ref.display()
        connection = self.external.match(ref)
        if connection:
            return lin.Input(lin.EXTERNAL, display, connection, ref)
        schema = ref.schema
        if ref.catalog is not None:
            return lin.Input(lin.UNKNOWN, display, display)
        if schema is None or same_name(schema, "main"):
            for tab in project_tabs:
                if same_name(tab, ref.name):
                    return lin.Input(lin.TAB, display, tab)
            data = self.sources.resolve(None, ref.name)
            if data is not None:
                return lin.Input(lin.DATA, display, str(data.path), data)
            cached = self.catalog.cached(ref.name)
            if cached is not None:
                return lin.Input(lin.CACHED, display, cached.name, cached)
            return lin.Input(lin.UNKNOWN, display, display, ref)
        data = self.sources.resolve(schema, ref.name)
        if data is not None:
            return lin.Input(lin.DATA, display, str(data.path), data)
        return lin.Input(lin.UNKNOWN, display, display, ref)

    def check_inputs(self, inputs: list[lin.Input]) -> None:
        """Read the workbook sheets the statement names (they are read on first use), and
        refuse one that names a data file (or sheet) that failed, saying which file and
        why, rather than DuckDB's "does not exist! Did you mean"."""
        for inp in inputs:
            if inp.kind == lin.DATA:
                self.sources.load_sheet(_data_table(inp))
            if inp.kind != lin.UNKNOWN or not isinstance(inp.detail, TableRef):
                continue
            ref = inp.detail
            schema = (
                None if ref.schema is not None and same_name(ref.schema, "main") else ref.schema
            )
            if ref.catalog is not None:
                continue
            sheets = self.sources.sheets_of(ref.name) if schema is None else []
            if sheets:
                names = ", ".join(t.qualified_name for t in sheets[:5])
                raise TableNotFound(
                    f"{inp.name} is a workbook; its sheets are the tables: {names}",
                    hint=f"Name a sheet with the workbook: {sheets[0].qualified_name}.",
                )
            failed = self.sources.failed(schema, ref.name)
            if failed is None:
                continue
            source = failed.to_dict(self.workspace.root)["source"]
            sheet = (
                f", sheet {failed.name!r}"
                if failed.schema and failed.name != failed.path.name
                else ""
            )
            said = (failed.error or "").startswith(source)  # the problem names the file already
            raise DataFileUnreadable(
                f"{inp.name}: {failed.error}"
                if said
                else f"{inp.name} is the data file {source}{sheet}, which could not be read: "
                f"{failed.error}",
                hint=f"Fix or replace {source} (Lantide never changes it); the next query "
                "reads it again. `lantide tables` lists every file's problem.",
            )

    def reading_warnings(self, inputs: list[lin.Input]) -> list[str]:
        """What the reader skipped or read differently in the data files read: a warning
        per note, naming the file (see :mod:`lantide.query.reading_notes`)."""
        out: list[str] = []
        for inp in inputs:
            if inp.kind != lin.DATA:
                continue
            table = _data_table(inp)
            # a sheet read for this statement has its notes now, not when it was resolved
            table = self.sources.resolve(table.schema, table.name) or table
            if table.notes:
                source = table.to_dict(self.workspace.root)["source"]
                out.extend(f"{source}: {note}" for note in table.notes)
        return list(dict.fromkeys(out))


def _data_table(inp: lin.Input) -> DataTable:
    assert isinstance(inp.detail, DataTable), inp  # a data input's detail, by construction
    return inp.detail
