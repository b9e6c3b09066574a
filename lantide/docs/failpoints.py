"""Named crash points in the save sequence, for the crash-safety tests.

``LANTIDE_FAILPOINT=NAME`` in the environment of a process makes it kill itself with
SIGKILL when it reaches :func:`failpoint` ``(NAME)``: no cleanup, no ``finally``, exactly
like a power cut or ``kill -9``. Unset (always, outside those tests), a failpoint is one
comparison against ``None``.
"""

from __future__ import annotations

import os
import signal

ENV_VAR = "LANTIDE_FAILPOINT"
_armed: str | None = os.environ.get(ENV_VAR) or None


def failpoint(name: str) -> None:
    if _armed is not None and _armed == name:
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
        os._exit(137)  # pragma: no cover - SIGKILL does not return
