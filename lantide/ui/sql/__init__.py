"""SQL tabs: the editor, running queries, result grids, charts, lineage, Source Run and
query history."""
