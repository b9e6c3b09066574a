"""PySide6's per-import source scan is off once the app applies its start-up measures (it
read every module imported after Qt: ~50 ms of a start-up), a module that selects a PySide6
feature still gets it, and one switch turns every measure off. Importing the app's package
does nothing by itself."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.conftest import REPO, cli_env

PROBE = textwrap.dedent(
    """
    import inspect, json, sys
    sys.path.insert(0, sys.argv[1])
    from lantide.ui import startup
    applied = startup.before_qt()  # as run_app does, first
    read = []
    real = inspect.getsource
    inspect.getsource = lambda obj: read.append(getattr(obj, "__name__", obj)) or real(obj)
    import qt_user, feature_user
    print(json.dumps({"applied": applied, "read": read, "title": feature_user.TITLE,
                      "plain": qt_user.TITLE}))
    """
)


def _write_modules(tmp_path):
    (tmp_path / "qt_user.py").write_text(
        "from PySide6.QtCore import QObject\n"
        "o = QObject()\n"
        "o.setObjectName('plain')\n"
        "TITLE = o.objectName()\n",
        encoding="utf-8",
    )
    (tmp_path / "feature_user.py").write_text(
        "from PySide6.QtCore import QObject\n"
        "from __feature__ import snake_case\n"
        "o = QObject()\n"
        "o.set_object_name('snake')\n"
        "TITLE = o.object_name()\n",
        encoding="utf-8",
    )


def _probe(tmp_path, script: str, env: dict | None = None) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        env=cli_env({"QT_QPA_PLATFORM": "offscreen", **(env or {})}),
        cwd=str(REPO),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_a_module_after_qt_reads_no_source_and_features_still_work(tmp_path):
    _write_modules(tmp_path)
    report = _probe(tmp_path, PROBE)
    assert report["applied"] is True
    assert report["read"] == []
    assert report["plain"] == "plain" and report["title"] == "snake"


def test_the_switch_turns_the_measures_off_and_pyside6_scans_as_it_always_did(tmp_path):
    _write_modules(tmp_path)
    report = _probe(tmp_path, PROBE, {"LANTIDE_NO_STARTUP_MEASURES": "1"})
    assert report["applied"] is False
    assert "qt_user" in report["read"] or "feature_user" in report["read"]
    assert report["plain"] == "plain" and report["title"] == "snake"


def test_importing_the_app_package_changes_nothing_by_itself(tmp_path):
    script = textwrap.dedent(
        """
        import builtins, json, re, sys
        compile_before, re_compile_before = builtins.compile, re.compile
        import lantide.ui, lantide.ui.startup
        print(json.dumps({
            "qt": "PySide6" in sys.modules,
            "compile_same": builtins.compile is compile_before,
            "re_compile_same": re.compile is re_compile_before,
        }))
        """
    )
    assert _probe(tmp_path, script) == {
        "qt": False,
        "compile_same": True,
        "re_compile_same": True,
    }
