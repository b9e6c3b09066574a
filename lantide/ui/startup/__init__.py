"""Every start-up measure of the desktop app, applied from here and nowhere else.

Each measure is a plain function the app calls at a known moment (:func:`before_qt` by
``run_app`` before its first PySide6 import, :func:`collector_policy` once the window is idle);
none runs as a side effect of an import. ``LANTIDE_NO_STARTUP_MEASURES=1`` turns all of
them off, so a problem can be tried against plain PySide6 and CPython behaviour.

- :mod:`.qt_features`: PySide6's per-import source scan answered without reading sources
  (touches ``shibokensupport.feature._mod_uses_pyside``; PySide6 is pinned below the next
  minor release in pyproject.toml for it).
- :mod:`.gc_pauses`: long-lived objects frozen out of the garbage collector's way (public
  ``gc`` API only).
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
    from lantide.ui.startup.qt_features import skip_feature_scan

    return skip_feature_scan()


def collector_policy() -> GcPauses | None:
    """The app's collector policy, not yet installed; None when the measures are off."""
    return GcPauses() if measures_enabled() else None
