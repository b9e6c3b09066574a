"""Fixtures of the installed-build tests."""

from tests.fakes.xvfb import xvfb  # noqa: F401
