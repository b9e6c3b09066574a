"""A secret an old workspace.json still holds, with no keyring to move it to, is shown."""

from __future__ import annotations

import json


def test_the_app_reports_a_secret_left_in_workspace_json(qtbot, sample_workspace):
    import keyring
    from keyring.backends import fail

    from lantide.ui.services import AppServices
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings

    path = sample_workspace / ".lantide" / "workspace.json"
    data = json.loads(path.read_text())
    data["connections"] = [
        {
            "name": "dw",
            "type": "odbc",
            "dialect": "postgres",
            "connection_string": "Driver={X};Server=s;AccessToken=tok-77",
        }
    ]
    path.write_text(json.dumps(data))
    before = path.read_text()
    keyring.set_keyring(fail.Keyring())
    ws = Workspace.open(sample_workspace)
    services = AppServices(ws, load_settings())
    posted = []
    services.sig_message_posted.connect(lambda text, level: posted.append((text, level)))
    try:
        services.start(query=True, watcher=False)
        qtbot.waitUntil(
            lambda: services.query is not None or services.query_error is not None, timeout=30_000
        )
        assert services.query_error is None
        [(text, level)] = [p for p in posted if "plain text" in p[0]]
        assert level == "warning" and "AccessToken" in text and "tok-77" not in text
        assert path.read_text() == before
    finally:
        services.close()
        ws.close()
