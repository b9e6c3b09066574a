"""Error positions are in the text the analyst wrote: a tab's file, a query with comments
before it, a statement that starts mid-line; the same for every way of running it."""

from __future__ import annotations

import pytest

from lantide.query.errors import QueryError

P = "p"


@pytest.fixture
def service(empty_workspace, open_service):
    from lantide.workspace.model import Workspace

    (empty_workspace / "data" / "items.csv").write_text("id,kind\n1,a\n2,b\n")
    Workspace(empty_workspace, {}).create_project(P)
    return open_service(empty_workspace)


def _tab(service, name: str, text: str) -> None:
    (service.workspace.root / "projects" / P / "sql" / f"{name}.sql").write_text(text)


@pytest.mark.parametrize(
    "text, position",
    [
        # the parser stops at the end of line 4 (after the header comment) for the missing ")"
        ("-- revenue by kind\nSELECT *\nFROM items\nWHERE (id > 1\n", (4, 13)),
        # a statement after a block comment on the same line: columns count from the line start
        ("/* draft */ SELECT id FROM items WHERE (id > 1\n", (1, 46)),
        # no comment: what the parser says
        ("SELECT id,\nFROM items WHERE WHERE\n", (2, 22)),
    ],
)
def test_syntax_errors_of_tab_runs_point_into_the_tab_file(service, text, position):
    _tab(service, "broken", text)
    with pytest.raises(QueryError) as info:
        service.run_sql_tab(P, "broken")
    assert info.value.code == "SQL_SYNTAX" and info.value.position == position
    assert info.value.to_dict()["position"] == {"line": position[0], "column": position[1]}
    # Source Run reports the same position for the tab
    report = service.source_run_sql_tab(P, "broken")
    assert report["tabs"][0]["error"]["position"] == {"line": position[0], "column": position[1]}
    # and so do validate_query and run_query on the same text
    assert service.validate_query(text)["position"] == {"line": position[0], "column": position[1]}
    with pytest.raises(QueryError) as direct:
        service.run_query(text)
    assert direct.value.position == position


@pytest.mark.parametrize(
    "text, position",
    [
        ("-- note\nSELECT 'open\nFROM items\n", (2, 8)),  # the quote that never closes
        ("SELECT id FROM items /* a comment\nthat never ends\n", (1, 22)),
    ],
)
def test_an_unterminated_quote_or_comment_is_marked_where_it_opens(service, text, position):
    _tab(service, "unterminated", text)
    with pytest.raises(QueryError) as info:
        service.run_sql_tab(P, "unterminated")
    assert info.value.code == "SQL_SYNTAX" and info.value.position == position
    assert service.validate_query(text)["position"] == {"line": position[0], "column": position[1]}


def test_bind_errors_of_tab_runs_point_into_the_tab_file(service):
    _tab(service, "unknown_column", "-- first\n-- second\nSELECT id,\n       nope\nFROM items\n")
    with pytest.raises(QueryError) as info:
        service.run_sql_tab(P, "unknown_column")
    assert info.value.code == "BIND_ERROR" and info.value.position == (4, 8)


def test_refusals_of_tab_runs_keep_their_code(service):
    _tab(service, "writes", "DELETE FROM items\n")
    with pytest.raises(QueryError) as info:
        service.run_sql_tab(P, "writes")
    assert info.value.code == "QUERY_REFUSED_DML" and "writes" in info.value.message
