"""The ``lantide`` command line: one engine shared with the desktop app."""
