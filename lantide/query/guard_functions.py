"""Which functions a query may call: an allow-list of table functions, file readers whose
path is checked, and functions that reach outside the workspace.

A table function runs in ``FROM``; some have side effects (``checkpoint()``, logging,
profiling, extension resources) or run SQL the guard cannot see. So the guard allows only
the table functions named here and refuses every other one, including ones a future
DuckDB adds (``tests/query/test_guard_functions.py`` lists DuckDB's table functions from
``duckdb_functions()`` and fails on one that is not decided here).

:func:`duckdb_calls` asks DuckDB's own parser (``json_serialize_sql``) which functions a
statement calls, so a statement that sqlglot reads differently from DuckDB is still
decided on what DuckDB will run.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

# Table functions that only read: generators, catalog and metadata views.
READ_ONLY_TABLE_FUNCTIONS = frozenset(
    {
        "range",
        "generate_series",
        "unnest",
        "repeat",
        "repeat_row",
        "json_each",
        "json_tree",
        "histogram",
        "histogram_values",
        "summary",
        "icu_calendar_names",
        "pg_timezone_names",
        "test_all_types",
        "test_vector_types",
        "duckdb_approx_database_count",
        "duckdb_available_metrics",
        "duckdb_columns",
        "duckdb_connection_count",
        "duckdb_constraints",
        "duckdb_coordinate_systems",
        "duckdb_databases",
        "duckdb_dependencies",
        "duckdb_dialects",
        "duckdb_eviction_queues",
        "duckdb_extension_repositories",
        "duckdb_extensions",
        "duckdb_external_file_cache",
        "duckdb_functions",
        "duckdb_grammar_extensions",
        "duckdb_indexes",
        "duckdb_keywords",
        "duckdb_live_query_metrics",
        "duckdb_memory",
        "duckdb_optimizers",
        "duckdb_prepared_statements",
        "duckdb_schemas",
        "duckdb_sequences",
        "duckdb_settings",
        "duckdb_tables",
        "duckdb_temporary_files",
        "duckdb_triggers",
        "duckdb_types",
        "duckdb_variables",
        "duckdb_views",
        "pragma_collations",
        "pragma_database_size",
        "pragma_metadata_info",
        "pragma_platform",
        "pragma_show",
        "pragma_storage_info",
        "pragma_table_info",
        "pragma_user_agent",
        "pragma_version",
    }
)

# Table functions whose first argument is a path or glob: allowed inside data/ only.
FILE_READERS = frozenset(
    {
        "read_csv",
        "read_csv_auto",
        "read_parquet",
        "parquet_scan",
        "read_json",
        "read_json_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "read_json_objects",
        "read_json_objects_auto",
        "read_ndjson_objects",
        "read_text",
        "read_blob",
        "glob",
        "sniff_csv",
        "parquet_metadata",
        "parquet_schema",
        "parquet_file_metadata",
        "parquet_kv_metadata",
        "parquet_full_metadata",
        "parquet_page_index",
        "parquet_bloom_probe",
        "read_xlsx",
        "read_duckdb",
        "read_single_csv_file",
        "read_single_json_file",
        "read_single_parquet_file",
    }
)

_STATE = "It changes the database or its settings; queries only read."
_SQL = "It runs SQL the guard cannot see; write the query itself."
_HOST = "It reaches into the host program; queries read the workspace's tables and data/ files."
_SECRETS = (
    "Secrets are not readable from queries; connections are set up in Settings > Connections."
)
_LOGS = "Logging and profiling are Lantide's settings, not switched from queries."
_OUTSIDE = (
    "Queries read the workspace's data/ files, cached tables and staged connections "
    "only; connect a database in Settings > Connections."
)

# Table functions refused, with what to do instead. Anything not listed anywhere is refused
# as well; these are here so a refusal can say why.
REFUSED_TABLE_FUNCTIONS: dict[str, str] = {
    "checkpoint": _STATE,
    "force_checkpoint": _STATE,
    "add_grammar_extension": _STATE,
    "remove_grammar_extension": _STATE,
    "create_external_resource": _STATE,
    "destroy_external_resource": _STATE,
    "register_external_resource": _STATE,
    "deregister_external_resource": _STATE,
    "register_external_resource_type": _STATE,
    "duckdb_external_resources": _STATE,
    "duckdb_external_resource_types": _STATE,
    "enable_logging": _LOGS,
    "disable_logging": _LOGS,
    "enable_profiling": _LOGS,
    "disable_profiling": _LOGS,
    "truncate_duckdb_logs": _LOGS,
    "duckdb_logs": _LOGS,
    "duckdb_logs_parsed": _LOGS,
    "duckdb_log_contexts": _LOGS,
    "duckdb_profiling_settings": _LOGS,
    "query": _SQL,
    "query_table": _SQL,
    "json_execute_serialized_sql": _SQL,
    "duckdb_table_sample": "Sample with USING SAMPLE: SELECT * FROM t USING SAMPLE 100 ROWS.",
    "arrow_scan": _HOST,
    "arrow_scan_dumb": _HOST,
    "pandas_scan": _HOST,
    "python_arrow_scan": _HOST,
    "python_map_function": _HOST,
    "seq_scan": _HOST,
    "duckdb_secrets": _SECRETS,
    "which_secret": _SECRETS,
    "duckdb_secret_types": _SECRETS,
    "duckdb_secret_type_parameters": _SECRETS,
    "postgres_scan": _OUTSIDE,
    "postgres_scan_pushdown": _OUTSIDE,
    "postgres_query": _OUTSIDE,
    "postgres_execute": _OUTSIDE,
    "postgres_attach": _OUTSIDE,
    "sqlite_scan": _OUTSIDE,
    "sqlite_attach": _OUTSIDE,
    "sqlite_query": _OUTSIDE,
    "mysql_scan": _OUTSIDE,
    "mysql_query": _OUTSIDE,
    "mysql_execute": _OUTSIDE,
    "odbc_scan": _OUTSIDE,
    "odbc_query": _OUTSIDE,
    "iceberg_scan": _OUTSIDE,
    "iceberg_metadata": _OUTSIDE,
    "iceberg_snapshots": _OUTSIDE,
    "delta_scan": _OUTSIDE,
    "read_xlsx_remote": _OUTSIDE,
}

# Functions refused wherever they appear (scalar ones too): they leave the workspace, run
# unseen SQL or change state.
OUTSIDE_FUNCTIONS: dict[str, str] = {
    "getenv": "Environment variables are not readable from queries.",
    "load_extension": _STATE,
    "http_get": _OUTSIDE,
    "http_post": _OUTSIDE,
    "setval": _STATE,
    "nextval": _STATE,
    **{
        name: hint
        for name, hint in REFUSED_TABLE_FUNCTIONS.items()
        if hint in (_SQL, _SECRETS, _OUTSIDE)
    },
}

# Scalar functions DuckDB marks as having side effects that are harmless in a read-only
# query (randomness, ids, sleeping within the time limit, logging that cannot be enabled).
# The test lists DuckDB's side-effect scalars: each is here or in OUTSIDE_FUNCTIONS.
HARMLESS_SIDE_EFFECT_SCALARS = frozenset(
    {
        "random",
        "setseed",
        "uuid",
        "uuidv4",
        "uuidv7",
        "gen_random_uuid",
        "error",
        "sleep_ms",
        "current_connection_id",
        "current_query",
        "current_query_id",
        "current_transaction_id",
        "currval",
        "stats",
        "vector_type",
        "write_log",
    }
)

# Options of the file readers that make DuckDB create tables (temporary ones, named by the
# query, which then shadow the workspace's tables for the session).
WRITING_OPTIONS = frozenset({"store_rejects", "rejects_table", "rejects_scan"})
WRITING_OPTION_HINT = (
    "Rows a reader cannot parse are skipped with ignore_errors = true; "
    "queries never create tables (store_rejects, rejects_table, rejects_scan)."
)

TABLE_FUNCTION_CODE = "QUERY_REFUSED_FUNCTION"
PATH_HINT = (
    "Write the file's path as a string (or a list of strings) in the statement, "
    "e.g. read_csv('data/sales.csv'), so Lantide can check it stays inside data/."
)


def table_function_hint(name: str) -> str | None:
    """None when ``name`` may be called in FROM; else what to do instead."""
    if name in READ_ONLY_TABLE_FUNCTIONS or name in FILE_READERS:
        return None
    return REFUSED_TABLE_FUNCTIONS.get(name) or (
        "Only Lantide's list of read-only table functions may be called in FROM (range, "
        "generate_series, unnest, read_csv and the other file readers of data/, the "
        "duckdb_* catalog views); compute the rows with a SELECT instead."
    )


class DuckDBCall:
    """A function call as DuckDB's parser sees it."""

    __slots__ = ("name", "in_from", "paths", "options")

    def __init__(
        self,
        name: str,
        in_from: bool,
        paths: list[str] | None,
        options: frozenset[str] = frozenset(),
    ):
        self.name = name
        self.in_from = in_from
        self.paths = paths  # the first argument's strings; None if it is not constant
        self.options = options  # names of its named arguments, lower case


