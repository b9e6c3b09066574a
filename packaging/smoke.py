"""Smoke test of a built Lantide binary, headless: ``python packaging/smoke.py BINARY``.

Runs what a first session does from the command line, in a fresh temporary workspace and
with the user's folders (config, data, cache) redirected to temporary ones: ``--version``,
``init --sample``, ``sql`` on the sample's orders, and ``tab source-run`` of the sample
project's last tab (the whole upstream chain). Exits non-zero with what failed. Used by the
CI workflow on Linux, Windows and macOS, and by tests/packaging on Linux.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SAMPLE_PROJECT, SAMPLE_TAB = "q3-churn", "q3_churn_by_region"


def isolated_env(home: Path, extra: dict | None = None) -> dict:
    """The environment with every per-user folder (XDG, HOME, APPDATA) under ``home``."""
    env = dict(os.environ)
    for key, sub in (
        ("HOME", ""),
        ("USERPROFILE", ""),
        ("APPDATA", "AppData/Roaming"),
        ("LOCALAPPDATA", "AppData/Local"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ):
        env[key] = str(home / sub)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    for key in ("PYTHONPATH", "PYTHONHOME"):  # the bundle must not see a development tree
        env.pop(key, None)
    env.update(extra or {})
    return env


def run(binary: Path, *args: str, env: dict, timeout: float = 300) -> str:
    done = subprocess.run(
        [str(binary), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=env["HOME"],
    )
    if done.returncode != 0:
        raise SystemExit(
            f"smoke: `lantide {' '.join(args)}` exited {done.returncode}\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        )
    return done.stdout


def smoke(binary: Path, workdir: Path) -> dict:
    """Run the checks; returns what each printed (parsed where it is JSON)."""
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = isolated_env(home)
    ws = workdir / "analysis"
    out = {"version": run(binary, "--version", env=env).strip()}
    run(binary, "init", str(ws), "--sample", env=env)
    sql = json.loads(
        run(
            binary,
            "sql",
            str(ws),
            "--json",
            "SELECT count(*) AS n, min(order_date)::VARCHAR AS first FROM orders",
            env=env,
        )
    )
    out["sql"] = sql["preview"]
    source_run = json.loads(
        run(binary, "tab", "source-run", "--json", str(ws), SAMPLE_PROJECT, SAMPLE_TAB, env=env)
    )
    out["source_run"] = source_run
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    binary = Path(argv[0]).resolve()
    with tempfile.TemporaryDirectory(prefix="lantide-smoke-") as tmp:
        result = smoke(binary, Path(tmp))
    rows = result["sql"]
    if not rows or rows[0][0] != 120_000:
        raise SystemExit(f"smoke: the sample's orders are not 120,000 rows: {rows}")
    ran = {tab["tab"]: tab["status"] for tab in result["source_run"]["tabs"]}
    if not ran or set(ran.values()) != {"ran"}:
        raise SystemExit(f"smoke: Source Run of {SAMPLE_TAB} did not run every tab: {ran}")
    print(f"smoke: {result['version']}; sql {rows[0]}; source-run ran {', '.join(ran)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
