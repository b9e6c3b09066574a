"""The user settings file is written by several processes (the app, `lantide chat` learning
a model's context window): a change made from a stale copy never undoes another's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from lantide.workspace import paths
from lantide.workspace.settings import Settings, load_settings, save_settings
from tests.conftest import REPO, cli_env

_WORKER = textwrap.dedent("""
    import sys
    from lantide.agent.context_window import remember_context_window
    from lantide.workspace.settings import ResolvedProfile
    worker = sys.argv[1]
    sys.stdin.readline()
    for i in range(10):
        profile = ResolvedProfile("env", "http://127.0.0.1:9/v1", f"model-{worker}-{i}", None, None)
        remember_context_window(profile, 1000 + i)
""")


def test_context_windows_learned_by_several_processes_are_all_kept(isolated_user_dirs):
    save_settings(Settings())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(w)],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
            cwd=str(REPO),
        )
        for w in range(4)
    ]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    learned = json.loads(paths.settings_path().read_text())["learned_context_windows"]
    assert len(learned) == 40, sorted(learned)


def test_update_settings_works_on_the_file_as_it_is_now(isolated_user_dirs):
    from lantide.workspace.settings import update_settings

    stale = load_settings()  # e.g. the app's copy, loaded at start
    fresh = load_settings()
    fresh.extra["learned_context_windows"] = {"http://x#m": 4096}
    save_settings(fresh)  # another process learned a window meanwhile
    update_settings(lambda s: s.add_recent_workspace("/tmp/ws-a"))
    data = json.loads(paths.settings_path().read_text())
    assert data["learned_context_windows"] == {"http://x#m": 4096}
    assert data["recent_workspaces"][0].endswith("ws-a")
    assert stale.recent_workspaces == []  # the stale copy was not what got written


def test_settings_edited_in_the_app_keep_what_others_wrote_meanwhile(isolated_user_dirs):
    from lantide.workspace.settings import ModelProfile, save_edited_settings

    app_copy = load_settings()  # loaded at start; the analyst edits it in Settings
    other = load_settings()
    other.extra["learned_context_windows"] = {"http://x#m": 4096}  # `lantide chat` learned
    other.add_recent_workspace("/tmp/opened-elsewhere")
    save_settings(other)

    app_copy.profiles.append(ModelProfile(name="work", base_url="http://127.0.0.1:9/v1", model="m"))
    app_copy.primary_profile = "work"
    app_copy.appearance = "dark"
    save_edited_settings(app_copy)

    data = json.loads(paths.settings_path().read_text())
    assert [p["name"] for p in data["profiles"]] == ["work"]
    assert data["primary_profile"] == "work" and data["appearance"] == "dark"
    assert data["learned_context_windows"] == {"http://x#m": 4096}
    assert data["recent_workspaces"][0].endswith("opened-elsewhere")


def test_a_broken_settings_file_is_not_replaced_by_an_edit(isolated_user_dirs):
    import pytest

    from lantide.errors import LantideError
    from lantide.workspace.settings import save_edited_settings

    path = paths.settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"profiles": [ hand edit gone wrong')
    with pytest.raises(LantideError) as info:
        save_edited_settings(Settings(appearance="dark"))
    assert "not overwritten" in info.value.message
    assert path.read_text() == '{"profiles": [ hand edit gone wrong'
