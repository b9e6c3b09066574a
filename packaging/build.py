"""Build Lantide's installed desktop bundle: ``python packaging/build.py [--target T]``.

Targets:

- ``linux-dir``: a PyInstaller one-folder bundle in ``dist/lantide/``, its ICU data
  replaced by an empty stub (packaging/linux/icudata-stub.c, compiled with gcc);
- ``tar``: that folder as ``dist/lantide-VERSION-linux-ARCH.tar.gz`` (portable);
- ``deb``: ``dist/lantide_VERSION_ARCH.deb``: the bundle in /opt/lantide, ``lantide`` on
  PATH, a desktop entry, the icon in the sizes desktops want, and the MIME type of a
  workspace's marker file (packaging/linux/); removing the package removes all of it;
- ``linux``: both the ``.tar.gz`` and the ``.deb``;
- ``windows`` (on Windows): ``dist/lantide-VERSION-setup.exe``, the NSIS installer of
  packaging/windows/lantide.nsi (per-user, Start-menu entry, uninstaller); needs makensis;
- ``macos`` (on macOS): ``dist/Lantide.app`` and ``dist/Lantide-VERSION.dmg`` (dmgbuild,
  packaging/macos/dmg_settings.py).

It checks that the pinned build tools (packaging/requirements-build.txt) are the ones
installed, builds from the checkout it lives in, and prints the size of what it made by
component. This folder has no ``__init__.py`` on purpose: a package named ``packaging``
would shadow the widely used library of that name.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HERE = REPO / "packaging"
TARGETS = {
    "linux-dir": "linux",
    "tar": "linux",
    "deb": "linux",
    "linux": "linux",
    "windows": "win32",
    "macos": "darwin",
}
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
# The desktop libraries the bundle leaves to the system (lantide.spec's SYSTEM_LIBS) and
# those Qt's platform plugins link.
DEB_DEPENDS = (
    "libc6, libstdc++6, libgcc-s1, libgl1, libegl1, libglib2.0-0, libdbus-1-3, "
    "libfontconfig1, "
    "libfreetype6, libpng16-16, libxkbcommon-x11-0, libx11-xcb1, libxcb-cursor0, "
    "libxcb-icccm4, libxcb-image0, libxcb-keysyms1, libxcb-randr0, "
    "libxcb-render-util0, libxcb-render0, libxcb-shape0, libxcb-shm0, libxcb-sync1, "
    "libxcb-util1, libxcb-glx0, libxcb-xfixes0, libxcb-xkb1, libwayland-client0, "
    "libwayland-cursor0, libzstd1, unixodbc"
)


def pinned_tools() -> dict[str, str]:
    pins = {}
    for line in (HERE / "requirements-build.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[name.strip().lower()] = version.strip()
    return pins


def check_tools() -> None:
    from importlib.metadata import PackageNotFoundError, version

    wrong = []
    for name, wanted in pinned_tools().items():
        try:
            found = version(name)
        except PackageNotFoundError:
            found = None
        if found != wanted:
            wrong.append(f"{name} {found or 'missing'} (pinned {wanted})")
    if wrong:
        raise SystemExit(
            "build: the pinned build tools are not installed: "
            + ", ".join(wrong)
            + f"\n  pip install -r {HERE / 'requirements-build.txt'}"
        )


def lantide_version() -> str:
    sys.path.insert(0, str(REPO))
    from lantide import __version__

    return __version__


def build_dir(dist: Path, work: Path) -> Path:
    env = {**os.environ, "LANTIDE_REPO": str(REPO), "LANTIDE_VERSION": lantide_version()}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--clean",
            "--distpath",
            str(dist),
            "--workpath",
            str(work),
            str(HERE / "lantide.spec"),
        ],
        check=True,
        env=env,
    )
    return dist / "lantide"


def build_tar(bundle: Path, dist: Path, version: str) -> Path:
    arch = platform.machine().lower()
    out = dist / f"lantide-{version}-linux-{arch}.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        tar.add(bundle, arcname=f"lantide-{version}")
    return out


def render_icons(target: Path) -> None:
    """The app icon as PNG in the sizes desktops ask for, plus the SVG itself."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    svg = REPO / "resources" / "icons" / "lantide-app.svg"
    app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(svg))
    for size in ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        out = target / "usr/share/icons/hicolor" / f"{size}x{size}" / "apps" / "lantide.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        image.save(str(out))
    scalable = target / "usr/share/icons/hicolor/scalable/apps/lantide.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, scalable)
    del app


