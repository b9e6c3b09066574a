"""``lantide chat``, ``lantide prompt`` and ``lantide ledger``.

``chat`` runs one agent turn headless. The turn runs on a worker thread and the main
thread prints its events, so Ctrl+C (SIGINT) or SIGTERM cancels at once: the model stream
is closed and a running DuckDB query interrupted. Exit codes: 0 for an answer, a question
or an honest stop, 1 for an error (no model configured, the model failed), 130 when
cancelled.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lantide.cli.common import Subparsers, add_command, open_workspace, pick_project
from lantide.cli.output import print_json, print_table

if TYPE_CHECKING:
    import queue

    from lantide.agent.events import Event
    from lantide.agent.session import AgentSession

BACKGROUND_WAIT_SECONDS = 15.0


def register(subparsers: Subparsers) -> None:
    p = add_command(subparsers, "chat", "one agent turn, headless", run_chat)
    p.add_argument("workspace")
    p.add_argument("message", help="the message to the agent ('-' reads it from stdin)")
    p.add_argument("--project", help="focus this project first")
    p.add_argument("--conversation", help="continue this conversation (default: a new one)")
    p.add_argument("--json", action="store_true", help="one JSON event per line")

    p = add_command(
        subparsers,
        "prompt",
        "print the prompt the agent would see now, layer by layer, with token counts",
        run_prompt,
    )
    p.add_argument("workspace")
    p.add_argument("--project", help="focus this project first")
    p.add_argument("--conversation", help="as the next turn of this conversation")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = add_command(subparsers, "ledger", "the step ledger", run_ledger)
    p.add_argument("workspace")
    p.add_argument("--conversation", help="only this conversation's steps")
    p.add_argument("--json", action="store_true", help="print JSON")


# -- chat ----------------------------------------------------------------------------------


class _HumanPrinter:
    """Readable output: the answer on stdout as it streams, activity on stderr."""

    def __init__(self) -> None:
        self.mid_line = False

    def _end_text(self) -> None:
        if self.mid_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.mid_line = False

    def __call__(self, event: Event) -> None:
        from lantide.agent import events as ev  # the agent loads only for agent commands

        if isinstance(event, ev.TextDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self.mid_line = not event.text.endswith("\n")
            return
        if isinstance(
            event, (ev.AssistantMessage, ev.TurnStarted, ev.StepSummarized, ev.StepLinesRead)
        ):
            if isinstance(event, ev.AssistantMessage) and event.partial:
                self._end_text()
            return
        self._end_text()
        err = sys.stderr
        match event:
            case ev.ToolCalled():
                args = json.dumps(event.arguments, ensure_ascii=False)
                err.write(f"→ {event.tool}({args[:300]}{'…' if len(args) > 300 else ''})\n")
            case ev.ToolReturned():
                status = (
                    "ok"
                    if event.ok
                    else f"{event.result.get('error')}: {event.result.get('message')}"
                )
                err.write(f"← {event.tool} {status} ({event.duration_ms} ms)\n")
            case ev.StepRecorded():
                step = event.step
                err.write(f"  step {step['step_id']} recorded: {step.get('row_count')} rows\n")
            case ev.QuestionAsked():
                choices = f" [{' / '.join(event.choices)}]" if event.choices else ""
                sys.stdout.write(f"\n? {event.question}{choices}\n")
            case ev.ModelRetrying():
                err.write(
                    f"  model call failed ({event.reason}); retry {event.attempt} in "
                    f"{event.delay_seconds:g} s\n"
                )
            case ev.ContextCompacted():
                err.write(
                    f"  compacted {event.compacted_results} earlier tool result(s) to fit "
                    f"the context window ({event.context_window} tokens)\n"
                )
            case ev.ErrorOccurred():
                err.write(f"lantide: error: {event.message}\n")
                if event.hint:
                    err.write(f"  {event.hint}\n")
            case ev.LogLinesSkipped():
                for line in event.describe():
                    err.write(
                        f"lantide: warning: {line}; the line was skipped "
                        "(the file is left as it is)\n"
                    )
            case ev.TurnFinished():
                err.write(f"[{event.reason}; conversation {event.conversation_id}]\n")
            case ev.ReflectionRecorded():
                r = event.reflection
                verdict = (
                    "passed"
                    if r.get("ok")
                    else "found problems: " + "; ".join(r.get("problems") or [])
                )
                err.write(f"  reflection {r.get('reflection_id')} ({r.get('subject')}) {verdict}\n")
            case ev.TokenBudgetReached():
                err.write(
                    f"  token budget: {event.used:,} of {event.budget:,} tokens used"
                    f"{' (the agent stops)' if event.stopped else ''}\n"
                )
            case ev.ConversationTitled():
                err.write(f"  conversation titled: {event.title}\n")
            case ev.KnowledgeProposed():
                n = len(event.entries)
                err.write(
                    f"  {n} knowledge entr{'y' if n == 1 else 'ies'} "
                    "proposed (queued for your approval): lantide knowledge\n"
                )
            case ev.EditProposed():  # headless: nobody reviews it here
                err.write(
                    f"  edit {event.edit_id} of {event.path} waits for your review: "
                    f"lantide edits WORKSPACE {event.project}\n"
                )
            case ev.DocumentChanged() | ev.StateChanged() | ev.KnowledgeReorganized():
                fields = {k: v for k, v in event.to_dict().items() if k != "event"}
                err.write(f"  {event.name.replace('_', ' ')}: {json.dumps(fields)}\n")
        err.flush()


def _run_turn_in_worker(session: AgentSession, message: str, emit: Callable[[Event], None]) -> str:
    """Run the turn on a thread; print on this one; SIGINT/SIGTERM cancel. Returns the
    turn's finish reason."""
    import queue
    import signal
    import threading

    from lantide.agent.cancel import CancelToken

    cancel = CancelToken()
    events: queue.Queue[Any] = queue.Queue()
    done = object()

    def work() -> None:
        try:
            for event in session.run_turn(message, cancel):
                events.put(event)
        except BaseException as exc:  # handed to the main thread, raised there
            events.put(exc)
        finally:
            events.put(done)

    def interrupted(*_: object) -> None:
        # A flag, not a KeyboardInterrupt raised wherever this thread is: one landing
        # inside the queue's lock left it held and the turn's thread blocked on its next
        # event (a chat that did not exit after Ctrl+C). A second Ctrl+C raises as usual.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        cancel.cancel()

    previous = signal.signal(signal.SIGTERM, lambda *_: cancel.cancel())
    previous_int = signal.signal(signal.SIGINT, interrupted)
    worker = threading.Thread(target=work, name="lantide-turn", daemon=True)
    worker.start()
    reason = "error"
    try:
        while True:
            try:
                item = events.get(timeout=0.2)
            except queue.Empty:
                continue
            except KeyboardInterrupt:
                cancel.cancel()
                continue
            if item is done:
                break
            if isinstance(item, BaseException):
                raise item
            if item.name == "turn_finished":
                reason = item.reason
            emit(item)
    except KeyboardInterrupt:
        cancel.cancel()
        worker.join(10)
        reason = "cancelled"
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
        if worker.is_alive() and not done_seen(events, done):
            # this thread stopped reading (an error while printing): stop the turn before
            # the engine it runs on is closed
            cancel.cancel()
    worker.join(10)
    return reason