_parser_lock = threading.Lock()
_parser = None  # an in-memory database of the guard's own, when no engine offers one
# Engines open in this process offer their database's parser (``Engine.parser_cursor``):
# parsing needs no data and no access, and a second DuckDB database costs its start-up
# (the catalog of built-in functions: 15-25 ms) before a process's first statement.
# Weak references: an engine nobody closed must not keep its database open from here.
_offered: list[weakref.ref[Any]] = []


def offer_parser(engine: Any) -> None:
    """``engine.parser_cursor()`` parses from now on (the last one offered)."""
    with _parser_lock:
        _offered.append(weakref.ref(engine))


def withdraw_parser(engine: Any) -> None:
    """No more parsing on ``engine``'s database; returns once no parse runs on it."""
    with _parser_lock:
        _offered[:] = [r for r in _offered if r() is not None and r() is not engine]


# DuckDB's answers asked for ahead (:func:`serialize_ahead`), each taken once by its analysis
_ahead: dict[str, str] = {}
_AHEAD_MAX = 256
_SERIALIZE = "SELECT json_serialize_sql(?)"
_SERIALIZE_MANY = "SELECT b, json_serialize_sql(b) FROM unnest(?::VARCHAR[]) AS t(b)"


def _on_a_parser(run: Callable[[Any], Any]) -> Any:
    """``run(cursor)`` on the engine offered last that is still there, else (none, or it
    cannot parse now: closing, invalidated) on the guard's own database. Under the lock."""
    global _parser
    while _offered:
        engine = _offered[-1]()
        if engine is None:
            _offered.pop()
            continue
        try:
            return run(engine.parser_cursor())
        except Exception:
            break
    if _parser is None:
        from lantide.query.duckdb_import import duckdb_core

        _parser = duckdb_core().connect(":memory:", config={"enable_external_access": False})
    return run(_parser)


