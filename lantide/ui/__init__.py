"""The desktop app (PySide6). The only package that imports Qt."""

from lantide.ui.qt_features import skip_feature_scan
from lantide.ui.qt_support_cache import cached_support_code
from lantide.workspace.paths import user_cache_dir

# Before any other module of the app is imported, so none of them is scanned; PySide6's
# first import compiles its support code, which the cache answers.
with cached_support_code(user_cache_dir()) as qt_support_code:
    skip_feature_scan()