def done_seen(events: queue.Queue[Any], done: object) -> bool:
    """Whether the worker already handed over its last item (nothing left to stop)."""
    return any(item is done for item in list(events.queue))


def run_chat(args: argparse.Namespace) -> int:
    from lantide.agent.session import AgentSession
    from lantide.workspace.settings import load_settings

    message = sys.stdin.read() if args.message == "-" else args.message
    if not message.strip():
        from lantide.errors import UsageError

        raise UsageError("the message is empty", hint="Pass the message to the agent as text.")
    ws = open_workspace(args.workspace)
    try:
        if args.project:
            ws.focus_project(pick_project(ws, args.project).dirname)
        settings = load_settings()
        session = AgentSession.open(ws, args.conversation, settings=settings)
        try:
            _ = session.model  # no model configured: a clear error before anything is written
            emit = (lambda e: print_json(e.to_dict())) if args.json else _HumanPrinter()
            reason = _run_turn_in_worker(session, message, emit)
            session.background.wait(BACKGROUND_WAIT_SECONDS)
            for event in session.background.take_events():
                emit(event)
        finally:
            session.close()
    finally:
        ws.close()
    return {"cancelled": 130, "error": 1}.get(reason, 0)


# -- prompt --------------------------------------------------------------------------------


def run_prompt(args: argparse.Namespace) -> int:
    from lantide.agent.session import AgentSession
    from lantide.workspace.settings import load_settings

    # read-only, so it works beside the open desktop app (whose session.json it reads)
    ws = open_workspace(args.workspace, lock=False)
    try:
        if args.project:
            ws.focus_project(pick_project(ws, args.project).dirname, persist=False)
        session = AgentSession.open(ws, args.conversation, settings=load_settings())
        try:
            prompt = session.prompt_preview()
        finally:
            session.close()
    finally:
        ws.close()
    if args.json:
        print_json(
            {
                "state": prompt.state,
                "context_window": prompt.context_window,
                "total_tokens": prompt.tokens,
                "layers": [layer.to_dict() for layer in prompt.layers],
                "tools": [t["function"]["name"] for t in prompt.tools],
                "messages": prompt.messages,
            }
        )
        return 0
    out = sys.stdout
    out.write(
        f"state: {prompt.state}   context window: {prompt.context_window} tokens   "
        f"total: {prompt.tokens} tokens\n"
    )
    for layer in prompt.layers:
        out.write(f"\n===== {layer.name} ({layer.tokens} tokens) =====\n")
        if layer.name == "tools":
            out.write(", ".join(t["function"]["name"] for t in prompt.tools) + "\n")
        elif layer.text:
            out.write(layer.text.rstrip() + "\n")
        else:
            out.write("(empty)\n")
    return 0


