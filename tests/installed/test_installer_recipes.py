"""The Windows and macOS recipes, checked here where they cannot run: the NSIS script
compiles with Debian's makensis against a placeholder bundle, the dmgbuild settings give
dmgbuild what it needs, and the CI workflow that builds and smoke-tests every platform is
valid GitHub Actions (its vendored schema, offline) with the matrix it promises."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

NSI = REPO / "packaging" / "windows" / "lantide.nsi"
WORKFLOW = REPO / ".github" / "workflows" / "desktop-builds.yml"
TESTS_WORKFLOW = REPO / ".github" / "workflows" / "tests.yml"


def _makensis(tmp_path: Path, *defines: str) -> subprocess.CompletedProcess:
    if shutil.which("makensis") is None:
        pytest.fail("makensis is not installed: apt-get install nsis (see README)")
    return subprocess.run(
        ["makensis", "-V2", *defines, str(NSI)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp_path),
    )


def test_nsis_installer_compiles_against_a_placeholder_bundle(tmp_path):
    bundle = tmp_path / "bundle"
    (bundle / "_internal" / "PySide6").mkdir(parents=True)
    (bundle / "lantide.exe").write_bytes(b"MZ placeholder")
    (bundle / "_internal" / "PySide6" / "Qt6Core.dll").write_bytes(b"\0" * 4096)
    out = tmp_path / "lantide-0.1.0-setup.exe"
    done = _makensis(tmp_path, "-DVERSION=0.1.0", f"-DBUNDLE={bundle}", f"-DOUTFILE={out}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert out.read_bytes()[:2] == b"MZ"  # a Windows executable
    script = NSI.read_text()
    # per-user: no administrator rights, installed under the user's programs folder
    assert "RequestExecutionLevel user" in script and "$LOCALAPPDATA\\Programs" in script
    assert 'CreateShortcut "$SMPROGRAMS' in script and "WriteUninstaller" in script
    assert 'Section "Uninstall"' in script and "DeleteRegKey HKCU" in script


def test_nsis_installer_refuses_to_build_without_a_bundle(tmp_path):
    done = _makensis(tmp_path, "-DVERSION=0.1.0")
    assert done.returncode != 0 and "pass -DBUNDLE" in done.stdout + done.stderr


def test_dmg_settings_give_dmgbuild_the_app_and_an_applications_link():
    settings: dict = {"defines": {"app": "/tmp/dist/Lantide.app"}}
    exec(
        compile(
            (REPO / "packaging" / "macos" / "dmg_settings.py").read_text(),
            "dmg_settings.py",
            "exec",
        ),
        settings,
    )
    assert settings["files"] == ["/tmp/dist/Lantide.app"]
    assert settings["symlinks"] == {"Applications": "/Applications"}
    assert set(settings["icon_locations"]) == {"Lantide.app", "Applications"}
    assert settings["format"] == "UDZO"


@pytest.mark.parametrize("workflow", [WORKFLOW, TESTS_WORKFLOW], ids=lambda p: p.name)
def test_workflow_is_valid_github_actions(workflow):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(workflow),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflow_builds_and_smoke_tests_every_platform():
    from ruamel.yaml import YAML

    flow = YAML(typ="safe").load(WORKFLOW.read_text())
    (job,) = flow["jobs"].values()
    matrix = {entry["os"]: entry for entry in job["strategy"]["matrix"]["include"]}
    assert set(matrix) == {"ubuntu-latest", "windows-latest", "macos-latest"}
    targets = {os_name: entry["target"] for os_name, entry in matrix.items()}
    assert targets == {
        "ubuntu-latest": "linux",
        "windows-latest": "windows",
        "macos-latest": "macos",
    }
    spec = importlib.util.spec_from_file_location("_lantide_build", REPO / "packaging" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    assert set(targets.values()) <= set(build.TARGETS)  # build.py knows each target
    runs = [step.get("run", "") for step in job["steps"]]
    assert any("packaging/requirements-build.txt" in r for r in runs)  # the pinned tools
    assert any("packaging/build.py --target ${{ matrix.target }}" in r for r in runs)
    assert any("packaging/smoke.py ${{ matrix.binary }}" in r for r in runs)
    for entry in matrix.values():  # the smoke test runs the binary each target builds
        assert entry["binary"].startswith("dist/")


def test_tests_workflow_runs_the_checks_on_every_python_and_the_slow_kinds_apart():
    from ruamel.yaml import YAML

    flow = YAML(typ="safe").load(TESTS_WORKFLOW.read_text())
    assert set(flow["on"]) == {"push", "pull_request"}
    jobs = flow["jobs"]
    assert jobs["tests"]["strategy"]["matrix"]["python-version"] == ["3.11", "3.12", "3.13"]
    runs = {name: " ".join(s.get("run", "") for s in job["steps"]) for name, job in jobs.items()}
    assert "ruff check && ruff format --check && mypy" in runs["tests"]
    assert '-m "not xvfb and not packaging"' in runs["tests"]
    assert "-m xvfb" in runs["xvfb"] and "-m packaging" in runs["installed-build"]
    lock = REPO / "requirements" / "test.lock"
    assert lock.is_file()
    for name, text in runs.items():  # every job installs the tested versions
        assert "-c requirements/test.lock" in text, name
