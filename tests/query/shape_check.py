"""A runtime check that a payload has the shape its TypedDict declares (issue 31).

mypy checks what the producers build; this checks what they answer on a real workspace,
so a key one path adds (or leaves out) that the type does not say is caught: every required
key present, no key the type does not name, and each value of the declared kind (nested
TypedDicts, lists, unions, literals, ``None``). Types it does not know are accepted.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin


def _hints(td: type) -> dict[str, Any]:
    """The TypedDict's field types; names its module imports for type checking only are
    looked up among the query layer's payload modules, then any Lantide module loaded."""
    import lantide.errors
    import lantide.query.checks.rules
    import lantide.query.errors
    import lantide.query.hints
    import lantide.query.lineage
    import lantide.query.remote_consent
    import lantide.query.result_types
    import lantide.query.results
    import lantide.query.sourcerun

    names: dict[str, Any] = {}
    for mod in (
        lantide.errors,
        lantide.query.checks.rules,
        lantide.query.errors,
        lantide.query.hints,
        lantide.query.lineage,
        lantide.query.remote_consent,
        lantide.query.results,
        lantide.query.sourcerun,
        lantide.query.result_types,
    ):
        names.update(vars(mod))
    for name, mod in list(sys.modules.items()):  # then other payload modules loaded
        if name.startswith("lantide.") and mod is not None:
            for key, value in vars(mod).items():
                names.setdefault(key, value)
    return typing.get_type_hints(td, localns=names, include_extras=True)


def _is_typeddict(tp: object) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def problems(value: object, tp: Any, where: str = "$") -> list[str]:
    """What in ``value`` does not fit ``tp`` (empty: it fits)."""
    origin = get_origin(tp)
    if origin in (Required, NotRequired):
        return problems(value, get_args(tp)[0], where)
    if tp is Any or tp is object:
        return []
    if isinstance(tp, (str, typing.ForwardRef)):
        return []  # a recursive alias (JSONValue): not followed
    if tp is None or tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not None"]
    if origin in (Union, types.UnionType):
        found = [problems(value, arm, where) for arm in get_args(tp)]
        if any(not p for p in found):
            return []
        return [f"{where}: {value!r} fits none of {tp}"] + [p for f in found for p in f][:3]
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{where}: {value!r} not in {get_args(tp)}"]
    if _is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not a {tp.__name__}"]
        hints = _hints(tp)
        # not __required_keys__: under ``from __future__ import annotations`` Python 3.11
        # cannot see NotRequired in the annotation's text (every TypedDict here is total)
        required = {k for k, h in hints.items() if get_origin(h) is not NotRequired}
        out = [f"{where}: {tp.__name__} lacks {k!r}" for k in sorted(required - set(value))]
        out += [f"{where}: {tp.__name__} has no key {k!r}" for k in set(value) - set(hints)]
        for key, sub in value.items():
            if key in hints:
                out += problems(sub, hints[key], f"{where}.{key}")
        return out
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, not a list"]
        (item,) = get_args(tp) or (Any,)
        return [p for i, v in enumerate(value) for p in problems(v, item, f"{where}[{i}]")]
    if origin is dict:
        return [] if isinstance(value, dict) else [f"{where}: {type(value).__name__}, not a dict"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{where}: {value!r} is not a bool"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not an int"]
    if tp is float:
        return [] if isinstance(value, (int, float)) else [f"{where}: {value!r} is not a float"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{where}: {value!r} is not a str"]
    return []


def assert_shape(value: object, tp: Any) -> None:
    found = problems(value, tp)
    assert not found, "\n".join(found)
