"""One call of an outside agent, through the in-app agent's own tools.

:class:`McpEngine` knows nothing of the MCP protocol. For each call it checks the client's
mode (:mod:`lantide.mcp.access`), picks the client's workspace, builds a
:class:`~lantide.agent.tools.context.ToolContext` whose conversation is the client's own
(``mcp-CLIENT``, titled with the client's name, so its steps show in the ledger panel) and
runs the tool through :meth:`ToolRegistry.call`: the QEM, the guard, the confined DuckDB
and the ledger apply exactly as for the in-app agent. Every call, refused or not, is
recorded in the workspace's activity log.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from lantide.agent.ledger import Ledger
from lantide.agent.ledger_types import LedgerStep, StepFields
from lantide.agent.tools.context import ToolContext
from lantide.errors import LantideError
from lantide.mcp import access
from lantide.mcp.clients import ClientStore, PairedClient
from lantide.mcp.extra_tools import CUSTOM, WORKSPACE_TOOLS, ToolSchema, tool_schema
from lantide.workspace.activity import ActivityEntry, record_call

if TYPE_CHECKING:
    from lantide.agent.conversation import Conversation
    from lantide.agent.services import EngineServices
    from lantide.workspace.model import Project, Workspace
    from lantide.workspace.settings import Settings

_V = TypeVar("_V")
EXTERNAL_SUMMARY = "external"  # summary_status of a step an outside agent ran


class ScopeRefused(LantideError):
    code = "SCOPE_REFUSED"


class UnknownTool(LantideError):
    code = "UNKNOWN_TOOL"


class ClientLedger(Ledger):
    """A client's ledger: every step it appends names the client (DESIGN.md section 6)."""

    def __init__(self, ledger_dir: Path, conversation_id: str, client: PairedClient):
        super().__init__(ledger_dir, conversation_id)
        self.client = client

    def append(self, fields: StepFields) -> LedgerStep:
        # an outside agent writes no [[QUERY_STEP]] line: its step is not "pending" one
        return super().append(
            {
                **fields,
                "client": self.client.id,
                "client_name": self.client.name,
                "summary_status": EXTERNAL_SUMMARY,
            }
        )


@dataclass
class ClientToolContext(ToolContext):
    """A tool context whose "focused" project is the one the client named (else the
    analyst's focused one): the client never moves the analyst's focus."""

    client_project: Project | None = None

    def focused_project(self) -> Project | None:
        return self.client_project

    def project(self, name: str | None = None) -> Project:
        if name or self.client_project is None:
            return super().project(name)
        return self.client_project

    def outside_agent(self) -> bool:
        return True  # statistics are refused in every mode (agent.consent)


@dataclass
class WorkspaceHandle:
    """An open workspace and its engine (the app's own, or opened here)."""

    workspace: Workspace
    settings: Settings
    services: EngineServices
    owned: bool
    conversations: dict[str, Conversation] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.workspace.root

    def close(self) -> None:
        if self.owned:
            self.services.close()
            self.workspace.close()


class ListedTool(ToolSchema):
    """A tool of ``tools/list`` (:meth:`McpEngine.list_tools`)."""

    name: str


@dataclass
class CallResult:
    ok: bool
    result: dict[str, Any]
    step_ids: list[str]
    steps: list[LedgerStep] = field(default_factory=list)  # the ledger lines written


