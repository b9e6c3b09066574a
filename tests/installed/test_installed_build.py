"""The installed desktop build, end to end (issue 15): build the Linux bundle and the .deb
with packaging/build.py, unpack the .deb into a temporary root (``dpkg -x``: the machine's
own packages are never touched), and run the installed binary as a user would: the
headless first session of packaging/smoke.py (``--version``, ``init --sample``, ``sql``,
``tab source-run``), a ``chat`` turn against the loopback OpenAI-compatible server, and
the desktop app under Xvfb until its main window is idle (screenshot in test-output/).

Building takes a few CPU-minutes; ``LANTIDE_PACKAGING_DIST`` names a dist folder that
already holds the .deb built from this checkout, to rerun the checks without building.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fakes.openai_server import FakeOpenAIServer, ToolCall, Turn

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.xvfb, pytest.mark.timeout(3600)]

BUDGET_MB = 250
OUTPUT = REPO / "test-output"


def _load(name: str):
    """A script of packaging/ as a module (the folder is not a package on purpose)."""
    spec = importlib.util.spec_from_file_location(
        f"_lantide_{name}", REPO / "packaging" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


smoke = _load("smoke")
build = _load("build")


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    prebuilt = os.environ.get("LANTIDE_PACKAGING_DIST")
    if prebuilt:
        dist = Path(prebuilt)
    else:
        # One build per run: under xdist this module's tests may land on several workers,
        # and two PyInstaller builds at once race on its shared cache (a failed strip).
        # The first worker builds under a lock in the run's own directory; the others wait
        # and take its .deb.
        import fcntl

        run_dir = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            run_dir = run_dir.parent  # pytest-N: this run's, shared by its workers
        base = run_dir / "installed-build"
        base.mkdir(exist_ok=True)
        dist = base / "dist"
        with (run_dir / "installed-build.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not list(dist.glob("lantide_*.deb")):
                _build_deb(dist, base)
    (found,) = dist.glob("lantide_*.deb")
    return found


def _build_deb(dist: Path, base: Path) -> None:
    done = subprocess.run(
        build.quick_deb_command(dist, base / "work"),
        capture_output=True,
        text=True,
        timeout=3000,
        cwd=str(REPO),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    print(done.stdout[-1500:])  # the size by component, in the test's output


@pytest.fixture(scope="module")
def installed(deb, tmp_path_factory) -> Path:
    """The .deb unpacked into a temporary root; returns that root."""
    root = tmp_path_factory.mktemp("root")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=600)
    return root


def _files(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


def test_the_deb_installs_a_desktop_app_within_the_size_budget(deb, installed):
    info = subprocess.run(
        ["dpkg-deb", "-f", str(deb), "Package", "Installed-Size", "Depends"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Package: lantide" in info and "libxcb-cursor0" in info
    assert os.readlink(installed / "usr/bin/lantide") == "/opt/lantide/lantide"
    desktop = (installed / "usr/share/applications/lantide.desktop").read_text()
    assert "Exec=lantide gui %f" in desktop and "application/x-lantide-workspace" in desktop
    assert (installed / "usr/share/mime/packages/lantide.xml").is_file()
    for size in (16, 48, 256):
        assert (installed / f"usr/share/icons/hicolor/{size}x{size}/apps/lantide.png").is_file()
    bundle = installed / "opt" / "lantide"
    parts = dict(build.sizes_by_component(bundle))
    total_mb = sum(parts.values()) / 1e6
    assert total_mb <= BUDGET_MB, (
        f"{total_mb:.1f} MB installed: {sorted(parts.items(), key=lambda p: -p[1])[:12]}"
    )
    assert not any(name.startswith("pyarrow") for name in parts)
    icu = next(bundle.rglob("libicudata.so.*"))
    assert icu.stat().st_size < 100_000  # the empty stub, not Qt's 31 MB of ICU data


def test_every_bundled_library_finds_what_it_links(installed):
    """The trimmed bundle (packaging/lantide.spec drops libraries) leaves no dangling link:
    each shared object resolves its libraries in the bundle or on the system (the .deb's
    Depends)."""
    internal = installed / "opt" / "lantide" / "_internal"
    env = {**os.environ, "LD_LIBRARY_PATH": str(internal)}
    missing = {}
    objects = [p for p in internal.rglob("*.so*") if p.is_file() and not p.is_symlink()]
    assert len(objects) > 100
    for path in objects:
        out = subprocess.run(
            ["ldd", str(path)], capture_output=True, text=True, env=env, timeout=60
        ).stdout
        lost = [line.split()[0] for line in out.splitlines() if "not found" in line]
        if lost:
            missing[str(path.relative_to(internal))] = lost
    assert missing == {}


def test_installed_binary_runs_a_first_session_headless(installed, tmp_path):
    bundle = installed / "opt" / "lantide"
    before = _files(bundle)
    binary = bundle / "lantide"
    result = smoke.smoke(binary, tmp_path)
    from lantide import __version__

    assert result["version"] == f"lantide {__version__}"
    assert result["sql"] == [[120_000, "2024-01-01"]]
    ran = {tab["tab"]: tab["status"] for tab in result["source_run"]["tabs"]}
    assert ran == {"clean_orders": "ran", "customer_quarters": "ran", "q3_churn_by_region": "ran"}
    assert _files(bundle) == before  # nothing written into the install folder
    # /usr/bin/lantide is a symlink into /opt/lantide: the bundle finds itself through one
    link = tmp_path / "bin" / "lantide"
    link.parent.mkdir()
    link.symlink_to(binary)
    env = smoke.isolated_env(tmp_path / "home")
    assert smoke.run(link, "--version", env=env).strip() == f"lantide {__version__}"


def test_installed_binary_answers_a_chat_turn(installed, tmp_path):
    binary = installed / "opt" / "lantide" / "lantide"
    env = smoke.isolated_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    ws = tmp_path / "ws"
    smoke.run(binary, "init", str(ws), "--sample", env=env)
    sql = "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY n DESC"
    with FakeOpenAIServer(background_reply="Order statuses") as server:
        server.script(
            Turn(tool_calls=[ToolCall("run_query", {"sql": sql, "result_label": "statuses"})]),
            Turn(text="Most orders are completed.\n[[QUERY_STEP]] Orders by status"),
        )
        out = smoke.run(
            binary,
            "chat",
            str(ws),
            "--json",
            "How do order statuses split?",
            env={**env, **server.env()},
        )
        server.assert_done()
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    returned = [e for e in events if e["event"] == "tool_returned"]
    assert [(e["tool"], e["ok"]) for e in returned] == [("run_query", True)]
    finished = [e for e in events if e["event"] == "turn_finished"]
    assert finished and finished[0]["reason"] == "answered"
    # the query ran in the installed build's DuckDB: its rows reached the model
    tool_result = next(m for m in server.chat_requests[1]["messages"] if m["role"] == "tool")
    assert "completed" in tool_result["content"]


def test_installed_gui_opens_its_main_window_on_x(installed, xvfb, tmp_path):
    binary = installed / "opt" / "lantide" / "lantide"
    env = smoke.isolated_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    ws = tmp_path / "ws"
    smoke.run(binary, "init", str(ws), "--sample", env=env)
    ready = tmp_path / "ready.json"
    env.update({"DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb", "LANTIDE_READY_FILE": str(ready)})
    app = subprocess.Popen(
        [str(binary), "gui", str(ws)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            if app.poll() is not None:
                pytest.fail(f"the installed gui exited with {app.returncode}: {app.stderr.read()}")
            if time.monotonic() > deadline:
                pytest.fail("the installed app's main window did not become idle in 120 s")
            time.sleep(0.1)
        stamps = json.loads(ready.read_text())
        assert stamps["pid"] == app.pid and stamps["shown_at"] <= stamps["idle_at"]
        tree = subprocess.run(
            ["xwininfo", "-root", "-tree"],
            capture_output=True,
            text=True,
            env={**os.environ, "DISPLAY": xvfb},
            timeout=10,
        ).stdout
        assert "Sample workspace — Lantide" in tree, tree
        time.sleep(1.0)  # let the explorer and the restored tabs paint
        OUTPUT.mkdir(exist_ok=True)
        shot = OUTPUT / "installed-build-main-window-xvfb.png"
        grab = subprocess.run(
            ["import", "-window", "root", str(shot)],
            env={**os.environ, "DISPLAY": xvfb},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert grab.returncode == 0, grab.stderr
        assert shot.stat().st_size > 10_000
        assert app.poll() is None, "the installed app exited while idle"
    finally:
        app.terminate()
        try:
            app.communicate(timeout=10)  # reaps it and closes its pipes
        except subprocess.TimeoutExpired:
            app.kill()
            app.communicate()
