"""The ``xvfb`` fixture: a real X server (Xvfb) on a free display for the test, 1440x900."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest


@pytest.fixture
def xvfb() -> Iterator[str]:
    if shutil.which("Xvfb") is None:
        pytest.fail("Xvfb is not installed: apt-get install xvfb (see README)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1440x900x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as fh:
        display = ":" + fh.readline().strip()
    yield display
    proc.terminate()
    proc.wait(timeout=10)
