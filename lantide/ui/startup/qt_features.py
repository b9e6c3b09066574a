"""PySide6 without its per-import source scan.

PySide6 hooks every import for its optional ``__feature__`` switches (``snake_case``,
``true_property``): after each module is imported, ``shibokensupport.feature`` reads that
module's whole source file to see whether it mentions "PySide6", and remembers the answer
(0: a PySide module with no feature; -1: a module it ignores). Lantide selects no feature, so
for Qt both answers mean the same (no switch), while reading the ~140 sources imported after
Qt cost 45-55 ms of every start-up (more than a tenth of what the window adds to a bare Qt
window). :func:`skip_feature_scan` answers "ignore" without reading anything. A module that
does select a feature (``from __feature__ import ...``) is registered by PySide6's
``feature_import``, which this does not touch. A PySide6 without that internal is left as
it is.
"""

from __future__ import annotations

import sys
from types import ModuleType


def _no_feature(_module: ModuleType) -> bool:
    return False


def skip_feature_scan() -> bool:
    """Load PySide6 and turn its per-import source scan off; True if it was there to turn."""
    import PySide6  # noqa: F401  (starts shiboken, which installs the import hook)

    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        return False
    feature._mod_uses_pyside = _no_feature  # type: ignore[attr-defined]
    return True
