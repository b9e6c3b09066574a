"""The lineage graph of a project, laid out left to right (lantide.query.lineage_graph):
layers by depth, sources beside their first reader, cycles drawn with back edges, a name
that is nothing yet as a missing node, and the upstream chain of a node."""

from __future__ import annotations

from lantide.query.lineage_graph import lineage_graph, upstream


def _tab(name, reads_tabs=(), sources=(), unknown=(), cached=(), error=None):
    entry = {
        "tab": name,
        "reads_tabs": list(reads_tabs),
        "reads_sources": [{"kind": "data", "table": s, "target": s} for s in sources],
        "reads_cached": list(cached),
        "reads_external": [],
        "unknown_tables": list(unknown),
        "reads_files": [],
    }
    if error:
        entry["error"] = {"message": error}
    return entry


def _positions(graph):
    return {n["id"]: (n["layer"], n["row"]) for n in graph["nodes"]}


def test_a_chain_is_laid_out_by_depth_with_sources_beside_their_reader():
    lineage = {
        "tabs": [
            _tab("clean", sources=['"orders"']),
            _tab("by_month", reads_tabs=["clean"]),
            _tab("report", reads_tabs=["by_month"], sources=['"book"."Targets"']),
        ],
        "cycle": None,
    }
    states = [
        {"tab": "clean", "state": "up_to_date"},
        {"tab": "by_month", "state": "stale"},
        {"tab": "report", "state": "never_run"},
    ]
    graph = lineage_graph(lineage, states)
    where = _positions(graph)
    assert where['data:"orders"'][0] == 0
    assert [where[f"tab:{t}"][0] for t in ("clean", "by_month", "report")] == [1, 2, 3]
    # the sheet is read only by the last tab: drawn just left of it, not in column 0
    assert where['data:"book"."targets"'][0] == 2
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert nodes['data:"book"."targets"']["label"] == "book.Targets"
    assert nodes['data:"book"."targets"']["name"] == '"book"."Targets"'
    assert [nodes[f"tab:{t}"]["state"] for t in ("clean", "by_month", "report")] == [
        "up_to_date",
        "stale",
        "never_run",
    ]
    assert graph["layers"] == 4 and not any(e["back"] for e in graph["edges"])
    # every edge goes left to right
    assert all(where[e["source"]][0] < where[e["target"]][0] for e in graph["edges"])
    # the same input gives the same picture
    assert lineage_graph(lineage, states) == graph


def test_upstream_is_the_chain_a_node_reads_from():
    lineage = {
        "tabs": [
            _tab("a", sources=['"x"']),
            _tab("b", reads_tabs=["a"]),
            _tab("c", sources=['"y"']),
            _tab("d", reads_tabs=["b", "c"]),
        ],
    }
    graph = lineage_graph(lineage, [])
    nodes, edges = upstream(graph, "tab:b")
    assert nodes == {"tab:b", "tab:a", 'data:"x"'}
    assert edges == {("tab:a", "tab:b"), ('data:"x"', "tab:a")}
    everything = {"tab:d", "tab:b", "tab:a", 'data:"x"', "tab:c", 'data:"y"'}
    assert upstream(graph, "tab:d")[0] == everything


def test_a_cycle_is_drawn_with_a_back_edge_and_a_missing_table_as_its_node():
    lineage = {
        "tabs": [
            _tab("a", reads_tabs=["b"], sources=['"orders"']),
            _tab("b", reads_tabs=["a"]),
            _tab("lost", unknown=['"no_such_table"'], error=None),
            _tab("broken", error="Parser Error: syntax error at or near FROM"),
        ],
        "cycle": ["a", "b"],
    }
    graph = lineage_graph(lineage, [{"tab": "a", "state": "stale"}])
    back = [e for e in graph["edges"] if e["back"]]
    assert len(back) == 1 and {back[0]["source"], back[0]["target"]} == {"tab:a", "tab:b"}
    where = _positions(graph)
    forward = [e for e in graph["edges"] if not e["back"]]
    assert all(where[e["source"]][0] < where[e["target"]][0] for e in forward)
    nodes = {n["id"]: n for n in graph["nodes"]}
    missing = nodes['missing:"no_such_table"']
    assert missing["kind"] == "missing" and missing["label"] == "no_such_table"
    lost = {"source": 'missing:"no_such_table"', "target": "tab:lost", "back": False, "via": []}
    assert lost in graph["edges"]
    assert nodes["tab:broken"]["error"].startswith("Parser Error")
    assert nodes["tab:b"]["state"] is None  # not listed: no state known
    assert graph["cycle"] == ["a", "b"]
    # upstream of a node in a cycle ends (the cycle is walked once)
    assert upstream(graph, "tab:a")[0] == {"tab:a", "tab:b", 'data:"orders"'}


def test_rows_keep_readers_next_to_what_they_read():
    # two independent chains: each tab sits in the row of its own source
    lineage = {
        "tabs": [
            _tab("z_first", sources=['"a_src"']),
            _tab("a_second", sources=['"z_src"']),
            _tab("z_first_next", reads_tabs=["z_first"]),
            _tab("a_second_next", reads_tabs=["a_second"]),
        ],
    }
    where = _positions(lineage_graph(lineage, []))
    assert where["tab:z_first"][1] == where['data:"a_src"'][1]
    assert where["tab:a_second"][1] == where['data:"z_src"'][1]
    assert where["tab:z_first_next"][1] == where["tab:z_first"][1]
    assert where["tab:a_second_next"][1] == where["tab:a_second"][1]


def test_a_project_of_a_real_workspace(sample_service):
    from lantide.query.lineage_graph import lineage_graph as build

    project = "q3-churn"
    graph = build(sample_service.lineage(project), sample_service.list_sql_tabs(project))
    where = _positions(graph)
    assert where["tab:clean_orders"][0] < where["tab:customer_quarters"][0]
    assert where["tab:customer_quarters"][0] < where["tab:q3_churn_by_region"][0]
    kinds = {n["id"]: n["kind"] for n in graph["nodes"]}
    assert kinds['data:"orders"'] == "data" and kinds['data:"customers"'] == "data"
    assert {n["state"] for n in graph["nodes"] if n["kind"] == "tab"} == {"never_run"}


def test_an_edge_across_layers_passes_beside_the_boxes_between(sample_service):
    # customers is read by clean_orders (layer 1) and by q3_churn_by_region (layer 3)
    project = "q3-churn"
    graph = lineage_graph(sample_service.lineage(project), sample_service.list_sql_tabs(project))
    edge = next(
        e
        for e in graph["edges"]
        if e["source"] == 'data:"customers"' and e["target"] == "tab:q3_churn_by_region"
    )
    assert [layer for layer, _row in edge["via"]] == [1, 2]
    boxes = {(n["layer"], n["row"]) for n in graph["nodes"]}
    assert not boxes & set(edge["via"])
    assert graph["rows"] >= 2
    short = next(e for e in graph["edges"] if e["target"] == "tab:clean_orders")
    assert short["via"] == []
