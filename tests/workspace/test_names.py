"""One rule for the names of SQL tabs, charts and projects, in the workspace layer, applied
by every path that makes one (tab service, chart files, projects, the agent's tools, the
app's dialogs), and chart links percent-encoded so CommonMark reads them as images."""

from __future__ import annotations

import pytest

from lantide.charts.errors import ChartError
from lantide.charts.files import validate_chart_name
from lantide.charts.links import chart_links
from lantide.query.errors import TabError
from lantide.query.tabs import validate_tab_name
from lantide.workspace.layout import chart_link, link_target_path
from lantide.workspace.model import WorkspaceError, validate_project_name
from lantide.workspace.names import name_hint, name_problem

GOOD = ["orders_by_region", "orders by region", "Q3-churn", "2025 revenue", "försäljning"]
BAD = [
    "",
    "a  b",  # two spaces
    "_hidden",
    "-x",
    "orders/region",
    "orders.v2",
    "what?",
    "con",
    "x" * 81,
    "tab(old)",
]


@pytest.mark.parametrize("name", GOOD)
def test_good_names_pass_everywhere(name):
    assert name_problem(name) is None
    assert validate_tab_name(name) == name
    assert validate_chart_name(name) == name
    assert validate_project_name(name) == name


@pytest.mark.parametrize("name", BAD)
def test_bad_names_are_refused_everywhere_with_the_same_reason(name):
    problem = name_problem(name)
    assert problem
    for check, error in (
        (validate_tab_name, TabError),
        (validate_chart_name, ChartError),
        (validate_project_name, WorkspaceError),
    ):
        with pytest.raises(error) as err:
            check(name)
        assert problem in err.value.message, (check, err.value.message)
        assert err.value.hint.startswith("Use letters, digits")


def test_the_hint_suggests_a_name_that_passes():
    assert "Try 'tab_old'" in name_hint("tab(old)")
    assert "Try 'orders_v2'" in name_hint("orders.v2")
    with pytest.raises(TabError) as err:
        validate_tab_name("orders.v2")
    assert "Try 'orders_v2'" in err.value.hint


def test_existing_files_are_looked_up_without_the_rule():
    assert validate_tab_name("q3 (old)", existing=True) == "q3 (old)"
    assert validate_chart_name("revenue.v2", existing=True) == "revenue.v2"
    with pytest.raises(ChartError):
        validate_chart_name("../plan", existing=True)


def test_a_chart_link_with_spaces_is_an_image_in_commonmark():
    link = chart_link("orders by region")
    assert link == "charts/orders%20by%20region.vl.json"
    found = chart_links(f"# Report\n\n![Orders]({link})\n")
    assert [(c.title, link_target_path(c.src)) for c in found] == [
        ("Orders", "charts/orders by region.vl.json")
    ]
    # the unencoded link is no image at all: the reason for encoding
    assert chart_links("![Orders](charts/orders by region.vl.json)\n") == []
