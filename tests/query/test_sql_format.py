"""Formatting SQL keeps every comment and the ``-- lantide:`` header, or refuses and says
why (the text is the caller's to keep: nothing is returned to replace it)."""

from __future__ import annotations

import duckdb
import pytest

from lantide.query.sql_format import FormatRefused, format_sql, readable_sql, split_header


def test_pretty_prints_and_keeps_comments_as_written():
    text = (
        "-- monthly revenue\n"
        "select region, /* the key */ sum(amount) as revenue from sales -- every sale\n"
        "where amount > 0 -- refunds are negative\n"
        "group by region\n"
    )
    out = format_sql(text)
    assert out.changed
    assert out.text == (
        "-- monthly revenue\n"
        "SELECT\n"
        "  region, /* the key */\n"
        "  SUM(amount) AS revenue\n"
        "FROM sales -- every sale\n"
        "WHERE\n"
        "  amount > 0 -- refunds are negative\n"
        "GROUP BY\n"
        "  region\n"
    )


def test_formatted_text_is_left_as_it_is():
    once = format_sql("select a, b from t where a > 1 -- big\n").text
    again = format_sql(once)
    assert again.text == once
    assert not again.changed


def test_header_lines_stay_on_top_verbatim():
    text = "-- lantide: connection=warehouse\nselect id from public.orders where id<10"
    out = format_sql(text).text
    assert out.startswith("-- lantide: connection=warehouse\nSELECT\n")
    assert split_header(out)[0] == ["-- lantide: connection=warehouse\n"]
    assert "/* lantide" not in out


def test_strings_and_quoted_names_that_look_like_comments_are_kept():
    text = "select 'x -- y' as s, \"col -- z\" from t -- real\n"
    out = format_sql(text).text
    assert "'x -- y' AS s" in out and '"col -- z"' in out and "FROM t -- real" in out


def test_a_comment_after_the_last_semicolon_is_kept():
    out = format_sql("select a from t;\n-- keep me\n").text
    assert out == "SELECT\n  a\nFROM t;\n-- keep me\n"


@pytest.mark.parametrize(
    "text, lost",
    [
        ("select a from t where a between -- low end\n 1 and 2", "low end"),
        ("select a from t qualify -- latest only\n row_number() over (order by b) = 1", "latest"),
    ],
)
def test_refuses_when_sqlglot_would_drop_a_comment(text, lost):
    with pytest.raises(FormatRefused) as info:
        format_sql(text)
    assert info.value.code == "SQL_FORMAT_LOSES_COMMENTS"
    assert lost in info.value.message
    assert "left as it is" in info.value.hint


def test_refuses_sql_it_cannot_parse_with_the_position():
    with pytest.raises(FormatRefused) as info:
        format_sql("select a,\nfrom where")
    assert info.value.code == "SQL_FORMAT_UNPARSEABLE"
    assert info.value.position is not None and info.value.position[0] == 2


@pytest.mark.parametrize("text", ["", "   \n", "-- only a note\n", "-- lantide: connection=x\n"])
def test_refuses_text_without_a_statement(text):
    with pytest.raises(FormatRefused) as info:
        format_sql(text)
    assert info.value.code == "SQL_FORMAT_EMPTY"


def test_windows_line_ends_and_byte_order_mark_are_kept():
    out = format_sql("\ufeffselect a\r\nfrom t -- win\r\n").text
    assert out == "\ufeffSELECT\r\n  a\r\nFROM t -- win\r\n"


def test_formatted_sql_gives_duckdb_the_same_rows():
    text = (
        "with s as (select * from range(10) r(i)) -- ten\n"
        "select i % 3 as k, count(*) n from s where i between 2 and 8 group by all order by k"
    )
    con = duckdb.connect()
    try:
        before = con.execute(text).fetchall()
        after = con.execute(format_sql(text).text).fetchall()
    finally:
        con.close()
    assert after == before


def test_the_position_of_a_syntax_error_counts_the_header_lines():
    with pytest.raises(FormatRefused) as info:
        format_sql("-- lantide: connection=pg\nselect a,\nfrom where")
    assert info.value.position is not None and info.value.position[0] == 3


def test_readable_sql_falls_back_to_the_text_as_written():
    assert readable_sql("select a from t") == "SELECT\n  a\nFROM t"
    kept = "select a from t where a between -- low\n 1 and 2"
    assert readable_sql(kept) == kept
    assert readable_sql("not sql at all (") == "not sql at all ("


def test_readable_sql_leaves_long_sql_as_written():
    long = "select " + ", ".join(f"c{i}" for i in range(3000)) + " from t"
    assert len(long) > 8000
    assert readable_sql(long) == long
    assert readable_sql("select a from t", max_chars=5) == "select a from t"


@pytest.mark.parametrize(
    "text, dropped",
    [
        ("SELECT name FROM dbo.customers WITH (NOLOCK)", "nolock"),  # T-SQL read as DuckDB
        ("select a::varchar(10) from t", "10"),
    ],
)
def test_refuses_a_print_that_drops_part_of_the_statement(text, dropped):
    with pytest.raises(FormatRefused) as info:
        format_sql(text)
    assert info.value.code == "SQL_FORMAT_CHANGES_MEANING"
    assert repr(dropped) in info.value.message


def test_a_remote_tab_is_formatted_in_its_connections_dialect():
    from lantide.query.sql_format import dialect_for, header_connection

    text = (
        "-- lantide: connection=dw\n"
        "SELECT TOP 10 name FROM dbo.customers WITH (NOLOCK) WHERE ISNULL(score, 0) > 1\n"
    )
    connections = [{"name": "DW", "dialect": "tsql"}, {"name": "pg", "dialect": "postgres"}]
    assert header_connection(text) == "dw"
    assert dialect_for(text, connections) == "tsql"
    assert dialect_for("select 1", connections) == "duckdb"
    assert dialect_for("-- lantide: connection=gone\nselect 1", connections) == "duckdb"
    out = format_sql(text, dialect="tsql").text
    assert out.startswith("-- lantide: connection=dw\nSELECT\n")
    assert "TOP 10" in out and "WITH (NOLOCK)" in out and "ISNULL(score, 0) > 1" in out
    with pytest.raises(FormatRefused):  # in DuckDB's dialect it would not keep the T-SQL
        format_sql(text)


@pytest.mark.parametrize("depth", [50, 3000])
def test_deep_nesting_is_formatted_or_refused_never_a_crash(depth):
    text = "select " + "(" * depth + "1" + ")" * depth + " as x from t"
    try:
        out = format_sql(text).text
    except FormatRefused as exc:
        assert exc.code == "SQL_FORMAT_UNPARSEABLE" and depth == 3000
    else:
        assert depth == 50 and out.endswith("AS x\nFROM t")
