"""The standing suite prints its figures at the end of a run (issue 28): tests tried and
failed per family (a file of tests/security). Checked on a small suite of its own, run by a
real pytest in a subprocess: one family passes, one fails once."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env

pytestmark = pytest.mark.security


@pytest.mark.slow  # a whole pytest run in a subprocess
def test_the_figures_count_tried_and_failed_per_family(tmp_path):
    suite = tmp_path / "security"
    suite.mkdir()
    (suite / "conftest.py").write_text(
        "from tests.security.conftest import pytest_terminal_summary  # noqa: F401\n"
    )
    (suite / "test_calm.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('n', range(3))\ndef test_ok(n):\n"
        "    assert n < 3\n"
    )
    (suite / "test_stormy.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('word', ['storm'])\ndef test_ok(word):\n"
        "    assert word.upper() == 'STORM'\n\n"
        "@pytest.mark.parametrize('word', ['storm'])\ndef test_misspelled(word):\n"
        "    assert word == 'stormy'  # fails on purpose: the family's one failure\n"
    )
    env = {**cli_env(), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=120,
    )
    out = done.stdout
    assert done.returncode == 1, out[-2000:]
    assert "security suite: tried / failed per family" in out
    lines = {line.split()[0]: line.split()[1::2] for line in out.splitlines() if "tried" in line}
    assert lines["calm"] == ["3", "0"]
    assert lines["stormy"] == ["2", "1"]
    assert lines["all"] == ["5", "1"]
