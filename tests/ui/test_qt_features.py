"""PySide6's per-import source scan is off once the app's package is loaded (it read every
module imported after Qt: ~50 ms of a start-up), and a module that selects a PySide6 feature
still gets it."""

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
    import lantide.ui  # the app's package, first
    read = []
    real = inspect.getsource
    inspect.getsource = lambda obj: read.append(getattr(obj, "__name__", obj)) or real(obj)
    import qt_user, feature_user
    print(json.dumps({"read": read, "title": feature_user.TITLE, "plain": qt_user.TITLE}))
    """
)


def test_importing_a_module_after_qt_reads_no_source_and_features_still_work(tmp_path):
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
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        env=cli_env({"QT_QPA_PLATFORM": "offscreen"}),
        cwd=str(REPO),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["read"] == []
    assert report["plain"] == "plain" and report["title"] == "snake"
