"""Agent benchmark: engine time per iteration and prompt tokens per turn.

Workspace: the sample workspace with 50 open tabs (Plan, Report, 48 SQL tabs, the Plan
active) and 1,000 cached tables. The model is the loopback OpenAI-compatible test server
driven by the real ``openai`` client; each turn makes four iterations (three tool calls,
then the answer).

1. Engine time per iteration = (turn wall time - time inside the model client) /
   iterations: prompt assembly, tool runs, conversation and ledger writes, event handling.
   Target: under 20 ms. Baseline in the same run: assembling a single-channel prompt that
   reads every open tab's full text and counts its tokens at each iteration.
2. Prompt tokens per turn, summed over the turn's requests, against the same single-channel
   baseline (core rules + every open tab's full text + the same history and tools).

3. Tokens per question against PandasAI 3.0's one-request prompt, total and outside the
   prefix a provider's cache serves, at 5 and 20 tables (:mod:`benchmarks.agent_tokens`).

``python -m benchmarks agent [--quick] [--tokens]`` (--quick: 100 cached tables, 3 turns,
not 9; --tokens: only the comparison with PandasAI).
"""

from __future__ import annotations

import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

N_TABS = 50
N_TABLES = 1_000
TARGET_MS = 20.0

QUESTIONS = [
    (
        "Which steps does the plan have?",
        [("read_plan", {}), ("read_sql_tab", {"tab": "clean_orders"}), ("get_app_context", {})],
    ),
    (
        "What does customer_quarters compute?",
        [
            ("read_sql_tab", {"tab": "customer_quarters"}),
            ("get_app_context", {}),
            ("read_sql_tab", {"tab": "step_07"}),
        ],
    ),
    (
        "Is the churn tab ready to run?",
        [
            ("read_sql_tab", {"tab": "q3_churn_by_region"}),
            ("read_report", {}),
            ("get_app_context", {}),
        ],
    ),
]


def _tab_sql(i: int) -> str:
    return (
        f"-- Step {i}: revenue and orders per customer segment, variant {i}.\n"
        "SELECT\n    c.segment,\n    c.region,\n    date_trunc('month', o.order_date) AS month,\n"
        "    count(*) AS orders,\n    count(DISTINCT o.customer_id) AS customers,\n"
        "    sum(o.quantity * o.unit_price * (1 - coalesce(o.discount, 0))"
        " - coalesce(o.refund_amount, 0)) AS net_revenue\n"
        "FROM orders AS o\nJOIN customers AS c ON c.customer_id = o.customer_id\n"
        f"WHERE o.status <> 'cancelled' AND NOT c.is_test_account AND o.order_id % 50 = {i}\n"
        "GROUP BY ALL\nORDER BY net_revenue DESC\n"
    )


def build_workspace(root: Path, n_tables: int):
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.sample import create_sample
    from lantide.workspace.settings import QuerySettings

    create_sample(root)
    ws = Workspace.open(root)
    project = ws.project("q3-churn")
    extra = N_TABS - 2 - len(project.sql_tab_names())
    for i in range(extra):
        (project.sql_dir / f"step_{i:02d}.sql").write_text(_tab_sql(i))
    tabs = [
        {"type": "plan", "path": "projects/q3-churn/plan.md", "dirty": False},
        {"type": "report", "path": "projects/q3-churn/report.md", "dirty": False},
    ]
    tabs += [
        {"type": "sql", "path": f"projects/q3-churn/sql/{t}.sql", "dirty": False}
        for t in project.sql_tab_names()
    ]
    session = ws.load_session()
    session.update(open_tabs=tabs[:N_TABS], active_tab=0)
    ws.save_session(session)
    service = QueryService(ws, QuerySettings())
    try:
        for i in range(n_tables):
            service.run_query(
                f"SELECT {i} AS id, 'label {i}' AS label", result_label=f"cached_{i:04d}"
            )
    finally:
        service.close()
    return ws


class TimedModel:
    """Wraps a model client; time spent inside it is the model's, not the engine's."""

    def __init__(self, inner):
        self.inner = inner
        self.model = inner.model
        self.seconds = 0.0

    def stream_chat(self, messages, tools, cancel):
        started = time.perf_counter()
        for out in self.inner.stream_chat(messages, tools, cancel):
            self.seconds += time.perf_counter() - started
            yield out
            started = time.perf_counter()
        self.seconds += time.perf_counter() - started

    def complete(self, system, user, cancel=None):
        return self.inner.complete(system, user, cancel)

    def context_window(self):
        return self.inner.context_window()

    def learn_context_window(self, tokens):
        return self.inner.learn_context_window(tokens)


def single_channel_system(ws, core: str) -> str:
    """The baseline: the core rules plus the full text of every open tab."""
    parts = [core]
    for tab in ws.load_session().get("open_tabs", []):
        path = ws.root / tab["path"]
        parts.append(f"## {tab['path']}\n{path.read_text(encoding='utf-8')}")
    return "\n\n".join(parts)


