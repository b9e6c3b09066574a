"""The eval harness's own cost per case (issue 18): a fresh sample workspace, the data
fingerprint before and after, scoring, against the agent turns it runs, in the same run.

Cases of the shipped sample set, each answered by the loopback OpenAI-compatible server
with one query and one answer (the real ``openai`` client, the real agent loop and QEM),
so the agent's part is as small as a real model's could be and the harness's share is an
upper bound. ``python -m benchmarks eval [--quick]`` (quick: 4 cases, else 12).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    import os
    import tempfile

    from lantide.agent.session import model_clients
    from lantide.evaluation.question_set import load_question_set
    from lantide.evaluation.runner import run_case, sample_template
    from lantide.workspace.settings import Settings
    from tests.fakes.openai_server import FakeOpenAIServer, ToolCall, Turn

    n = 4 if "--quick" in argv else 12
    qs = load_question_set("sample")
    cases = [c for c in qs.cases if c.expect.get("gold_sql")][:n]
    results = []
    with (
        FakeOpenAIServer(background_reply="A title") as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        template = sample_template(Path(tmp))
        os.environ.update(server.env())
        settings = Settings()
        for case in cases:
            server.script(
                Turn(tool_calls=[ToolCall("run_query", {"sql": case.expect["gold_sql"]})]),
                Turn(text="Here is the number."),
            )
            results.append(
                run_case(
                    qs, case, lambda: model_clients(settings), settings=settings, template=template
                )
            )
        for var in server.env():
            os.environ.pop(var, None)
    total = [r.seconds for r in results]
    agent = [r.agent_seconds for r in results]
    harness = [t - a for t, a in zip(total, agent, strict=True)]
    med = statistics.median
    print(f"{len(results)} cases of the sample set, one query and one answer each.\n")
    print(
        "| per case, median | harness (workspace copy, fingerprint, scoring) s | "
        "agent turns s | harness / agent |"
    )
    print("|---|---:|---:|---:|")
    print(f"| | {med(harness):.2f} | {med(agent):.2f} | {med(harness) / med(agent):.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
