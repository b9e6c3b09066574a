"""Every secret a connection string can carry goes to the keyring, never to workspace.json.

Keyword forms ODBC drivers use (PWD, Password, AccessToken, SSLPassword, Token,
ClientSecret, ApiKey, ...), a URL's ``user:pass@host`` and its ``?password=`` parameter.
A workspace.json that already holds one is migrated by the process that owns the
workspace, or reported where no keyring exists; it keeps working either way.
"""

from __future__ import annotations

import json

import pytest

from lantide.query.connection_secrets import join_secrets, split_secrets
from lantide.query.connections import add_connection, edit_connection, list_connections
from lantide.query.errors import ConnectionProblem
from lantide.query.external import ConnectionConfig, odbc_braced
from lantide.workspace.model import Workspace

BASE = "Driver={PostgreSQL Unicode};Server=db;Database=shop"

SECRET_FORMS = [
    (BASE + ";AccessToken=tok-123", {"AccessToken": "tok-123"}),
    (BASE + ";SSLPassword=key-pass-9", {"SSLPassword": "key-pass-9"}),
    (BASE + ";sslkey=/home/a/client.key;SSLKeyPassword=pp-1", {"SSLKeyPassword": "pp-1"}),
    (BASE + ";Token=t0k", {"Token": "t0k"}),
    (BASE + ";ClientSecret={a;b}}c}", {"ClientSecret": "a;b}c"}),
    (BASE + ";Auth_Client_Secret=cs-2", {"Auth_Client_Secret": "cs-2"}),
    (BASE + ";Secret=s-3", {"Secret": "s-3"}),
    (BASE + ";AuthToken=at-4", {"AuthToken": "at-4"}),
    (BASE + ";ApiKey=ak-5", {"ApiKey": "ak-5"}),
    (BASE + ";api_key=ak-6", {"api_key": "ak-6"}),
    (BASE + ";PRIV_KEY_FILE_PWD=pk-7", {"PRIV_KEY_FILE_PWD": "pk-7"}),
    (BASE + ";PrivateKeyPassphrase=pp-8", {"PrivateKeyPassphrase": "pp-8"}),
    (BASE + ";PWD=hunter2", {"PWD": "hunter2"}),
    (BASE + "; Password = hunter3 ;", {"Password": "hunter3"}),
    ("postgresql://alice:s3cr%40t@db:5432/shop", {"url:password": "s3cr%40t"}),
    ("postgresql://alice:p@ss:w@db:5432/shop", {"url:password": "p@ss:w"}),
    ("Driver={Databricks};Url=https://bob:tok-9@host:443/sql?x=1", {"url:password": "tok-9"}),
    ("postgresql://db/shop?user=alice&password=pw-10&sslmode=require", {"url?password": "pw-10"}),
]


@pytest.mark.parametrize("text,secrets", SECRET_FORMS)
def test_split_takes_every_secret_form_out_and_join_puts_it_back(text, secrets):
    clean, found = split_secrets(text)
    assert found == secrets
    for value in secrets.values():
        assert value not in clean
    assert "Driver=" in clean or "://" in clean
    rebuilt_clean, rebuilt_found = split_secrets(join_secrets(clean, found))
    assert rebuilt_found == found and rebuilt_clean.rstrip(";") == clean.rstrip(";")


@pytest.mark.parametrize(
    "text",
    [
        BASE + ";sslkey=/home/a/client.key;SSLMode=require;Trusted_Connection=yes",
        BASE + ";Authentication=ActiveDirectoryPassword;TokenEndpoint=https://login/x",
        "postgresql://alice@db:5432/shop?sslmode=require",
    ],
)
def test_what_is_not_a_secret_stays(text):
    assert split_secrets(text) == (text, {})


