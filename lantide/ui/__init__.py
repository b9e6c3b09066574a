"""The desktop app (PySide6). The only package that imports Qt.

Importing it does nothing else: the start-up measures are applied explicitly by
``lantide.ui.app.run_app`` (see :mod:`lantide.ui.startup`).
"""
