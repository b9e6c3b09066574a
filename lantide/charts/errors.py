"""The charts layer's error: a :class:`LantideError` whose message names the chart file."""

from __future__ import annotations

from lantide.errors import LantideError


class ChartError(LantideError):
    """A chart file that cannot be read, checked, resolved or drawn.

    ``code``: ``CHART_INVALID_JSON``, ``CHART_INVALID_SPEC``, ``CHART_EXTERNAL_DATA``,
    ``CHART_NO_DATA``, ``CHART_MISSING_TABLE``, ``CHART_MISSING_STEP``, ``CHART_RENDER``,
    ``CHART_TOO_BIG``, ``CHART_EXISTS``, ``CHART_BAD_NAME``. ``path`` and ``line`` (1-based)
    say where, when known."""

    code = "CHART_INVALID"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        code: str | None = None,
        path: str | None = None,
        line: int | None = None,
    ):
        super().__init__(message, hint=hint, code=code)
        self.path = path
        self.line = line
