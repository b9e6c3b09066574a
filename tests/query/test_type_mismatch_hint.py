"""A type mismatch gets advice about types, not about column names."""

from __future__ import annotations

import duckdb
import pytest

from lantide.query.engine import translate_error


def _error_of(sql: str) -> BaseException:
    with pytest.raises(duckdb.Error) as caught:
        duckdb.connect().execute(sql).fetchall()
    return caught.value


def test_a_type_mismatch_hint_is_about_types():
    error = translate_error(_error_of("SELECT substr(1, 'x')"))
    assert error.code == "BIND_ERROR"
    assert "column names" not in error.hint and "CAST" in error.hint


def test_a_missing_column_hint_is_still_about_columns():
    error = translate_error(_error_of("SELECT nope FROM range(3)"))
    assert "column names" in error.hint
