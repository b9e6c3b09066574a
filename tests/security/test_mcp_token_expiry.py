"""``lantide mcp pair --expires``: a duration of nothing (``0d``, ``0h``, ``0.0``, ``0``) is
not a token that never expires, and an absurd one (``9999999999d``, digits past a float's
range) is no internal error: both are refused with what to write instead, and no client is
paired. ``never`` stays the one way to ask for a token without expiry, and a duration is
capped at the documented maximum (README, Agent Integration)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.security

REFUSED = ["0d", "0h", "0.0", "0", "-1d", "0.5h", "9999999999d", "1" * 400, "366d", "1e9d"]


@pytest.mark.parametrize("expires", REFUSED, ids=[e[:12] for e in REFUSED])
def test_a_duration_of_nothing_or_of_ages_is_refused_and_pairs_nobody(
    run_cli, empty_workspace, expires
):
    from lantide.mcp.clients import ClientStore

    done = run_cli("mcp", "pair", empty_workspace, f"--expires={expires}", "--json", timeout=60)
    assert done.returncode == 1, done.stdout
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "BAD_EXPIRY" and "Traceback" not in done.stderr
    assert "never" in error["hint"] and "365d" in error["hint"]
    assert ClientStore().clients() == []


def test_the_longest_duration_and_never_are_what_they_say(run_cli, empty_workspace):
    from lantide.mcp.clients import MAX_EXPIRY_DAYS, ClientStore

    longest = run_cli("mcp", "pair", empty_workspace, "--expires", "365d", "--json", timeout=60)
    assert longest.returncode == 0, longest.stderr
    expires = json.loads(longest.stdout)["client"]["expires_at"]
    when = datetime.strptime(expires, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs(when - datetime.now(UTC) - timedelta(days=MAX_EXPIRY_DAYS)) < timedelta(hours=1)
    never = run_cli("mcp", "pair", empty_workspace, "--expires", "never", "--json", timeout=60)
    assert json.loads(never.stdout)["client"]["expires_at"] is None
    assert len(ClientStore().clients()) == 2


def test_the_store_refuses_what_the_command_line_refuses(store):
    from lantide.errors import LantideError

    for days in (0, 0.0, -3, float("nan"), float("inf"), 10**12):
        with pytest.raises(LantideError) as refused:
            store.pair("x", expires_days=days)
        assert refused.value.code == "BAD_EXPIRY"
    assert store.clients() == []


def test_the_maximum_is_documented():
    from lantide.mcp.clients import MAX_EXPIRY_DAYS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"{MAX_EXPIRY_DAYS} days" in readme and "--expires" in readme


@pytest.fixture
def store():
    from lantide.mcp.clients import ClientStore

    return ClientStore()
