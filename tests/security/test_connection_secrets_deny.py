"""Secrets of a connection string, deny by default: a keyword not known to be harmless whose
name holds secret, key, token, pass, pw, credential or a certificate's content goes to the
keyring, never to ``workspace.json`` nor to what ``connection list`` prints, and the
listing masks the value of every keyword it does not know. A workspace written before keeps
its connections working: against a real PostgreSQL, with and without a keyring."""

from __future__ import annotations

import json

import pytest

from lantide.query.connections import add_connection, migrate_connection_secrets
from lantide.query.external import ConnectionConfig
from lantide.workspace.model import Workspace
from tests.query.conftest import pg_server  # noqa: F401  (fixture)

pytestmark = pytest.mark.security

# keywords that stayed in clear before, and others of their kind
SECRET_KEYS = [
    "AwsSecretAccessKey",
    "AwsSecretKey",
    "KeyFileContents",
    "PW",
    "SSLCertContent",
    "ClientCertificateContents",
    "client_credential",
    "X-Api-Token",
    "MyPassphrase",
]


def _settings(root) -> str:
    return (root / ".lantide" / "workspace.json").read_text(encoding="utf-8")


def _listing(root, capsys, *extra) -> str:
    from lantide.cli.main import main

    assert main(["connection", "list", str(root), *extra]) == 0
    captured = capsys.readouterr()
    return captured.out + captured.err


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_secret_like_keyword_goes_to_the_keyring_not_the_file_nor_the_listing(
    empty_workspace, memory_keyring, capsys, key
):
    value = f"VALUE-of-{key}-42"
    ws = Workspace.open(empty_workspace)
    try:
        entry = add_connection(
            ws, "lake", f"Driver={{Simba Athena}};Server=athena;Port=443;{key}={value}"
        )
    finally:
        ws.close()
    assert value not in _settings(empty_workspace)
    assert entry["secret_keys"] == [key]
    for extra in ((), ("--json",)):
        shown = _listing(empty_workspace, capsys, *extra)
        assert value not in shown and "Server=athena" in shown
    # and it is there when connecting
    full, masked = ConnectionConfig.from_dict(entry).full_connection_string()
    assert f"{key}={value}" in full and value in masked


def test_connection_list_masks_every_value_it_does_not_know(empty_workspace, capsys):
    path = empty_workspace / ".lantide" / "workspace.json"
    data = json.loads(path.read_text())
    data["connections"] = [
        {
            "name": "lake",
            "type": "odbc",
            "dialect": "trino",
            "connection_string": "Driver={Trino};Host=lake;Port=443;Catalog=hive;"
            "Extra=private-thing;S3OutputLocation=s3://bucket/home/alice",
        },
        {
            "name": "pg",
            "type": "odbc",
            "dialect": "postgres",
            "connection_string": "postgresql://alice@db:5432/shop?sslmode=require&note=private",
        },
    ]
    path.write_text(json.dumps(data))
    for extra in ((), ("--json",)):
        shown = _listing(empty_workspace, capsys, *extra)
        assert "private" not in shown and "s3://bucket" not in shown
        assert "Host=lake" in shown and "Catalog=hive" in shown and "sslmode=require" in shown
        assert "Extra=***" in shown and "note=***" in shown


@pytest.mark.postgres
def test_an_old_workspace_with_such_a_secret_in_the_file_keeps_working(
    pg_server,  # noqa: F811
    sample_workspace,
    run_cli,
    memory_keyring,
):
    """Written before the rule: without a keyring the query runs from the file (and the
    file is reported, not changed); with one, the secret moves to the keyring on the next
    open, the file no longer holds it, and the query still runs."""
    path = sample_workspace / ".lantide" / "workspace.json"
    data = json.loads(path.read_text())
    data["connections"] = [
        {
            "name": "shop",
            "type": "odbc",
            "dialect": "postgres",
            # psqlODBC ignores a keyword it does not know; Lantide must keep it all the same
            "connection_string": pg_server.connection_string
            + f";PWD={pg_server.password};AwsSecretAccessKey=aws-secret-99",
            "user": pg_server.user,
        }
    ]
    path.write_text(json.dumps(data))
    before = path.read_text()
    sql = "SELECT count(*) AS n FROM shop.sales.invoices"
    out = run_cli("sql", sample_workspace, sql, "--json")  # the tests' subprocesses: no keyring
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["preview"] == [[5000]]
    assert path.read_text() == before
    assert "aws-secret-99" not in out.stdout + out.stderr
    assert "AwsSecretAccessKey" in out.stderr and "plain text" in out.stderr

    ws = Workspace.open(sample_workspace)
    try:
        assert migrate_connection_secrets(ws) == []
        [entry] = ws.connections
    finally:
        ws.close()
    assert "aws-secret-99" not in _settings(sample_workspace)
    assert pg_server.password not in _settings(sample_workspace)
    assert entry["secret_keys"] == ["AwsSecretAccessKey"]
    full, _masked = ConnectionConfig.from_dict(entry).full_connection_string()
    assert "AwsSecretAccessKey=aws-secret-99" in full

    from lantide.query.service import QueryService

    service = QueryService(Workspace.open(sample_workspace, lock=False))
    try:
        result = service.run_query(sql)
    finally:
        service.close()
    assert result["preview"] == [[5000]]