def build_deb(bundle: Path, dist: Path, version: str, compression: str = "xz") -> Path:
    arch = subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
    ).stdout.strip()
    stage = dist / "deb-root"
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(bundle, stage / "opt" / "lantide", symlinks=True)
    (stage / "usr/bin").mkdir(parents=True)
    (stage / "usr/bin/lantide").symlink_to("/opt/lantide/lantide")
    linux = HERE / "linux"
    for source, target in (
        ("lantide.desktop", "usr/share/applications/lantide.desktop"),
        ("lantide-mime.xml", "usr/share/mime/packages/lantide.xml"),
    ):
        (stage / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(linux / source, stage / target)
    render_icons(stage)
    control = stage / "DEBIAN"
    control.mkdir()
    installed_kb = (
        sum(p.stat().st_size for p in stage.rglob("*") if p.is_file() and not p.is_symlink())
        // 1024
    )
    (control / "control").write_text(
        f"Package: lantide\nVersion: {version}\nArchitecture: {arch}\n"
        f"Maintainer: The Lantide team <team@lantide.invalid>\nInstalled-Size: {installed_kb}\n"
        f"Depends: {DEB_DEPENDS}\nSection: science\nPriority: optional\n"
        "Description: desktop workbench for data analysts who work with an AI agent\n"
        " Plans and Reports in Markdown with annotations, SQL tabs on an embedded DuckDB,\n"
        " and an agent that shows its work in an auditable step ledger.\n"
    )
    for script in ("postinst", "postrm"):
        shutil.copyfile(linux / script, control / script)
        (control / script).chmod(0o755)
    out = dist / f"lantide_{version}_{arch}.deb"
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", str(stage), str(out)],
        check=True,
    )
    return out


def stub_icu_data(bundle: Path) -> list[Path]:
    """Replace Qt's ICU data library (31 MB) by ICU's empty "stubdata", built here under
    the same soname and versioned symbol (see packaging/linux/icudata-stub.c for why Qt
    runs without it). Returns the libraries replaced."""
    import re

    replaced = []
    for lib in sorted(bundle.rglob("libicudata.so.*")):
        if lib.is_symlink() or not (match := re.fullmatch(r"libicudata\.so\.(\d+)", lib.name)):
            continue
        major = match.group(1)
        stub = lib.with_name(lib.name + ".stub")
        subprocess.run(
            [
                "gcc",
                "-shared",
                "-fPIC",
                "-O2",
                "-s",
                f"-DICUDATA_SYMBOL=icudt{major}_dat",
                f"-Wl,-soname,{lib.name}",
                "-o",
                str(stub),
                str(HERE / "linux" / "icudata-stub.c"),
            ],
            check=True,
        )
        os.replace(stub, lib)
        replaced.append(lib)
    return replaced


def build_windows(bundle: Path, dist: Path, version: str) -> Path:
    out = dist / f"lantide-{version}-setup.exe"
    subprocess.run(
        [
            "makensis",
            "-V2",
            f"-DVERSION={version}",
            f"-DBUNDLE={bundle}",
            f"-DOUTFILE={out}",
            str(HERE / "windows" / "lantide.nsi"),
        ],
        check=True,
    )
    return out


def build_dmg(app: Path, dist: Path, version: str) -> Path:
    out = dist / f"Lantide-{version}.dmg"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "dmgbuild",
            "-s",
            str(HERE / "macos" / "dmg_settings.py"),
            "-D",
            f"app={app}",
            "Lantide",
            str(out),
        ],
        check=True,
    )
    return out


