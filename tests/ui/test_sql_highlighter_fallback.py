"""The installed build ships pygments' SQL lexers only (packaging/lantide.spec): a
PostgreSQL function body whose LANGUAGE names another language would ask pygments for a
lexer module that is not there. The SQL editor still colours the text (with the plain SQL
lexer) instead of failing on every keystroke."""

from __future__ import annotations

import pygments.lexers.sql

from lantide.ui.sql import sql_highlighter

FUNCTION = "CREATE FUNCTION f() RETURNS int AS $$ x = 1 $$ LANGUAGE plpython3u;\nSELECT 42"


def test_a_body_in_a_language_whose_lexer_is_missing_is_still_coloured(monkeypatch):
    def missing(name, **_options):
        raise ModuleNotFoundError(f"No module named 'pygments.lexers.{name}'")

    monkeypatch.setattr(pygments.lexers.sql, "get_lexer_by_name", missing)
    spans = list(sql_highlighter.sql_tokens(FUNCTION))
    words = {FUNCTION[start : start + length].upper(): role for start, length, role in spans}
    assert words["CREATE"] == "keyword" and words["SELECT"] == "keyword"
    assert words["42"] == "number"