# -- ledger --------------------------------------------------------------------------------


def run_ledger(args: argparse.Namespace) -> int:
    from lantide.agent.conversation import check_conversation_id, list_conversations
    from lantide.agent.evidence import step_kind
    from lantide.agent.ledger import Ledger
    from lantide.workspace.layout import log_paths

    ws = open_workspace(args.workspace, lock=False)  # read-only: works beside the app
    conversations = {c.id: c for c in list_conversations(ws.conversations_dir)}
    if args.conversation:
        ids = [check_conversation_id(args.conversation)]
        path = Ledger(ws.ledger_dir, ids[0]).path
        if not path.exists() and ids[0] not in conversations:
            from lantide.errors import MissingFileError

            known = ", ".join(sorted(conversations)[-5:]) or "none yet"
            raise MissingFileError(path, "ledger", hint=f"Recent conversations: {known}.")
    else:
        ids = [p.stem for p in log_paths(ws.ledger_dir)]
    steps, problems = [], []
    for cid in ids:
        ledger = Ledger(ws.ledger_dir, cid)
        steps.extend(ledger.steps())
        problems.extend(ledger.problems)
    for problem in problems:  # never fatal: the other lines and conversations still show
        sys.stderr.write(f"lantide: warning: {problem.describe(ws.root)}\n")
    if args.json:
        print_json(
            {
                "steps": steps,
                "skipped_lines": [
                    {**p.to_dict(), "file": p.path.relative_to(ws.root).as_posix()}
                    for p in problems
                ],
                "conversations": [
                    {**conversations[cid].to_dict()} if cid in conversations else {"id": cid}
                    for cid in ids
                ],
            }
        )
        return 0
    if not steps:
        print("No query steps yet.")
        return 0
    rows = [
        [
            s.get("conversation_id"),
            s.get("step_id"),
            s.get("at"),
            s.get("tool"),
            s.get("project"),
            s.get("purpose"),
            step_kind(s),
            s.get("row_count"),
            s.get("cached_table_name"),
            s.get("summary") or f"({s.get('summary_status', 'missing')})",
            ", ".join(str(c.get("code")) for c in s.get("checks") or [] if isinstance(c, dict)),
        ]
        for s in steps
    ]
    print_table(
        [
            "conversation",
            "step",
            "at",
            "tool",
            "project",
            "purpose",
            "evidence",
            "rows",
            "cached as",
            "summary",
            "checks",
        ],
        rows,
        max_width=60,
    )
    return 0