def sizes_by_component(bundle: Path, split: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    """Bytes per top-level entry of the bundle's library folder (symlinks not counted),
    and the executable (which carries the compressed Python modules, PYZ); an entry named
    in ``split`` is broken down one level further (``PySide6/Qt``)."""
    internal = bundle / "_internal"
    root = internal if internal.is_dir() else bundle
    totals: dict[str, int] = {}
    for path in bundle.iterdir():
        if path.is_file() and not path.is_symlink() and root != bundle:
            totals[f"{path.name} (executable and Python modules)"] = path.stat().st_size
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            parts = path.relative_to(root).parts
            depth = 1
            while depth < len(parts) and "/".join(parts[:depth]) in split:
                depth += 1
            part = "/".join(parts[:depth])
            totals[part] = totals.get(part, 0) + path.stat().st_size
    return sorted(totals.items(), key=lambda item: -item[1])


QT_SPLIT = ("PySide6", "PySide6/Qt", "PySide6/Qt/lib", "PySide6/Qt/plugins")


def report(bundle: Path, extra: list[Path]) -> None:
    parts = sizes_by_component(bundle)
    total = sum(size for _name, size in parts)
    print(f"\n{bundle}: {total / 1e6:.1f} MB installed")
    for name, size in parts[:15]:
        print(f"  {size / 1e6:8.1f} MB  {name}")
    rest = sum(size for _name, size in parts[15:])
    print(f"  {rest / 1e6:8.1f} MB  ({len(parts) - 15} more)")
    qt = [
        (n, size)
        for n, size in sizes_by_component(bundle, QT_SPLIT)
        if n.startswith("PySide6") and size >= 1_000_000
    ]
    print(
        "  of which PySide6: " + ", ".join(f"{n.split('/')[-1]} {size / 1e6:.1f}" for n, size in qt)
    )
    for path in extra:
        print(f"{path}: {path.stat().st_size / 1e6:.1f} MB")


def quick_deb_command(dist: Path, work: Path) -> list[str]:
    """The command that builds a quick (gzip) ``.deb`` of this checkout into ``dist``,
    PyInstaller working in ``work``: what tests/installed and the install benchmark run,
    each in a process of its own."""
    return [
        sys.executable,
        str(HERE / "build.py"),
        "--target",
        "deb",
        "--deb-compression",
        "gzip",
        "--dist",
        str(dist),
        "--work",
        str(work),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=list(TARGETS), default="linux-dir")
    parser.add_argument("--dist", type=Path, default=REPO / "dist")
    parser.add_argument("--work", type=Path, default=REPO / "build" / "pyinstaller")
    parser.add_argument(
        "--bundle", type=Path, help="package this already built bundle instead of building one"
    )
    parser.add_argument(
        "--deb-compression",
        choices=("xz", "gzip"),
        default="xz",
        help="xz: the smallest .deb (a few CPU-minutes); gzip: a quick one",
    )
    args = parser.parse_args(argv)
    if not sys.platform.startswith(TARGETS[args.target]):
        raise SystemExit(f"build: target {args.target} builds on {TARGETS[args.target]} only")
    if args.bundle:
        bundle = args.bundle.resolve()
    else:
        check_tools()
        bundle = build_dir(args.dist, args.work)
        if sys.platform.startswith("linux"):
            stub_icu_data(bundle)
    args.dist.mkdir(parents=True, exist_ok=True)
    version = lantide_version()
    extra = []
    if args.target in ("tar", "linux"):
        extra.append(build_tar(bundle, args.dist, version))
    if args.target in ("deb", "linux"):
        extra.append(build_deb(bundle, args.dist, version, args.deb_compression))
    if args.target == "windows":
        extra.append(build_windows(bundle, args.dist, version))
    if args.target == "macos":
        extra.append(build_dmg(args.dist / "Lantide.app", args.dist, version))
    report(bundle, extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
