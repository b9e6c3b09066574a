"""The desktop app (PySide6). The only package that imports Qt."""

from lantide.ui.qt_features import skip_feature_scan

# before any other module of the app is imported, so none of them is scanned
skip_feature_scan()
