"""The header line a SQL tab's connection picker writes (``set_tab_connection``) and the
``from=DIALECT`` option (``tab_source_dialect``, ``transpile_tab``): text rules, no server.
The picker changes the header line only; every other character of the tab stays as it was."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lantide.errors import LantideError
from lantide.query.remote_tabs import (
    check_connection_name,
    check_remote_tab,
    header_options,
    set_tab_connection,
    tab_connection,
    tab_source_dialect,
    transpile_tab,
)

# what a header can hold (the runner's strict reader refuses anything else)
names = st.from_regex(r"[A-Za-z0-9_.\-]{1,12}", fullmatch=True)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
header_words = st.lists(
    st.sampled_from(["from=duckdb", "connection=dw", "Connection=old", ","]),
    max_size=5,
)


def _headed(words: list[str], separator: str, rest: str) -> str:
    return "-- lantide:" + separator + separator.join(words) + "\n" + rest


def _without_connection(sql: str) -> dict[str, str]:
    return {k: v for k, v in header_options(sql).items() if k != "connection"}


@given(texts, names)
@example("-- not a header\nSELECT 1", "dw")
@example("", "dw")
@example("SELECT 1\r\nFROM t", "dw")
def test_a_headerless_text_round_trips(sql, name):
    if tab_connection(sql) is not None or header_options(sql):
        return  # drawn text that is a header already: the next test's case
    bound = set_tab_connection(sql, name)
    assert tab_connection(bound) == name
    assert bound.endswith(sql)  # the text follows the new first line, byte for byte
    assert bound.split("\n", 1)[0].rstrip("\r") == f"-- lantide: connection={name}"
    assert set_tab_connection(bound, None) == sql


@given(header_words, st.sampled_from([" ", "  ", ", ", "\t"]), texts, names)
@example(["connection=dw", "from=duckdb"], ", ", "SELECT 1", "pg")
@example(["from=duckdb", "connection=dw"], " ", "", "pg")
def test_a_header_keeps_its_other_options_and_the_rest_of_the_text(words, sep, rest, name):
    sql = _headed(words, sep, rest)
    try:
        header_options(sql)
    except LantideError:
        return  # an option twice, or a header-like line below: the picker refuses it (below)
    others = _without_connection(sql)
    changed = set_tab_connection(sql, name)
    assert tab_connection(changed) == name
    assert _without_connection(changed) == others
    assert changed.split("\n", 1)[1] == rest
    local = set_tab_connection(changed, None)
    assert tab_connection(local) is None
    assert _without_connection(local) == others
    assert local.endswith(rest)
    if others or local != rest:  # the header line stays while it says something else
        assert local.split("\n", 1)[1] == rest
    # changing again to the same connection changes nothing
    assert set_tab_connection(changed, name) == changed


def test_the_picker_writes_the_header_as_an_analyst_would():
    sql = "-- lantide: connection=dw from=duckdb\n-- regions\nSELECT 1\n"
    assert set_tab_connection(sql, "pg") == sql.replace("dw", "pg")
    assert set_tab_connection(sql, None) == "-- lantide: from=duckdb\n-- regions\nSELECT 1\n"
    assert set_tab_connection("-- lantide: from=duckdb, connection=dw\nx", None) == (
        "-- lantide: from=duckdb\nx"
    )
    assert set_tab_connection("-- lantide: from=duckdb\nx", "pg") == (
        "-- lantide: connection=pg from=duckdb\nx"
    )
    assert set_tab_connection("-- lantide: connection=dw\nSELECT 1", None) == "SELECT 1"
    assert set_tab_connection("SELECT 1", None) == "SELECT 1"


@pytest.mark.parametrize("name", ["my dw", "a,b", "a;b", "dw\nDROP", "tab\there", "", "nul\x00"])
def test_a_name_a_header_cannot_hold_is_refused_by_name(name):
    with pytest.raises(LantideError) as info:
        set_tab_connection("SELECT 1", name)
    assert info.value.code == "CONNECTION_NAME_UNSUITED"
    assert repr(name) in info.value.message
    assert "Settings > Connections" in (info.value.hint or "")


@given(names)
def test_every_name_accepted_reads_back_as_written(name):
    assert check_connection_name(name) == name
    assert tab_connection(set_tab_connection("SELECT 1", name)) == name


def test_from_names_a_dialect_sqlglot_knows():
    assert tab_source_dialect("-- lantide: connection=dw from=DuckDB\nSELECT 1") == "duckdb"
    assert tab_source_dialect("-- lantide: connection=dw\nSELECT 1") is None
    with pytest.raises(LantideError) as info:
        tab_source_dialect("-- lantide: connection=dw from=duckb\nSELECT 1")
    assert info.value.code == "DIALECT_UNKNOWN" and "'duckb'" in info.value.message
    assert "duckdb" in info.value.hint and "postgres" in info.value.hint


def test_what_sqlglot_cannot_write_in_the_target_is_refused_with_the_reason():
    sql = "-- lantide: connection=maria from=duckdb\nSELECT [1, 2] AS l"
    with pytest.raises(LantideError) as info:
        check_remote_tab(sql, "maria", "mysql")
    assert info.value.code == "TRANSPILE_UNSUPPORTED"
    assert "Arrays are not supported by MySQL" in info.value.message


def test_a_syntax_error_in_the_source_dialect_is_marked_at_the_tabs_line():
    sql = "-- lantide: connection=pg from=duckdb\n\nSELECT 1 +\nFROM"
    with pytest.raises(LantideError) as info:
        transpile_tab(sql, "duckdb", "postgres")
    assert info.value.code == "SQL_SYNTAX" and info.value.position[0] in (3, 4)


def test_the_transpiled_text_is_what_the_guard_checks_and_sends():
    sql = "-- lantide: connection=maria from=duckdb\nSELECT 'r:' || region AS r FROM shop.c"
    parsed = check_remote_tab(sql, "maria", "mysql")
    assert parsed.body == "SELECT CONCAT('r:', region) AS r FROM shop.c"
    assert parsed.sql == sql  # the tab's text, as the ledger records it
    # the guard still holds on what DuckDB's SQL becomes
    for refused in ("DELETE FROM shop.c", "SELECT 1; SELECT 2", "SELECT load_file('/etc/passwd')"):
        with pytest.raises(LantideError) as info:
            check_remote_tab(f"-- lantide: connection=maria from=duckdb\n{refused}", "m", "mysql")
        assert info.value.code.startswith("QUERY_REFUSED"), refused
    # without from= the text runs as written: || stays (MySQL reads it as OR)
    plain = check_remote_tab("-- lantide: connection=maria\nSELECT 'a' || 'b' AS r", "m", "mysql")
    assert plain.body == "SELECT 'a' || 'b' AS r"  # the header is not sent
    # from= the connection's own dialect: nothing to transpile
    same = "-- lantide: connection=pg from=postgres\nselect x::int from t"
    assert check_remote_tab(same, "pg", "postgres").body.endswith("select x::int from t")


def test_a_tab_written_in_another_dialect_is_formatted_in_it():
    from lantide.query.sql_format import dialect_for

    connections = [{"name": "maria", "dialect": "mysql"}]
    assert dialect_for("-- lantide: connection=maria from=duckdb\nSELECT 1", connections) == (
        "duckdb"
    )
    assert dialect_for("-- lantide: connection=maria\nSELECT 1", connections) == "mysql"
    assert dialect_for("-- lantide: connection=maria from=nope\nSELECT 1", connections) == "mysql"


header_noise = st.lists(
    st.one_of(
        st.sampled_from(list("ac=,; \t\r-xé1")),
        st.sampled_from(["connection", "CONNECTION=", "from=duckdb", "lantide:", "connection=dw"]),
    ),
    max_size=12,
).map("".join)


@given(
    st.sampled_from(["-- lantide:", "--lantide:", "  --\tlantide:"]),
    header_noise,
    texts,
    st.one_of(st.none(), names),
)
def test_any_header_keeps_its_other_options_and_the_lines_below(prefix, noise, rest, name):
    sql = prefix + noise + "\n" + rest
    try:
        header_options(sql)
    except LantideError as exc:  # unclear to the runner: the picker leaves the text as it is
        with pytest.raises(LantideError) as info:
            set_tab_connection(sql, name)
        assert info.value.code == exc.code == "REMOTE_HEADER_UNCLEAR"
        return
    out = set_tab_connection(sql, name)
    assert tab_connection(out) == name
    assert _without_connection(out) == _without_connection(sql)
    assert out == rest or out.endswith("\n" + rest)