class McpEngine:
    """Runs the calls of every client of one server. ``workspace``/``services``: the
    workspace already open in this process (the desktop app's, with its engine); other
    workspaces a client selects are opened on demand (and locked, as any process does)."""

    def __init__(
        self,
        *,
        store: ClientStore | None = None,
        workspace: Workspace | None = None,
        services: EngineServices | None = None,
        settings: Settings | None = None,
        transport: str = "stdio",
    ) -> None:
        from lantide.workspace.settings import load_settings

        self.store = store or ClientStore()
        self.settings = settings or load_settings()
        self.transport = transport
        self._handles: dict[Path, WorkspaceHandle] = {}
        self._selected: dict[str, Path] = {}  # client id -> the workspace it selected
        self._lock = threading.RLock()
        self.primary: Path | None = None
        # called after every recorded call (on the server's thread) with the activity
        # entry and the ledger steps it wrote: the desktop app refreshes its panels
        self.on_call: Callable[[ActivityEntry, list[LedgerStep]], None] | None = None
        if workspace is not None:
            from lantide.agent.services import EngineServices

            handle = WorkspaceHandle(
                workspace,
                self.settings,
                services or EngineServices(workspace, self.settings),
                owned=False,
            )
            self._handles[workspace.root] = handle
            self.primary = workspace.root

    # -- workspaces
    def open_workspace(self, root: Path | str) -> WorkspaceHandle:
        from lantide.agent.services import EngineServices
        from lantide.workspace.model import Workspace

        root = Path(root).expanduser().resolve()
        with self._lock:
            if root not in self._handles:
                ws = Workspace.open(root)
                self._handles[ws.root] = WorkspaceHandle(
                    ws, self.settings, EngineServices(ws, self.settings), owned=True
                )
                if self.primary is None:
                    self.primary = ws.root
            return self._handles[root]

    def workspace_for(self, client: PairedClient) -> WorkspaceHandle:
        """The workspace the client works in: its selection, its scope's workspace, or
        this server's own."""
        with self._lock:
            chosen = self._selected.get(client.id)
            if chosen is None and not client.all_workspaces:
                chosen = Path(client.scope)
            if chosen is None:
                chosen = self.primary
        if chosen is None:
            raise ScopeRefused(
                "no workspace is selected", hint="Call list_workspaces, then select_workspace."
            )
        # every call lands here: an open workspace in the client's scope (both stored
        # resolved) is found without resolving the path again (two realpaths per call)
        handle = self._handles.get(chosen)
        if handle is not None and (client.all_workspaces or client.scope == str(chosen)):
            return handle
        if not client.allows_workspace(chosen):
            raise ScopeRefused(
                f"this client's scope is {client.scope}, not {chosen}",
                hint="Pair the client again with this workspace or all.",
            )
        return self.open_workspace(chosen)

    def known_workspaces(self, client: PairedClient) -> list[Path]:
        from lantide.workspace.model import Workspace

        roots = list(self._handles) + [Path(r) for r in self.settings.recent_workspaces]
        if not client.all_workspaces:
            roots.insert(0, Path(client.scope))
        out: list[Path] = []
        for root in roots:
            root = root.expanduser().resolve()
            if root not in out and client.allows_workspace(root) and Workspace.is_workspace(root):
                out.append(root)
        return out

    def select_workspace(self, client: PairedClient, root: Path) -> WorkspaceHandle:
        if not client.allows_workspace(root):
            raise ScopeRefused(
                f"{root} is outside this client's scope ({client.scope})",
                hint="Pick one of list_workspaces.",
            )
        handle = self.open_workspace(root)
        with self._lock:
            self._selected[client.id] = handle.root
        return handle

    def conversation_for(self, handle: WorkspaceHandle, client: PairedClient) -> Conversation:
        """The client's conversation in this workspace, created (with its title) on first
        use so the ledger panel lists it under the client's name."""
        from lantide.agent.conversation import Conversation

        with self._lock:
            conv = handle.conversations.get(client.id)
            if conv is None:
                conv = Conversation.create(handle.workspace.conversations_dir, f"mcp-{client.id}")
                if conv.title != f"{client.name} (MCP)":
                    conv.set_title(f"{client.name} (MCP)")
                handle.conversations[client.id] = conv
            return conv

    # -- calls
    def list_tools(self, client: PairedClient) -> list[ListedTool]:
        """``{name, description, input_schema}`` of the tools the client's mode allows."""
        return [
            {"name": t.name, **tool_schema(t)}
            for t in access.tools_for(client.mode, client.all_workspaces)
        ]

    def call(
        self,
        client: PairedClient,
        tool: str,
        arguments: Mapping[str, object] | None,
        token: str | None = None,
    ) -> CallResult:
        """Run one call. Raises :class:`~lantide.mcp.access.ModeRefused` and
        :class:`UnknownTool` (the server answers both as protocol errors) after recording
        them; every other problem is a result with ``error``."""
        started = time.perf_counter()
        args = dict(arguments or {})
        handle: WorkspaceHandle | None = None
        try:
            entry = access.BY_NAME.get(tool)
            if entry is None or (entry.multi_workspace and not client.all_workspaces):
                known = ", ".join(
                    t.name for t in access.tools_for(client.mode, client.all_workspaces)
                )
                raise UnknownTool(f"no tool {tool[:100]!r}", hint=f"Tools: {known}.")
            if not access.allows(client.mode, entry.mode):
                raise access.ModeRefused(tool, client.mode, entry.mode)
            if entry.name in WORKSPACE_TOOLS:
                outcome = WORKSPACE_TOOLS[entry.name](self, client, args)
            else:
                handle = self.workspace_for(client)
                outcome = self._run(handle, client, entry, args)
        except (access.ModeRefused, UnknownTool) as exc:
            self._record(handle, client, tool, args, False, dict(exc.to_dict()), [], started, token)
            raise
        except LantideError as exc:
            outcome = CallResult(False, dict(exc.to_dict()), [])
        self._record(
            handle,
            client,
            tool,
            args,
            outcome.ok,
            None if outcome.ok else outcome.result,
            outcome.step_ids,
            started,
            token,
            outcome.steps,
        )
        self.store.touch(client.id)
        # recorded as it was (the analyst's files); the client sees workspace-relative paths
        outcome.result = self._outward(handle, outcome.result)
        return outcome

    def _outward(self, handle: WorkspaceHandle | None, value: _V) -> _V:
        """``value`` as an outside agent may see it: paths relative to the workspace of
        the call, other paths under the home folder as ``~/...``."""
        from lantide.mcp.redact import relative_paths

        roots = [handle.root] if handle is not None else []
        return cast(_V, relative_paths(value, roots))

    def _run(
        self,
        handle: WorkspaceHandle,
        client: PairedClient,
        entry: access.McpTool,
        args: dict[str, object],
    ) -> CallResult:
        from lantide.agent.app_state import SessionFileAppState
        from lantide.agent.cancel import CancelToken
        from lantide.agent.tools import default_registry
        from lantide.agent.tools.registry import state_of

        ws = handle.workspace
        conv = self.conversation_for(handle, client)
        named = args.get("project")
        project = ws.project(named) if isinstance(named, str) and named else ws.focused_project()
        ctx = ClientToolContext(
            workspace=ws,
            settings=handle.settings,
            conversation=conv,
            ledger=ClientLedger(ws.ledger_dir, conv.id, client),
            app=SessionFileAppState(ws),
            services=handle.services,
            cancel=CancelToken(),
            state=state_of(project),
            turn=conv.last_turn + 1,
            client_project=project,
        )
        custom = CUSTOM.get(entry.name)
        if custom is not None and (entry.name != "run_query" or client.mode == access.OBSERVE):
            outcome = custom(self, client, ctx, args)
        else:
            tool = default_registry().get(entry.registry) if entry.registry else None
            if tool is None:  # access.TOOLS names an agent tool or a custom one for each
                raise LantideError(
                    f"the tool {entry.name!r} has no implementation",
                    hint="This is a Lantide bug; please report it.",
                    code="TOOL_MISSING",
                )
            if "project" not in tool.parameters.get("properties", {}):
                args = {k: v for k, v in args.items() if k != "project"}  # ctx carries it
            result = default_registry().call(tool.name, args, ctx)
            outcome = CallResult(result.ok, result.result, list(ctx.pending_steps))
        from lantide.agent.events import StepRecorded

        outcome.steps = [e.step for e in ctx.drain_events() if isinstance(e, StepRecorded)]
        if outcome.ok:
            outcome.result.pop("next", None)  # the [[QUERY_STEP]] line is the chat's, not ours
            if outcome.step_ids:
                outcome.result["cite"] = (
                    f"ledger conversation {conv.id}, step"
                    f"{'s' if len(outcome.step_ids) > 1 else ''} " + ", ".join(outcome.step_ids)
                )
        return outcome

    def _record(
        self,
        handle: WorkspaceHandle | None,
        client: PairedClient,
        tool: str,
        args: Mapping[str, object],
        ok: bool,
        error: dict[str, Any] | None,
        step_ids: list[str],
        started: float,
        token: str | None,
        steps: Iterable[LedgerStep] = (),
    ) -> None:
        root = handle.root if handle is not None else self._record_root(client)
        if root is None:
            return
        entry = record_call(
            root,
            client_id=client.id,
            client_name=client.name,
            mode=client.mode,
            transport=self.transport,
            tool=tool,
            arguments=args,
            ok=ok,
            error=error,
            step_ids=step_ids,
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
            token=token,
        )
        if self.on_call is not None:
            # a listener's problem never fails the client's call
            with contextlib.suppress(Exception):
                self.on_call(entry, list(steps))

    def _record_root(self, client: PairedClient) -> Path | None:
        """Where a call that touched no workspace is recorded (list_workspaces): the
        client's selected or scope workspace, else this server's own."""
        with self._lock:
            root = self._selected.get(client.id)
        if root is None and not client.all_workspaces:
            root = Path(client.scope)
        root = root or self.primary
        return root if root is not None and root in self._handles else None

    def close(self) -> None:
        from lantide.workspace.atomic import sync_deferred

        with self._lock:
            for handle in self._handles.values():
                handle.close()
            self._handles.clear()
        sync_deferred()  # the activity lines of the last calls, on disk before we go
