"""Hand a verified download to the platform's installer.

- ``linux-deb``: the ``.deb`` is opened with ``xdg-open``, i.e. the desktop's software
  installer (GNOME Software, Discover, gdebi), which shows the package and asks for the
  administrator's password; Lantide never runs apt or pkexec itself. Without a desktop
  installer the message gives the command (``sudo apt install ./FILE.deb``).
- ``windows``: the per-user installer ``.exe`` is started; the app should then quit.
- ``macos``: the ``.dmg`` is opened (``open``): the user drags the app to Applications.
- ``linux-tar``: the tarball is unpacked beside the running version into
  ``ROOT/lantide-VERSION/`` and marked as next (``ROOT/.lantide-next``); at the next start
  :func:`apply_pending_switch` flips ``ROOT/current`` to it (a symlink renamed over the
  old one, atomic), so ``ROOT/current/lantide`` starts the new version and the old
  folder stays for going back. ROOT is the folder that holds the unpacked tarball.
- ``source`` (pip or a checkout): nothing is installed; update with pip.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lantide.update.errors import InstallError
from lantide.update.keys import is_frozen

KINDS = ("linux-deb", "linux-tar", "windows", "macos", "source")
DEB_PREFIX = Path("/opt/lantide")  # where the .deb puts the bundle (packaging/build.py)
CURRENT = "current"
NEXT = ".lantide-next"

Launcher = Callable[[Sequence[str]], object]


@dataclass(frozen=True)
class InstallOutcome:
    message: str
    quit_to_finish: bool = False  # the installer needs the app closed (Windows)
    restart_to_finish: bool = False  # the new version starts at the next start
    tar_root: Path | None = None  # a tarball install: where restart_into switches


def install_kind() -> str:
    """How this copy of Lantide was installed."""
    if not is_frozen():
        return "source"
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    exe = Path(sys.executable).resolve()
    return "linux-deb" if DEB_PREFIX in exe.parents else "linux-tar"


def machine() -> str:
    name = platform.machine().lower()
    return {"amd64": "x86_64", "x64": "x86_64", "aarch64": "arm64"}.get(name, name)


def asset_key(kind: str | None = None, arch: str | None = None) -> str:
    """The feed's asset name for this platform: ``linux-tar-x86_64``, ``windows-x86_64``..."""
    return f"{kind or install_kind()}-{arch or machine()}"


def tar_install_root() -> Path:
    """ROOT of a tarball install: the folder above the bundle the running app is in."""
    return Path(sys.executable).resolve().parent.parent


