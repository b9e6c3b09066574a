"""Fake Lantide bundles and tarballs for the installer tests."""

import io
import tarfile
from pathlib import Path


def make_bundle(root: Path, version: str) -> Path:
    folder = root / f"lantide-{version}"
    folder.mkdir(parents=True)
    (folder / "lantide").write_text(f"#!/bin/sh\necho {version}\n")
    (folder / "lantide").chmod(0o755)
    return folder


def make_tarball(path: Path, version: str, extra: dict[str, bytes] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        members = {
            f"lantide-{version}/lantide": f"#!/bin/sh\necho {version}\n".encode(),
            f"lantide-{version}/_internal/lib.so": b"\0" * 100,
            **(extra or {}),
        }
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return path
