"""Fixtures for the MCP server: paired clients, a real HTTP server on 127.0.0.1 in this
process, and the official ``mcp`` SDK's client to talk to it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest


@pytest.fixture
def store():
    from lantide.mcp.clients import ClientStore

    return ClientStore()  # in the test's own LANTIDE_CONFIG_DIR


@pytest.fixture
def executing_workspace(sample_workspace) -> Path:
    """The sample workspace with its project executing (queries need a purpose)."""
    from lantide.workspace.model import Project

    Project.load(sample_workspace, "q3-churn").approve_plan()
    return sample_workspace


@pytest.fixture
def engine(executing_workspace, store):
    from lantide.mcp.engine import McpEngine

    eng = McpEngine(store=store, transport="http")
    eng.open_workspace(executing_workspace)
    yield eng
    eng.close()


@pytest.fixture
def http_server(engine):
    from lantide.mcp.server import HttpServer

    server = HttpServer(engine, port=0).start()
    yield server
    server.stop()


def pair(store, workspace, mode: str, name: str | None = None, kind: str = "claude-code"):
    return store.pair(name or f"{mode} client", kind=kind, scope=str(workspace), mode=mode)


async def _with_client(url: str, token: str | None, work):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await work(client)


def over_http(url: str, token: str | None, work):
    """Run ``await work(client)`` with an SDK client connected over HTTP."""
    try:
        return asyncio.run(_with_client(url, token, work))
    except BaseExceptionGroup as group:  # the SDK's task groups wrap the one real error
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]
        raise group from None


def call(url: str, token: str, tool: str, arguments: dict | None = None):
    async def work(client):
        return await client.call_tool(tool, arguments or {})

    return over_http(url, token, work)


def tool_names(url: str, token: str) -> list[str]:
    async def work(client):
        return [t.name for t in (await client.list_tools()).tools]

    return over_http(url, token, work)


def ledger_lines(workspace: Path, conversation: str) -> list[dict]:
    path = workspace / ".lantide" / "ledger" / f"{conversation}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def activity_lines(workspace: Path, client_id: str) -> list[dict]:
    path = workspace / ".lantide" / "activity" / f"{client_id}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
