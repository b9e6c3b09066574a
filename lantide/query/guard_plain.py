"""The guard's reading of a plain statement by DuckDB's own parser, without sqlglot.

Most statements are plain: one SELECT over at most one table, no join, no file path
(``select 42``, ``SELECT count(*) FROM lineitem``, an aggregate grouped by a column).
Reading them with sqlglot costs its import (about 130 ms of CPU and 42 MB of memory in
every command-line process) for a tree nothing downstream needs. :func:`read_plain` reads
such a statement from DuckDB's own tokens and ``json_serialize_sql`` tree (the parser of
the engine that runs it, already asked by the guard for every statement) and says what the
guard's full reading would say.

It only ever accepts. It accepts when every node of DuckDB's tree is of a kind listed here
and every call passes the same function rules as the full reading
(:mod:`lantide.query.guard_functions`); anything else (a refusal, a join, a file path, a
table function reading files, DESCRIBE, SUMMARIZE, PIVOT, VALUES, a parenthesised
statement, a recursive CTE, more than one table, a node kind not listed) returns None, and
the full reading in :mod:`lantide.query.guard` decides as it always did, with its own
messages. tests/query/test_guard_plain.py holds both readings side by side on the guard's
corpora: where this one accepts, the two agree on the body, the kind, the tables, the CTEs
and (for the result checks) whether the output divides.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lantide.query.guard_functions import (
    FILE_READERS,
    OUTSIDE_FUNCTIONS,
    remember_serialized,
    serialized,
    table_function_hint,
)

# Expression classes of DuckDB's tree read here; the function rules decide the calls.
_EXPRESSION_CLASSES = frozenset(
    {
        "CONSTANT",
        "COLUMN_REF",
        "FUNCTION",
        "OPERATOR",
        "COMPARISON",
        "CONJUNCTION",
        "CASE",
        "CAST",
        "BETWEEN",
        "STAR",
        "SUBQUERY",
        "WINDOW",
        "LAMBDA",
        "COLLATE",
        "POSITIONAL_REFERENCE",
        "TYPE",  # a cast's target type
    }
)
# Other typed nodes: queries, the table references allowed here, result modifiers.
_NODE_TYPES = frozenset(
    {
        "SELECT_NODE",
        "SET_OPERATION_NODE",
        "BASE_TABLE",
        "SUBQUERY",
        "TABLE_FUNCTION",
        "EMPTY",
        "ORDER_MODIFIER",
        "LIMIT_MODIFIER",
        "LIMIT_PERCENT_MODIFIER",
        "DISTINCT_MODIFIER",
        "ASCENDING",
        "DESCENDING",
        "ORDER_DEFAULT",
    }
)
_SET_KINDS = {"UNION": "Union", "UNION_BY_NAME": "Union", "EXCEPT": "Except"}
_SET_KINDS["INTERSECT"] = "Intersect"
# Calls that divide: the result checks read the output's divisions with sqlglot's tree.
_DIVIDING = frozenset({"/", "//", "divide", "fdiv", "integer_division", "%", "mod", "fmod"})
_DATA_SUFFIXES = (".csv", ".tsv", ".parquet", ".json", ".ndjson", ".jsonl", ".gz", ".txt")
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")


@dataclass(frozen=True)
class PlainReading:
    """What the guard needs of a plain statement (see :class:`lantide.query.guard.ParsedQuery`)."""

    body: str
    body_start: int  # in characters of the text
    kind: str  # sqlglot's name of the statement's kind: "Select", "Union", ...
    cte_count: int
    tables: tuple[tuple[str | None, str | None, str], ...]  # (catalog, schema, name)
    divides: bool  # some call divides (the result checks then read the output's divisions)


class _NotPlain(Exception):
    """A node or call this reading leaves to the full one."""


def duckdb_tokens(sql: str) -> list[tuple[int, int, str, bytes]] | None:
    """``sql``'s tokens by DuckDB's tokenizer: (start, end, kind, text) with offsets in the
    text's UTF-8 bytes (DuckDB counts bytes), kinds such as "keyword", "identifier",
    "string_const", "operator", "comment"; None when the tokenizer is not there or fails."""
    from lantide.query.duckdb_import import duckdb_core

    tokenize = getattr(duckdb_core(), "tokenize", None)
    if tokenize is None:
        return None
    raw = sql.encode("utf-8")
    try:
        starts = [(int(start), str(kind).rsplit(".", 1)[-1]) for start, kind in tokenize(sql)]
    except Exception:
        return None
    out = []
    for i, (start, kind) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(raw)
        text = raw[start:end].rstrip()  # a token runs to the next one, less the space between
        out.append((start, start + len(text), kind, text))
    return out


def statement_span(sql: str, max_nesting: int) -> tuple[str, int] | None:
    """The text's one statement (without leading comments, trailing ``;`` and comments) and
    where it starts, by DuckDB's tokenizer; None when it is not plainly one statement (a
    ``;`` before its end, no tokens, deeper than ``max_nesting`` brackets, a statement in
    parentheses) or the tokenizer is not there."""
    tokens = duckdb_tokens(sql)
    if tokens is None:
        return None
    words = [t for t in tokens if t[2] != "comment"]
    depth = deepest = 0
    for _start, _end, kind, text in words:
        if kind == "operator":
            for ch in text.decode("utf-8", "replace"):
                if ch in _OPENING:
                    depth += 1
                    deepest = max(deepest, depth)
                elif ch in _CLOSING:
                    depth -= 1
    while words and words[-1][2] == "operator" and words[-1][3] == b";":
        words.pop()
    if not words or deepest > max_nesting or words[0][3].startswith(b"("):
        return None
    if any(kind == "operator" and b";" in text for _s, _e, kind, text in words):
        return None
    raw = sql.encode("utf-8")
    start, end = words[0][0], words[-1][1]
    try:
        body = raw[start:end].decode("utf-8")
        body_start = len(raw[:start].decode("utf-8"))
    except UnicodeDecodeError:
        return None
    return body, body_start


def read_plain(sql: str, max_nesting: int) -> PlainReading | None:
    """The plain statement's reading, or None to leave it to the full reading."""
    span = statement_span(sql, max_nesting)
    if span is None:
        return None
    body, body_start = span
    around = sql[:body_start] + sql[body_start + len(body) :]
    try:
        if around.replace(";", "").strip() and not _one_statement(serialized(sql)):
            return None  # the comments around it: DuckDB must read them as comments
        text = serialized(body)
    except Exception:
        return None
    try:
        tree = json.loads(text)
        statements = tree.get("statements") or []
        if tree.get("error") or len(statements) != 1:
            raise _NotPlain
        node = statements[0].get("node")
        kind = _kind(node)
        found = _Found()
        found.walk(node)
        if len(found.tables) > 1:
            raise _NotPlain
        return PlainReading(body, body_start, kind, found.ctes, tuple(found.tables), found.divides)
    except (_NotPlain, AttributeError, TypeError, ValueError):
        remember_serialized(body, text)  # the full reading asks DuckDB the same
        return None