def _default_launcher(command: Sequence[str]) -> object:
    return subprocess.Popen(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def install_update(
    path: Path,
    version: str,
    *,
    kind: str | None = None,
    install_root: Path | None = None,
    launcher: Launcher | None = None,
) -> InstallOutcome:
    """Hand the verified file ``path`` (Lantide ``version``) to the installer of ``kind``."""
    kind = kind or install_kind()
    launcher = launcher or _default_launcher
    path = Path(path)
    if kind == "linux-tar":
        folder = stage_tarball(path, install_root or tar_install_root(), version)
        return InstallOutcome(
            f"Lantide {version} is unpacked in {folder}. It takes over when you restart "
            f"Lantide (start it from {folder.parent / CURRENT / 'lantide'}); this version "
            f"stays in its folder.",
            restart_to_finish=True,
            tar_root=folder.parent,
        )
    if kind == "source":
        raise InstallError(
            f"This copy of Lantide runs from Python (pip or a source checkout), so the "
            f"installer was not run; it is kept in {path}.",
            hint="Update with pip (pip install --upgrade lantide) or git pull.",
        )
    commands = {
        "linux-deb": ["xdg-open", str(path)],
        "windows": [str(path)],
        "macos": ["open", str(path)],
    }
    if kind not in commands:
        raise InstallError(
            f"Unknown kind of installation {kind!r}; the download is kept in {path}.",
            hint="Install it by hand.",
        )
    try:
        launcher(commands[kind])
    except OSError as exc:
        manual = {
            "linux-deb": f"sudo apt install {path}",
            "windows": f"double-click {path}",
            "macos": f"open {path}",
        }[kind]
        raise InstallError(
            f"The installer could not be started ({exc.strerror or exc}); "
            f"the download is kept in {path}.",
            hint=f"Install it by hand: {manual}",
        ) from None
    messages = {
        "linux-deb": f"The package for Lantide {version} was handed to your system's software "
        f"installer; confirm there, then restart Lantide. If nothing opened: "
        f"sudo apt install {path}",
        "windows": f"The installer of Lantide {version} has started: Lantide closes so it "
        f"can replace this version.",
        "macos": f"The disk image of Lantide {version} is open: drag Lantide to "
        f"Applications, replacing this version, then start it again.",
    }
    return InstallOutcome(
        messages[kind], quit_to_finish=kind == "windows", restart_to_finish=kind != "windows"
    )


def stage_tarball(archive: Path, root: Path, version: str) -> Path:
    """Unpack ``archive`` into ``root/lantide-VERSION`` (whole or not at all) and mark it as
    the version the next start switches to. The running version is not touched."""
    root = Path(root)
    target = root / f"lantide-{version}"
    if target.exists() or target.is_symlink():
        raise InstallError(
            f"{target} already exists; the update was not unpacked over it.",
            hint=f"Move {target} aside (or delete it if it is a leftover), "
            f"then check for updates again.",
        )
    unpacking = root / f".lantide-{version}.unpacking-{os.getpid()}"
    try:
        unpacking.mkdir(parents=True)
    except OSError as exc:
        raise InstallError(
            f"Lantide cannot write beside itself in {root} ({exc.strerror or exc}), "
            f"so the update was not unpacked; the download is kept in {archive}.",
            hint=f"Unpack it yourself where you have Lantide: tar -xzf {archive} -C {root}",
        ) from None
    try:
        try:
            with tarfile.open(archive, "r:*") as tar:
                tar.extractall(unpacking, filter="data")  # no links or paths out of it
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise InstallError(
                f"The update {archive} could not be unpacked: {exc}; nothing was changed.",
                hint="Try the update again.",
            ) from None
        tops = list(unpacking.iterdir())
        if (
            len(tops) != 1
            or not tops[0].is_dir()
            or not ((tops[0] / "lantide").is_file() or (tops[0] / "lantide.exe").is_file())
        ):
            raise InstallError(
                f"The update {archive} is not a Lantide bundle (one folder "
                f"holding the lantide program); nothing was changed.",
                hint="Download Lantide from its web site.",
            )
        try:
            os.rename(tops[0], target)
        except OSError:  # another Lantide unpacked the same version meanwhile
            raise InstallError(
                f"{target} appeared while the update was unpacked; the update "
                f"was not unpacked over it.",
                hint="Check for updates again in a moment.",
            ) from None
    finally:
        shutil.rmtree(unpacking, ignore_errors=True)  # our own temporary folder
    try:
        _point(root / NEXT, target.name)
    except OSError as exc:
        raise InstallError(
            f"Lantide {version} is unpacked in {target}, but it could not be "
            f"marked for the next start ({exc.strerror or exc}).",
            hint=f"Start it from {target / 'lantide'}.",
        ) from None
    return target


def _point(link: Path, target_name: str) -> None:
    """Make ``link`` a relative symlink to ``target_name``, replacing it atomically."""
    temporary = link.with_name(f"{link.name}.new-{os.getpid()}")
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(target_name, target_is_directory=True)
    os.replace(temporary, link)


def restart_into(root: Path, launcher: Launcher | None = None) -> Path:
    """Switch a tarball install to its staged version and start it; the caller quits."""
    apply_pending_switch(root)
    program = Path(root) / CURRENT / "lantide"
    try:
        (launcher or _default_launcher)([str(program)])
    except OSError as exc:
        raise InstallError(
            f"{program} could not be started ({exc.strerror or exc}).",
            hint=f"Start {program} yourself.",
        ) from None
    return program


def apply_pending_switch(root: Path) -> Path | None:
    """At start-up: when an update was staged, make ``root/current`` point to it. Returns
    the folder switched to, or None when there was nothing to do."""
    root = Path(root)
    pending = root / NEXT
    if not pending.is_symlink():
        return None
    name = os.readlink(pending)
    folder = root / name
    if "/" in name or not (folder / "lantide").is_file() and not (folder / "lantide.exe").is_file():
        pending.unlink()  # points nowhere usable: forget it, keep the current version
        return None
    current = root / CURRENT
    if current.is_symlink() or not current.exists():
        os.replace(pending, current)  # atomic: current is the old or the new, never neither
        return folder
    # a real folder named "current" is the user's: leave both alone
    return None