def _settings(root) -> str:
    return (root / ".lantide" / "workspace.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("text,secrets", SECRET_FORMS)
def test_add_moves_each_secret_to_the_keyring(sample_workspace, memory_keyring, text, secrets):
    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(ws, "wh", text, dialect="postgres", user="alice")
    stored = _settings(sample_workspace)
    for value in secrets.values():
        assert value not in stored
    config = ConnectionConfig.from_dict(json.loads(stored)["connections"][0])
    full, hidden = config.full_connection_string()
    for value in secrets.values():
        assert odbc_braced(value) in full and value in hidden  # put back; errors mask it
    [row] = list_connections(ws)
    assert row["secrets_in_file"] == []
    assert all(v not in row["connection_string"] for v in secrets.values())


def test_without_a_keyring_add_refuses_and_writes_nothing(sample_workspace, monkeypatch):
    import keyring
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    ws = Workspace.open(sample_workspace, lock=False)
    before = _settings(sample_workspace)
    with pytest.raises(ConnectionProblem) as info:
        add_connection(ws, "wh", BASE + ";AccessToken=tok-123")
    assert info.value.code == "NO_KEYRING"
    assert "LANTIDE_SECRET_WH_ACCESSTOKEN" in info.value.hint
    assert _settings(sample_workspace) == before


def _hand_written(root, entries):
    path = root / ".lantide" / "workspace.json"
    data = json.loads(path.read_text())
    data["connections"] = entries
    path.write_text(json.dumps(data, indent=2))


OLD_ENTRY = {
    "name": "legacy",
    "type": "odbc",
    "dialect": "postgres",
    "connection_string": BASE + ";PWD=old-pw-1;AccessToken=old-tok-2",
    "user": "u",
}


def test_an_old_file_is_migrated_when_the_workspace_is_opened(
    sample_workspace, open_service, memory_keyring
):
    _hand_written(sample_workspace, [dict(OLD_ENTRY)])
    svc = open_service(sample_workspace)
    text = _settings(sample_workspace)
    assert "old-pw-1" not in text and "old-tok-2" not in text
    [entry] = json.loads(text)["connections"]
    assert entry["connection_string"] == BASE and entry["secret_keys"] == ["AccessToken"]
    assert memory_keyring.get_password("lantide", "connection:legacy") == "old-pw-1"
    assert memory_keyring.get_password("lantide", "connection:legacy:accesstoken") == "old-tok-2"
    assert svc.connection_warnings == []
    full, _ = svc.external.config("legacy").full_connection_string()
    assert "AccessToken=old-tok-2" in full and "PWD=old-pw-1" in full and "UID=u" in full


def test_an_old_file_is_migrated_by_the_next_connection_save(sample_workspace, memory_keyring):
    _hand_written(sample_workspace, [dict(OLD_ENTRY)])
    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(ws, "other", BASE)
    text = _settings(sample_workspace)
    assert "old-pw-1" not in text and "old-tok-2" not in text
    assert {e["name"] for e in json.loads(text)["connections"]} == {"legacy", "other"}


def test_without_a_keyring_an_old_file_keeps_working_and_is_reported(
    sample_workspace, open_service, run_cli
):
    import keyring
    from keyring.backends import fail

    _hand_written(sample_workspace, [dict(OLD_ENTRY)])
    before = _settings(sample_workspace)
    keyring.set_keyring(fail.Keyring())
    svc = open_service(sample_workspace)
    assert _settings(sample_workspace) == before  # the analyst's file is not changed
    [warning] = svc.connection_warnings
    assert "AccessToken" in warning and "LANTIDE_SECRET_LEGACY_ACCESSTOKEN" in warning
    assert "old-tok-2" not in warning
    full, _ = svc.external.config("legacy").full_connection_string()
    assert "AccessToken=old-tok-2" in full and "PWD=old-pw-1" in full
    svc.close()
    out = run_cli(
        "connection",
        "list",
        sample_workspace,
        env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
    )
    assert out.returncode == 0, out.stderr
    assert "old-tok-2" not in out.stdout + out.stderr and "old-pw-1" not in out.stdout
    assert "plain text" in out.stderr and "AccessToken" in out.stderr


def test_a_rename_carries_the_other_secrets(sample_workspace, memory_keyring):
    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(ws, "wh", BASE + ";AccessToken=tok-123")
    edit_connection(ws, "wh", "warehouse", BASE)
    assert memory_keyring.get_password("lantide", "connection:warehouse:accesstoken") == "tok-123"
    assert memory_keyring.get_password("lantide", "connection:wh:accesstoken") is None
    [row] = list_connections(ws)
    assert row["name"] == "warehouse" and row["secret_keys"] == ["AccessToken"]
    edit_connection(ws, "warehouse", "Warehouse", BASE)
    assert memory_keyring.get_password("lantide", "connection:Warehouse:accesstoken") == "tok-123"
    assert memory_keyring.get_password("lantide", "connection:warehouse:accesstoken") is None
