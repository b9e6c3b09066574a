"""Managing external connections (library and ``lantide connection``) against a real
PostgreSQL server through its ODBC driver: the password never reaches a file."""

from __future__ import annotations

import json

import pytest

from lantide.query.connections import (
    add_connection,
    check_dialect,
    list_connections,
    remove_connection,
    test_connection,
)
from lantide.query.errors import ConnectionProblem
from lantide.workspace.model import Workspace

pytestmark = pytest.mark.postgres


def _settings_text(root) -> str:
    return (root / ".lantide" / "workspace.json").read_text(encoding="utf-8")


def test_add_test_list_and_remove(pg_server, sample_workspace, memory_keyring):
    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(
        ws,
        "shop",
        pg_server.connection_string,
        dialect="postgres",
        user=pg_server.user,
        password=pg_server.password,
    )
    assert pg_server.password not in _settings_text(sample_workspace)
    [row] = list_connections(ws)
    assert (row["name"], row["dialect"], row["user"], row["password"]) == (
        "shop",
        "postgres",
        pg_server.user,
        "keyring",
    )

    report = test_connection(ws, "SHOP")  # names match case-insensitively, as in SQL
    assert report["ok"] and report["tables"] == 2
    assert report["sample"] == ['"shop"."public"."customers"', '"shop"."sales"."invoices"']

    # a second add of the same name needs --replace; a replace keeps the stored password
    with pytest.raises(ConnectionProblem) as info:
        add_connection(ws, "Shop", pg_server.connection_string, replace=False)
    assert info.value.code == "CONNECTION_EXISTS"
    add_connection(
        ws,
        "shop",
        pg_server.connection_string + ";ConnSettings=",
        dialect="postgres",
        user=pg_server.user,
    )
    assert len(list_connections(ws)) == 1
    assert test_connection(ws, "shop")["tables"] == 2

    removed = remove_connection(ws, "shop")
    assert removed["name"] == "shop" and list_connections(ws) == []
    assert memory_keyring.get_password("lantide", "connection:shop") is None
    assert json.loads(_settings_text(sample_workspace))["connections"] == []
    with pytest.raises(ConnectionProblem) as info:
        remove_connection(ws, "shop")
    assert info.value.code == "CONNECTION_NOT_FOUND" and "none" in info.value.hint


def test_a_wrong_password_fails_the_test_without_showing_it(
    pg_server, sample_workspace, memory_keyring
):
    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(
        ws, "shop", pg_server.connection_string, user=pg_server.user, password="not-the-password-42"
    )
    with pytest.raises(ConnectionProblem) as info:
        test_connection(ws, "shop")
    assert "cannot connect" in info.value.message
    assert "not-the-password-42" not in info.value.message + (info.value.hint or "")


def test_bad_entries_are_refused_before_anything_is_written(sample_workspace, memory_keyring):
    ws = Workspace.open(sample_workspace, lock=False)
    before = _settings_text(sample_workspace)
    with pytest.raises(ConnectionProblem) as info:
        add_connection(ws, "dw", "Driver={X};Server=s", dialect="sqlserver2019")
    assert info.value.code == "CONNECTION_INVALID" and "tsql" in info.value.hint
    assert _settings_text(sample_workspace) == before
    # a password written in the connection string goes to the keyring, not the file
    add_connection(ws, "dw", "Driver={X};Server=s;Pwd=hunter2", dialect="tsql")
    assert "hunter2" not in _settings_text(sample_workspace)
    assert memory_keyring.get_password("lantide", "connection:dw") == "hunter2"
    assert check_dialect(" TSQL ") == "tsql"


def test_cli_add_with_the_password_in_the_environment(pg_server, sample_workspace, run_cli):
    env = {"LANTIDE_PASSWORD_SHOP": pg_server.password}
    out = run_cli(
        "connection",
        "add",
        sample_workspace,
        "shop",
        pg_server.connection_string,
        "--user",
        pg_server.user,
        "--no-password",
        "--test",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "Added connection 'shop' (postgres)" in out.stdout
    assert "2 tables" in out.stdout and '"shop"."public"."customers"' in out.stdout
    assert pg_server.password not in _settings_text(sample_workspace)

    listed = json.loads(run_cli("connection", "list", sample_workspace, "--json", env=env).stdout)[
        "connections"
    ]
    assert [(c["name"], c["password"]) for c in listed] == [("shop", "environment")]
    # the connection serves queries from the command line too
    out = run_cli(
        "sql", sample_workspace, "SELECT count(*) AS n FROM shop.sales.invoices", "--json", env=env
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["preview"] == [[5000]]

    out = run_cli("connection", "remove", sample_workspace, "shop")
    assert out.returncode == 0 and "Removed connection 'shop'" in out.stdout
    assert (
        "no connection named 'shop'"
        in run_cli("connection", "test", sample_workspace, "shop").stderr
    )


def test_cli_without_a_keyring_says_where_the_password_can_go(sample_workspace, run_cli):
    before = _settings_text(sample_workspace)
    out = run_cli(
        "connection",
        "add",
        sample_workspace,
        "Sales DW",
        "Driver={ODBC Driver 18 for SQL Server};Server=dw;Database=sales",
        "--dialect",
        "tsql",
        "--password-stdin",
        input="s3cret\n",
        env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
    )
    assert out.returncode == 1
    assert "LANTIDE_PASSWORD_SALES_DW" in out.stderr and "s3cret" not in out.stderr
    assert _settings_text(sample_workspace) == before
    # without a terminal and without --password-stdin/--no-password: a usage error
    out = run_cli("connection", "add", sample_workspace, "dw", "Driver={X};Server=s")
    assert out.returncode == 2 and "--password-stdin" in out.stderr


def test_an_old_workspace_with_the_password_in_the_file_keeps_working(
    pg_server, sample_workspace, run_cli
):
    """A workspace.json written before secrets moved out: the first command that owns the
    workspace moves the password to the keyring and the query still runs (here without a
    keyring the password is used from the file and reported, the file left as it was)."""
    path = sample_workspace / ".lantide" / "workspace.json"
    data = json.loads(path.read_text())
    data["connections"] = [
        {
            "name": "shop",
            "type": "odbc",
            "dialect": "postgres",
            "connection_string": pg_server.connection_string + f";PWD={pg_server.password}",
            "user": pg_server.user,
        }
    ]
    path.write_text(json.dumps(data))
    before = path.read_text()
    out = run_cli(
        "sql",
        sample_workspace,
        "SELECT count(*) AS n FROM shop.sales.invoices",
        "--json",
        env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["preview"] == [[5000]]
    assert path.read_text() == before
    assert pg_server.password not in out.stdout + out.stderr
    assert "plain text" in out.stderr and "LANTIDE_PASSWORD_SHOP" in out.stderr