def serialized(body: str) -> str:
    """DuckDB's ``json_serialize_sql`` of ``body``: asked ahead, or asked now."""
    with _parser_lock:
        known = _ahead.pop(body, None)
        if known is not None:
            return known
        return str(_on_a_parser(lambda cur: cur.execute(_SERIALIZE, [body]).fetchall()[0][0]))


def remember_serialized(body: str, text: str) -> None:
    """Keep an answer for the next reader of the same text (the guard's plain reading
    passes it on to the full one)."""
    with _parser_lock:
        if len(_ahead) >= _AHEAD_MAX:
            _ahead.clear()
        _ahead[body] = text


def serialize_ahead(bodies: Iterable[str]) -> None:
    """Ask DuckDB's parser about several statements in one query (each alone is a round
    trip of about 0.5-1 ms: Source Run analyses every tab of a project before the first
    one runs). The same function on the same text: each answer is what :func:`duckdb_calls`
    would get, taken once. Nothing is kept when the query fails; each asks alone then."""
    with _parser_lock:
        wanted = [b for b in dict.fromkeys(bodies) if b not in _ahead]
        if len(wanted) < 2:
            return
        try:
            rows = _on_a_parser(lambda cur: cur.execute(_SERIALIZE_MANY, [wanted]).fetchall())
        except Exception:
            return
        if len(_ahead) + len(rows) > _AHEAD_MAX:
            _ahead.clear()  # answers asked for and never taken (their analysis was cached)
        for body, text in rows:
            _ahead[str(body)] = str(text)


