"""What the result checks need to know about a statement, read from sqlglot's AST.

The statement is qualified first (sqlglot's ``qualify`` with the tables' real columns), so
every column names its source, ``USING`` becomes ``ON`` and ``*`` is expanded. Then, per
SELECT scope that joins two or more sources:

- the **join edges**: the equalities between columns of two sources, from ``ON`` and from
  ``WHERE`` alike (a comma join with ``WHERE a.k = b.k`` is a join too), one edge per pair
  of sources with all its key columns;
- the **additive uses**: ``COUNT`` (not ``DISTINCT``), ``SUM`` and ``AVG`` in that scope,
  with the sources whose columns they read. Aggregates duplication cannot distort (``MIN``,
  ``MAX``, ``COUNT(DISTINCT …)``, ``any_value``, …) are not additive uses. A column of a
  derived table is followed down to the sources it comes from while the derived table is
  a plain projection (no ``GROUP BY``, ``DISTINCT`` or aggregate): a repeated side collapsed
  by a ``GROUP BY`` before any additive use is no longer repeated.

``COUNT(*)`` counts the rows of the join, which is the grain of its many side; it is taken
as counting one side only when its output name says which (``count(*) AS customers`` over
``customers`` joined to ``orders``), because that is the mistake the check exists for.

Also read here: divisions in the output columns whose divisor is not guarded
(:class:`Division`), and output columns that are a bare ``SUM`` of a base table's column
(for ``TOTAL_EXCEEDS_SOURCE``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lantide.query.checks.rules import tokens  # the rules use it without this module

if TYPE_CHECKING:
    from sqlglot import exp
    from sqlglot.optimizer.scope import Scope

ADDITIVE = ("Count", "Sum", "Avg")

# A source of a scope: (id of the scope, alias of the source in it).
Side = tuple[int, str]


@dataclass
class Source:
    alias: str
    table: exp.Table | None = None  # a base relation, else None
    scope: Scope | None = None  # a derived table or CTE, else None

    @property
    def name(self) -> str:
        """The table's name (a derived table's alias)."""
        if self.table is not None:
            return ".".join(p for p in (self.table.db, self.table.name) if p)
        return self.alias

    @property
    def label(self) -> str:
        if self.table is not None:
            name = ".".join(p for p in (self.table.db, self.table.name) if p)
            return name if self.table.name == self.alias else f"{name} {self.alias}"
        return self.alias


@dataclass
class Edge:
    left: str
    right: str
    left_keys: list[exp.Column] = field(default_factory=list)
    right_keys: list[exp.Column] = field(default_factory=list)
    kind: str = "JOIN"

    def keys_of(self, alias: str) -> list[exp.Column]:
        return self.left_keys if alias == self.left else self.right_keys

    def other(self, alias: str) -> str:
        return self.right if alias == self.left else self.left

    def condition(self) -> str:
        return " AND ".join(
            f"{a.sql('duckdb')} = {b.sql('duckdb')}"
            for a, b in zip(self.left_keys, self.right_keys, strict=True)
        )


@dataclass
class Additive:
    text: str  # the aggregate as SQL, with its output name
    function: str  # count / sum / avg
    sides: set[Side]  # the sources whose columns it reads
    star: bool = False  # COUNT(*)
    output_name: str | None = None


@dataclass
class JoinScope:
    scope: Scope
    sources: dict[str, Source]  # by alias
    edges: list[Edge]
    additives: list[Additive] = field(default_factory=list)
    # alias -> [SQL of conditions on it alone]
    filters: dict[str, list[str]] = field(default_factory=dict)

    @property
    def key(self) -> int:
        return id(self.scope)


@dataclass
class Division:
    column: int  # output position
    output_name: str
    text: str  # the division as SQL
    divisor: str


@dataclass
class SumOutput:
    column: int  # output position
    output_name: str
    scope_key: int
    alias: str  # the source the summed column belongs to
    table: exp.Table
    expression: str  # the summed column as SQL on the base table


@dataclass
class Statement:
    join_scopes: list[JoinScope]
    divisions: list[Division]
    sum_outputs: list[SumOutput]
    root_select: exp.Select | None = None
    with_sql: str = ""
    # output positions computed as a ratio (a division) and not scaled to percent (no
    # factor of 100): a share or rate there lies in [0, 1], never in percent
    fraction_outputs: set[int] = field(default_factory=set)

    @property
    def has_joins(self) -> bool:
        return bool(self.join_scopes)


def analyse_without_joins(expression: exp.Expr) -> Statement:
    """A statement that joins nothing: only its divisions matter, and they need no
    qualifying (sqlglot's optimizer stays unimported; the tree is only read)."""
    from sqlglot import exp

    if not isinstance(expression, exp.Select):
        return Statement([], [], [])
    if any(
        isinstance(p, exp.Star)
        or isinstance(getattr(p, "this", None), exp.Star)
        or type(p).__name__ == "Columns"
        for p in expression.expressions
    ):
        return Statement([], [], [], expression)  # * hides which output is which
    return Statement(
        [], _divisions(expression), [], expression, fraction_outputs=_fractions(expression)
    )


def analyse(expression: exp.Expr, schema: dict[str, Any] | None) -> Statement:
    """The statement's joins, additive uses, divisions and summed outputs. ``expression``
    is qualified in place: pass a tree nobody else holds."""
    from sqlglot import exp
    from sqlglot.optimizer.qualify import qualify
    from sqlglot.optimizer.scope import traverse_scope

    tree = qualify(
        expression,
        dialect="duckdb",
        schema=schema or None,
        validate_qualify_columns=False,
        identify=False,
    )
    scopes = traverse_scope(tree)
    by_scope: dict[int, JoinScope] = {}
    join_scopes: list[JoinScope] = []
    for scope in scopes:
        if not isinstance(scope.expression, exp.Select):
            continue
        sources: dict[str, Source] = {}
        for alias, src in scope.selected_sources.items():
            node, value = src
            if isinstance(value, exp.Table):
                sources[alias] = Source(alias, table=value)
            elif hasattr(value, "expression"):
                sources[alias] = Source(alias, scope=value)
            else:
                sources[alias] = Source(alias)
        if len(sources) < 2:
            continue
        js = JoinScope(
            scope,
            sources,
            _edges(scope.expression, sources),
            filters=_local_filters(scope.expression, sources),
        )
        by_scope[id(scope)] = js
        join_scopes.append(js)
    for scope in scopes:
        if isinstance(scope.expression, exp.Select):
            _collect_additives(scope, by_scope)
    root = scopes[-1].expression if scopes else None
    with_node = tree.args.get("with") or tree.args.get("with_")
    statement = Statement(
        join_scopes,
        [],
        [],
        root if isinstance(root, exp.Select) else None,
        with_node.sql("duckdb") if with_node is not None else "",
    )
    if statement.root_select is not None:
        statement.divisions = _divisions(statement.root_select)
        statement.fraction_outputs = _fractions(statement.root_select)
        statement.sum_outputs = _sum_outputs(scopes[-1], by_scope)
    return statement


def _conjuncts(node: exp.Expr | None) -> list[exp.Expr]:
    from sqlglot import exp

    if node is None:
        return []
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    if isinstance(node, exp.Paren):
        return _conjuncts(node.this)
    return [node]


def _conditions(select: exp.Select) -> tuple[list[exp.Expr], dict[int, str]]:
    """The conjuncts of every ``ON`` and of ``WHERE``, and the join kind of each ``ON`` one
    (by the condition's id)."""
    conditions: list[exp.Expr] = []
    kinds: dict[int, str] = {}
    for join in select.args.get("joins") or []:
        for cond in _conjuncts(join.args.get("on")):
            conditions.append(cond)
            kinds[id(cond)] = " ".join(p for p in (join.side, join.kind, "JOIN") if p).upper()
    where = select.args.get("where")
    if where is not None:
        conditions.extend(_conjuncts(where.this))
    return conditions, kinds


def _local_filters(select: exp.Select, sources: dict[str, Source]) -> dict[str, list[str]]:
    """alias -> the conditions that read only that source (``p.current``, ``b.valid_to IS
    NULL``), as SQL on the source's own columns: a key unique among the rows they keep
    repeats nothing, however many rows the whole table has per key."""
    from sqlglot import exp

    out: dict[str, list[str]] = {}
    for cond in _conditions(select)[0]:
        if any(
            isinstance(n, (exp.Subquery, exp.Select, exp.AggFunc, exp.Window)) for n in cond.walk()
        ):
            continue
        tables = {col.table for col in cond.find_all(exp.Column)}
        if len(tables) != 1:
            continue
        (alias,) = tables
        if alias not in sources:
            continue
        local = cond.copy()
        for col in local.find_all(exp.Column):
            col.set("table", None)
        out.setdefault(alias, []).append(local.sql("duckdb"))
    return out


def _edges(select: exp.Select, sources: dict[str, Source]) -> list[Edge]:
    from sqlglot import exp

    conditions, kinds = _conditions(select)
    edges: dict[tuple[str, str], Edge] = {}
    for cond in conditions:
        if not isinstance(cond, exp.EQ):
            continue
        a, b = cond.this, cond.expression
        if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
            continue
        ta, tb = a.table, b.table
        if not ta or not tb or ta == tb or ta not in sources or tb not in sources:
            continue
        pair = (ta, tb) if ta <= tb else (tb, ta)
        edge = edges.setdefault(pair, Edge(pair[0], pair[1], kind=kinds.get(id(cond), "JOIN")))
        left, right = (a, b) if ta == pair[0] else (b, a)
        if left.name not in [k.name for k in edge.left_keys] or right.name not in [
            k.name for k in edge.right_keys
        ]:
            edge.left_keys.append(left)
            edge.right_keys.append(right)
    return list(edges.values())


def _in_this_select(node: exp.Expr, select: exp.Select, windows: bool = False) -> bool:
    """Whether ``node`` belongs to ``select`` itself (not to a subquery in it). A window's
    function (``sum(x) OVER (…)``) belongs to it only with ``windows``: it reads every row
    of the select without collapsing them, so it adds up repeated rows like an aggregate
    (an additive use) but does not group (``_collapses``)."""
    from sqlglot import exp

    child, parent = node, node.parent
    while parent is not None and parent is not select:
        if windows and isinstance(parent, exp.Window) and parent.this is child:
            pass  # the windowed function itself, not its PARTITION BY / ORDER BY
        elif isinstance(parent, (exp.Select, exp.Subquery, exp.Window)):
            return False
        child, parent = parent, parent.parent
    return parent is select


def _output_name(node: exp.Expr) -> str | None:
    from sqlglot import exp

    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        if isinstance(parent, exp.Alias):
            return parent.alias
        parent = parent.parent
    return None


def origins(scope: Scope, column: exp.Column, depth: int = 0) -> set[Side]:
    """The (scope id, alias) pairs whose rows a column's value comes from: its own source,
    and, through a derived table that only projects (no grouping, no DISTINCT), the
    sources inside it too. A grouped derived table stops the walk: its rows are no longer
    the repeated rows of what it read."""
    from sqlglot import exp

    alias = column.table
    if not alias or depth > 8:
        return set()
    src = scope.selected_sources.get(alias)
    if src is None:
        return set()
    found = {(id(scope), alias)}
    value = src[1]
    if isinstance(value, exp.Table) or not hasattr(value, "expression"):
        return found
    inner = value.expression
    if not isinstance(inner, exp.Select) or _collapses(inner):
        return found
    for projection in inner.expressions:
        if projection.alias_or_name == column.name:
            for col in projection.find_all(exp.Column):
                found |= origins(value, col, depth + 1)
            break
    return found


def _collapses(select: exp.Select) -> bool:
    from sqlglot import exp

    if select.args.get("group") or select.args.get("distinct"):
        return True
    return any(
        isinstance(agg, exp.AggFunc) and _in_this_select(agg, select)
        for projection in select.expressions
        for agg in projection.find_all(exp.AggFunc)
    )


def _collect_additives(scope: Scope, by_scope: dict[int, JoinScope]) -> None:
    from sqlglot import exp

    select = scope.expression
    if not isinstance(select, exp.Select):  # callers pass SELECT scopes only
        return
    sides: set[Side]
    for agg in select.find_all(exp.Count, exp.Sum, exp.Avg):
        if not _in_this_select(agg, select, windows=True):
            continue
        arg = agg.this
        if isinstance(arg, exp.Distinct):
            continue  # COUNT(DISTINCT …): duplication does not change it
        name = _output_name(agg)
        window = agg.parent if isinstance(agg.parent, exp.Window) else None
        text = (window or agg).sql("duckdb") + (f" AS {name}" if name else "")
        function = type(agg).__name__.lower()
        if isinstance(arg, exp.Star) or arg is None:
            js = by_scope.get(id(scope))
            if js is None:
                continue
            sides = {(id(scope), alias) for alias in _named_sides(name, js.sources)}
            if sides:
                js.additives.append(Additive(text, function, sides, star=True, output_name=name))
            continue
        values = _value_columns(arg)
        if not values:
            # SUM(CASE WHEN cond THEN 1 ELSE 0 END), COUNT(CASE WHEN … THEN 1 END): a
            # conditional COUNT(*); its columns only choose which joined rows count
            js = by_scope.get(id(scope))
            sides = (
                {(id(scope), alias) for alias in _named_sides(name, js.sources)} if js else set()
            )
            if js is not None and sides:
                js.additives.append(Additive(text, function, sides, star=True, output_name=name))
            continue
        sides = set()
        unknown = False
        for col in values:
            found = origins(scope, col)
            if not found:
                unknown = True
            sides |= found
        if not sides or unknown:
            continue  # a column it cannot place: say nothing rather than guess
        for scope_key in {s for s, _ in sides}:
            js = by_scope.get(scope_key)
            if js is not None:
                js.additives.append(
                    Additive(
                        text, function, {s for s in sides if s[0] == scope_key}, output_name=name
                    )
                )


def _value_columns(node: exp.Expr) -> list[exp.Column]:
    """The columns whose values an aggregate adds up: in a CASE or IF, those of its
    results, not of its conditions."""
    from sqlglot import exp

    if isinstance(node, exp.Column):
        return [node]
    if isinstance(node, exp.Case):
        parts = [branch.args.get("true") for branch in node.args.get("ifs") or []]
        parts.append(node.args.get("default"))
        return [c for part in parts if part is not None for c in _value_columns(part)]
    if isinstance(node, exp.If):
        parts = [node.args.get("true"), node.args.get("false")]
        return [c for part in parts if part is not None for c in _value_columns(part)]
    return [c for child in node.iter_expressions() for c in _value_columns(child)]


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _named_sides(output_name: str | None, sources: dict[str, Source]) -> list[str]:
    """The sources a ``COUNT(*)``'s output name says it counts (``customers``,
    ``n_customers``, ``customer_count`` for a source reading ``customers``). A source
    whose whole name matches wins; else one whose name has a matching word (``dims`` for
    ``dim_2024``), but only when no other source shares that word."""
    if not output_name:
        return []
    words = {_stem(w) for w in tokens(output_name)} - {""}
    names = {
        alias: (src.table.name if src.table is not None else alias)
        for alias, src in sources.items()
    }
    whole = [alias for alias, name in names.items() if name and _stem(name) in words]
    if whole:
        return whole
    by_word = [
        alias
        for alias, name in names.items()
        if {_stem(w) for w in tokens(name) if not w.isdigit()} & words
    ]
    return by_word if len(by_word) == 1 else []


def _unwrap_alias(node: exp.Expr) -> exp.Expr:
    from sqlglot import exp

    return node.this if isinstance(node, exp.Alias) else node


def _guarded(div: exp.Expr, projection: exp.Expr) -> bool:
    """A division inside CASE/IF/TRY, or whose divisor cannot be 0 or NULL."""
    from sqlglot import exp

    parent = div.parent
    while parent is not None and parent is not projection.parent:
        if isinstance(parent, (exp.Case, exp.If)) or type(parent).__name__ in ("Try", "TryCast"):
            return True
        parent = parent.parent
    divisor = div.expression
    while isinstance(divisor, exp.Paren):
        divisor = divisor.this
    if isinstance(divisor, exp.Literal):
        return True  # a constant: 0 would be written on purpose
    if isinstance(divisor, exp.Cast) and isinstance(divisor.this, exp.Literal):
        return True
    if isinstance(divisor, exp.Count) and isinstance(divisor.this, exp.Star):
        return True  # COUNT(*) of a group is at least 1
    return isinstance(divisor, (exp.Nullif, exp.Greatest, exp.Coalesce))


def _divisions(select: exp.Select) -> list[Division]:
    from sqlglot import exp

    out: list[Division] = []
    for i, projection in enumerate(select.expressions):
        for div in projection.find_all(exp.Div, exp.IntDiv):
            if not _in_this_select(div, select) or _guarded(div, projection):
                continue
            out.append(
                Division(
                    i, projection.alias_or_name, div.sql("duckdb"), div.expression.sql("duckdb")
                )
            )
            break
    return out


def _percent_factor(node: exp.Expr) -> bool:
    """``100 * x``, ``x * 100.0`` or ``x / 0.01``: a value scaled to percent."""
    from sqlglot import exp

    def number(n: exp.Expr | None) -> float | None:
        while isinstance(n, (exp.Paren, exp.Cast)):
            n = n.this
        if isinstance(n, exp.Literal) and not n.is_string:
            try:
                return float(n.this)
            except ValueError:
                return None
        return None

    if isinstance(node, exp.Mul):
        return 100.0 in (number(node.this), number(node.expression))
    if isinstance(node, exp.Div):
        return number(node.expression) == 0.01
    return False


def _fractions(select: exp.Select) -> set[int]:
    """Output positions that divide (in this select) and scale nothing to percent."""
    from sqlglot import exp

    out = set()
    for i, projection in enumerate(select.expressions):
        divides = any(_in_this_select(d, select) for d in projection.find_all(exp.Div, exp.IntDiv))
        scaled = any(
            _percent_factor(n) and _in_this_select(n, select)
            for n in projection.find_all(exp.Mul, exp.Div)
        )
        if divides and not scaled:
            out.add(i)
    return out


def _sum_outputs(scope: Scope, by_scope: dict[int, JoinScope]) -> list[SumOutput]:
    """Output columns that are ``SUM(col)`` of one base table's column, in a join."""
    from sqlglot import exp

    js = by_scope.get(id(scope))
    if js is None:
        return []
    out: list[SumOutput] = []
    for i, projection in enumerate(scope.expression.expressions):
        node = _unwrap_alias(projection)
        if not isinstance(node, exp.Sum) or not isinstance(node.this, exp.Column):
            continue
        col = node.this
        src = js.sources.get(col.table)
        if src is None or src.table is None:
            continue
        out.append(
            SumOutput(
                i,
                projection.alias_or_name,
                id(scope),
                col.table,
                src.table,
                exp.column(col.name, quoted=True).sql("duckdb"),
            )
        )
    return out