def _one_statement(text: str) -> bool:
    try:
        tree = json.loads(text)
    except ValueError:
        return False
    return not tree.get("error") and len(tree.get("statements") or []) == 1


def _kind(node: Any) -> str:
    if not isinstance(node, dict):
        raise _NotPlain
    if node.get("type") == "SELECT_NODE":
        return "Select"
    if node.get("type") == "SET_OPERATION_NODE" and node.get("setop_type") in _SET_KINDS:
        return _SET_KINDS[node["setop_type"]]
    raise _NotPlain


class _Found:
    """What a walk of DuckDB's tree finds; raises :class:`_NotPlain` at anything else."""

    def __init__(self) -> None:
        self.tables: list[tuple[str | None, str | None, str]] = []
        self.cte_names: set[str] = set()
        self.ctes = 0
        self.divides = False
        self._refs: list[tuple[str | None, str | None, str]] = []

    def walk(self, node: Any) -> None:
        self._visit(node)
        seen = set()
        for ref in self._refs:  # CTE names anywhere in the statement are not tables
            catalog, schema, name = ref
            if catalog is None and schema is None and name.casefold() in self.cte_names:
                continue
            key = tuple(p.casefold() for p in ref if p)
            if key not in seen:
                seen.add(key)
                self.tables.append(ref)

    def _visit(self, node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                self._visit(item)
            return
        if not isinstance(node, dict):
            return
        cls, kind = node.get("class"), node.get("type")
        if cls is not None:
            if cls not in _EXPRESSION_CLASSES:
                raise _NotPlain
            if cls in ("FUNCTION", "WINDOW"):
                self._call(node, in_from=False)
        elif kind is not None:
            if kind not in _NODE_TYPES:
                raise _NotPlain
            if kind == "BASE_TABLE":
                self._table(node)
            elif kind == "TABLE_FUNCTION":
                function = node.get("function")
                if not isinstance(function, dict) or function.get("class") != "FUNCTION":
                    raise _NotPlain
                self._call(function, in_from=True)
                for value in function.values():
                    self._visit(value)
                for key, value in node.items():
                    if key != "function":
                        self._visit(value)
                return
            cte_map = node.get("cte_map")
            if isinstance(cte_map, dict):
                for entry in cte_map.get("map") or []:
                    self.ctes += 1
                    self.cte_names.add(str(entry["key"]).casefold())
                    value = entry.get("value") or {}
                    if value.get("key_targets") or value.get("aliases"):
                        raise _NotPlain  # USING KEY, column aliases: left to the full reading
        for value in node.values():
            self._visit(value)

    def _call(self, call: dict[str, Any], *, in_from: bool) -> None:
        name = str(call.get("function_name", "")).lower()
        if call.get("schema") or call.get("catalog") or not name:
            raise _NotPlain
        if name in OUTSIDE_FUNCTIONS:
            raise _NotPlain
        if in_from:
            if table_function_hint(name) is not None or name in FILE_READERS:
                raise _NotPlain
            arguments = call.get("arguments") or []
            if any(isinstance(arg, dict) and arg.get("name") for arg in arguments):
                raise _NotPlain  # named options (some write tables): the full reading decides
        if name in _DIVIDING:
            self.divides = True

    def _table(self, node: dict[str, Any]) -> None:
        name = str(node.get("table_name") or "")
        schema = str(node.get("schema_name") or "") or None
        catalog = str(node.get("catalog_name") or "") or None
        if not name or node.get("at_clause") is not None or node.get("column_name_alias"):
            raise _NotPlain
        lower = name.lower()
        if any(ch in name for ch in "/\\:.~") or lower.endswith(_DATA_SUFFIXES):
            raise _NotPlain  # perhaps a file DuckDB would read: the full reading decides
        self._refs.append((catalog, schema, name))