def duckdb_calls(body: str) -> list[DuckDBCall] | None:
    """The functions ``body`` calls, by DuckDB's parser; None when DuckDB cannot serialize
    the statement (PIVOT, a syntax error: decided by sqlglot alone, and DuckDB's own
    error is reported at run time). More than one statement raises ``ValueError``: the
    two parsers disagree on where a statement ends, and the guard refuses it."""
    try:
        text = serialized(body)
        tree = json.loads(text)
    except Exception:
        return None
    if tree.get("error"):
        return None
    if len(tree.get("statements") or []) != 1:
        raise ValueError(f"DuckDB reads {len(tree.get('statements') or [])} statements")
    calls: list[DuckDBCall] = []
    _collect(tree, calls)
    return calls


def _collect(node: object, calls: list[DuckDBCall]) -> None:
    if isinstance(node, dict):
        if node.get("type") == "TABLE_FUNCTION" and isinstance(node.get("function"), dict):
            function = node["function"]
            calls.append(
                DuckDBCall(
                    str(function.get("function_name", "")).lower(),
                    True,
                    _first_argument_strings(function),
                    _option_names(function),
                )
            )
            for value in function.values():
                _collect(value, calls)
            for key, value in node.items():
                if key != "function":
                    _collect(value, calls)
            return
        if node.get("class") == "FUNCTION" and "function_name" in node:
            calls.append(DuckDBCall(str(node["function_name"]).lower(), False, None))
        for value in node.values():
            _collect(value, calls)
    elif isinstance(node, list):
        for value in node:
            _collect(value, calls)


def _option_names(function: dict[str, Any]) -> frozenset[str]:
    """Named arguments: ``name := value`` (a named argument) or ``name = value`` (DuckDB
    keeps that one as a comparison with a column)."""
    names = set()
    for arg in function.get("arguments") or [
        {"expression": c} for c in function.get("children") or []
    ]:
        if not isinstance(arg, dict):
            continue
        if arg.get("name"):
            names.add(str(arg["name"]).lower())
        expr = arg.get("expression") or {}
        left = (
            expr.get("left")
            if isinstance(expr, dict) and expr.get("class") == "COMPARISON"
            else None
        )
        if (
            isinstance(left, dict)
            and left.get("class") == "COLUMN_REF"
            and left.get("column_names")
        ):
            names.add(str(left["column_names"][-1]).lower())
    return frozenset(names)


def _first_argument_strings(function: dict[str, Any]) -> list[str] | None:
    arguments = function.get("arguments")
    if arguments is None:  # older serialization: plain children
        arguments = [{"name": "", "expression": c} for c in function.get("children") or []]
    positional = [
        a.get("expression") for a in arguments if isinstance(a, dict) and not a.get("name")
    ]
    if not positional:
        return []
    return _constant_strings(positional[0])


def _constant_strings(expr: object) -> list[str] | None:
    if not isinstance(expr, dict):
        return None
    if expr.get("class") == "CONSTANT":
        literal = expr.get("literal") or {}
        if literal.get("kind") == "STRING":
            return [str(literal.get("text"))]
        value = expr.get("value") or {}
        if isinstance(value, dict) and isinstance(value.get("value"), str):
            return [value["value"]]
        return None
    if expr.get("class") == "FUNCTION" and expr.get("function_name") == "list_value":
        out: list[str] = []
        for arg in expr.get("arguments") or [{"expression": c} for c in expr.get("children") or []]:
            strings = _constant_strings(arg.get("expression") if isinstance(arg, dict) else None)
            if strings is None:
                return None
            out.extend(strings)
        return out
    return None
