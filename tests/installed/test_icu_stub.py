"""The installed build swaps Qt's 31 MB ICU data for ICU's empty stubdata
(packaging/linux/icudata-stub.c). Qt must draw and wrap text exactly as with the real
data, and keep its case mapping: the stub is loaded in place of the real library (same
soname) in a fresh interpreter and the results compared."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

_PROBE = r"""
import hashlib, json
from PySide6.QtCore import QLocale, QRectF, Qt, QTimeZone
from PySide6.QtGui import QGuiApplication, QImage, QPainter
app = QGuiApplication([])
image = QImage(900, 220, QImage.Format.Format_ARGB32)
image.fill(0xFFFFFFFF)
painter = QPainter(image)
painter.drawText(QRectF(0, 0, 900, 220), Qt.TextFlag.TextWordWrap,
                 "Grüße Ünïcødé – İstanbul ĳ ﬁ — 東京 مرحبا שלום ภาษาไทย 1,234.5 " * 3)
painter.end()
maps = open("/proc/self/maps").read()
print(json.dumps({
    "pixels": hashlib.sha256(bytes(image.constBits())).hexdigest(),
    "upper": [QLocale("tr_TR").toUpper("istanbul"), QLocale("de_DE").toUpper("straße")],
    "lower": QLocale("en_US").toLower("ÄÖÜ ΣΑΣ"),
    "zone": QTimeZone(b"Europe/Berlin").isValid(),
    "real_icu_data": "PySide6/Qt/lib/libicudata" in maps,
}))
"""


def _probe(env: dict) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_qt_draws_and_maps_text_the_same_with_the_icu_stub(tmp_path):
    import PySide6

    if shutil.which("gcc") is None:
        pytest.fail("gcc is not installed: apt-get install gcc (see README)")
    (real,) = (Path(PySide6.__file__).parent / "Qt" / "lib").glob("libicudata.so.*")
    major = real.name.rsplit(".", 1)[1]
    stub = tmp_path / real.name
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-O2",
            f"-DICUDATA_SYMBOL=icudt{major}_dat",
            f"-Wl,-soname,{real.name}",
            "-o",
            str(stub),
            str(REPO / "packaging" / "linux" / "icudata-stub.c"),
        ],
        check=True,
    )
    assert stub.stat().st_size < 100_000
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    with_data = _probe(env)
    with_stub = _probe({**env, "LD_PRELOAD": str(stub)})
    assert with_data["real_icu_data"] and not with_stub["real_icu_data"]  # the stub was used
    assert with_stub["pixels"] == with_data["pixels"]
    assert with_stub["upper"] == with_data["upper"] == ["İSTANBUL", "STRASSE"]
    assert with_stub["lower"] == with_data["lower"]
    assert with_stub["zone"] is True
