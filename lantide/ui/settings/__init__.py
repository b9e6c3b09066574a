"""The settings dialog and its pages, connections included."""
