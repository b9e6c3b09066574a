"""Every start-up measure of the desktop app, applied from here and nowhere else.

Each measure is a plain function the app calls at a known moment (:func:`before_qt` by
``run_app`` before its first PySide6 import, :func:`collector_policy` and
:func:`start_up_done` once the window is idle); none runs as a side effect of an import.
``LANTIDE_NO_STARTUP_MEASURES=1`` turns all of them off, so a problem can be tried against
plain PySide6 and CPython behaviour.

- :mod:`.qt_features`: PySide6's per-import source scan answered without reading sources
  (touches ``shibokensupport.feature._mod_uses_pyside``; PySide6 is pinned below the next
  minor release in pyproject.toml for it).
- :mod:`.gc_pauses`: no automatic garbage collection until the first window is idle
  (:func:`before_qt` to :func:`start_up_done`), then long-lived objects frozen out of the
  collector's way (public ``gc`` API only).
"""

from __future__ import annotations

import os

from lantide.ui.startup.gc_pauses import GcPauses

SWITCH = "LANTIDE_NO_STARTUP_MEASURES"


def measures_enabled() -> bool:
    """False when the analyst or a developer turned every start-up measure off."""
    return os.environ.get(SWITCH, "").strip().lower() not in {"1", "true", "yes", "on"}


def before_qt() -> bool:
    """Run before the app's first ``import PySide6``; True if the feature scan was skipped."""
    if not measures_enabled():
        return False
    from lantide.ui.startup.gc_pauses import quiet_start_up
    from lantide.ui.startup.qt_features import skip_feature_scan

    quiet_start_up()
    return skip_feature_scan()


def start_up_done() -> None:
    """The first window is idle (or the app gave up waiting): automatic garbage collection
    runs again. Nothing if :func:`before_qt` paused none."""
    from lantide.ui.startup.gc_pauses import end_quiet_start_up

    end_quiet_start_up()


def collector_policy() -> GcPauses | None:
    """The app's collector policy, not yet installed; None when the measures are off."""
    return GcPauses() if measures_enabled() else None
