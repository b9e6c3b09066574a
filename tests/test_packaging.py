"""A non-editable install finds prompts/ and resources/ as package data."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.slow  # pip builds and installs the wheel in a subprocess: 1.5-2 s
def test_wheel_install_ships_prompts_and_resources(tmp_path):
    target = tmp_path / "site"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--target",
            str(target),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_NO_INPUT": "1"},
    )
    assert build.returncode == 0, build.stderr
    probe = (
        "import json, lantide, lantide.package_data as d, lantide.tokens as t\n"
        "print(json.dumps({'pkg': lantide.__file__, 'prompts': str(d.prompts_dir()),\n"
        "  'resources': str(d.resources_dir()),\n"
        "  'tokenizer': d.resource_path('tokenizer', 'cl100k_base.tiktoken.gz').is_file(),\n"
        "  'prompt_files': sorted(p.name for p in d.prompts_dir().iterdir()),\n"
        "  'tokens': t.count_tokens('hello world')}))\n"
    )
    # Run from an empty folder with only the installed copy (and the venv's deps) on the path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["pkg"].startswith(str(target))
    assert info["prompts"] == str(target / "lantide" / "_data" / "prompts")
    assert info["resources"] == str(target / "lantide" / "_data" / "resources")
    assert info["tokenizer"] is True
    assert "README.md" in info["prompt_files"]
    assert info["tokens"] == 2
    # the console script is declared
    entry_points = list(target.glob("lantide-*.dist-info/entry_points.txt"))
    assert entry_points and "lantide = lantide.cli.main:main" in entry_points[0].read_text()