def request_tokens(messages, tools) -> int:
    from lantide.tokens import count_tokens

    return count_tokens(json.dumps(messages, ensure_ascii=False)) + count_tokens(json.dumps(tools))


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from lantide.agent.model_client import OpenAIModelClient
    from lantide.agent.session import AgentSession
    from lantide.templates import render_prompt
    from lantide.tokens import count_tokens
    from lantide.workspace.settings import AgentSettings, ResolvedProfile, Settings
    from tests.fakes.openai_server import FAKE_API_KEY, FakeOpenAIServer, ToolCall, Turn

    if "--tokens" in argv:
        return _tokens_against_pandasai()
    quick = "--quick" in argv
    n_tables = 100 if quick else N_TABLES
    # the first turn is the cold start (DuckDB opens, caches fill): reported on its own
    questions = QUESTIONS * (1 if quick else 3)
    tmp = Path(tempfile.mkdtemp(prefix="lantide-bench-agent-"))
    try:
        t0 = time.perf_counter()
        ws = build_workspace(tmp / "ws", n_tables)
        setup_s = time.perf_counter() - t0
        with FakeOpenAIServer(model="gpt-4o-mini", background_reply='{"proposals": []}') as server:
            profile = ResolvedProfile("bench", server.base_url, server.model, FAKE_API_KEY, 128_000)
            model = TimedModel(OpenAIModelClient(profile, AgentSettings()))
            session = AgentSession.open(
                ws, settings=Settings(), model=model, background_model=model
            )
            engine_ms, assemble_ms, baseline_ms = [], [], []
            original = session.assembler.assemble

            def timed_assemble(*args, **kwargs):
                started = time.perf_counter()
                out = original(*args, **kwargs)
                assemble_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()  # the baseline's own work, measured alone
                count_tokens(single_channel_system(ws, out.layer("core").text))
                baseline_ms.append((time.perf_counter() - started) * 1000)
                return out

            session.assembler.assemble = timed_assemble
            per_turn = []
            for question, calls in questions:
                server.script(
                    *[Turn(tool_calls=[ToolCall(name, args)]) for name, args in calls],
                    Turn(text="Here is what I found."),
                )
                first_request = len(server.chat_requests)
                model.seconds = 0.0
                started = time.perf_counter()
                events = list(session.run_turn(question))
                wall = time.perf_counter() - started
                iterations = events[-1].iterations
                engine_ms.append((wall - model.seconds) * 1000 / iterations)
                bodies = server.chat_requests[first_request:]
                layered = sum(request_tokens(b["messages"], b["tools"]) for b in bodies)
                core = render_prompt(
                    "core.md.j2",
                    preview_rows=200,
                    purpose_max_chars=40,
                    external_databases=bool(ws.connections),
                )
                baseline_system = single_channel_system(ws, core)
                baseline = sum(
                    request_tokens(
                        [{"role": "system", "content": baseline_system}]
                        + [
                            m
                            for m in b["messages"][1:]
                            if not (m["role"] == "user" and m["content"].startswith("# Active tab"))
                        ],
                        b["tools"],
                    )
                    for b in bodies
                )
                per_turn.append((question, iterations, layered, baseline))
            cold_ms = engine_ms.pop(0)
            per_turn = per_turn[: len(QUESTIONS)]
            session.background.wait(10)
            session.close()
            server.assert_done()
        ws.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    median_engine = statistics.median(engine_ms)
    print(
        f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
        f"Python {platform.python_version()}, {platform.system()}"
    )
    print(f"workspace: {N_TABS} open tabs, {n_tables} cached tables (setup {setup_s:.1f} s)\n")
    print("| measure | Lantide | single-channel baseline | ratio |")
    print("| --- | --- | --- | --- |")
    print(
        f"| engine time per iteration (median of {len(engine_ms)} warm turns) | "
        f"{median_engine:.1f} ms | target {TARGET_MS:.0f} ms | "
        f"{median_engine / TARGET_MS:.2f} of target |"
    )
    print(
        f"| engine time per iteration, first turn (cold: opens DuckDB, loads caches) | "
        f"{cold_ms:.1f} ms | | |"
    )
    print(
        f"| prompt assembly per iteration (median) | {statistics.median(assemble_ms):.1f} ms | "
        f"{statistics.median(baseline_ms):.1f} ms (read + count all tabs) | "
        f"{statistics.median(assemble_ms) / max(statistics.median(baseline_ms), 1e-9):.2f} |"
    )
    total_layered = sum(t[2] for t in per_turn)
    total_baseline = sum(t[3] for t in per_turn)
    for question, iterations, layered, baseline in per_turn:
        print(
            f'| prompt tokens, turn "{question}" ({iterations} requests) | {layered:,} | '
            f"{baseline:,} | {baseline / layered:.2f}x fewer |"
        )
    print(
        f"| prompt tokens per turn (mean) | {total_layered // len(per_turn):,} | "
        f"{total_baseline // len(per_turn):,} | {total_baseline / total_layered:.2f}x fewer |"
    )
    ok = median_engine < TARGET_MS
    print(
        f"\nengine time per iteration {'within' if ok else 'ABOVE'} the {TARGET_MS:.0f} ms target"
    )
    tokens_status = _tokens_against_pandasai()
    return 0 if ok and tokens_status == 0 else 1


def _tokens_against_pandasai() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks import agent_tokens

    print("\n### Tokens per question against PandasAI 3.0\n")
    return 0 if agent_tokens.report() else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
