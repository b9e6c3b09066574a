"""A PyInstaller run-time hook that runs before PyInstaller's own PySide6 hook.

That hook imports ``PySide6.QtCore`` before the app's ``main`` (to set Qt's paths), which is
PySide6's first import: shiboken compiles its support code and regular expressions then.
Importing ``lantide.ui`` first opens Lantide's caches of them around that import
(``lantide/ui/qt_support_cache.py``), so the installed build is spared the 60-80 ms the
development install is spared. Custom run-time hooks run before PyInstaller's (see
``Analysis(runtime_hooks=...)`` in lantide.spec). Should it fail, the app starts as before.
"""

import contextlib

with contextlib.suppress(Exception):  # the app imports it again and reports what is wrong
    import lantide.ui  # noqa: F401
