"""The root of Lantide's exceptions.

Every error a user can cause derives from :class:`LantideError`. Its message names the
file or value at fault and its ``hint`` says what to do; the command line prints both
and exits with code 1, the desktop app shows them in a message bar.
"""

from __future__ import annotations

from pathlib import Path
from typing import NotRequired, TypedDict


class ErrorDict(TypedDict):
    """An error as a tool result or a JSON answer (:meth:`LantideError.to_dict`)."""

    error: str  # the code
    message: str
    hint: NotRequired[str]


class LantideError(Exception):
    """An error the user can act on. ``code`` is stable for tools and tests."""

    code = "LANTIDE_ERROR"

    def __init__(self, message: str, *, hint: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n{self.hint}"
        return self.message

    def to_dict(self) -> ErrorDict:
        out: ErrorDict = {"error": self.code, "message": self.message}

        if self.hint:
            out["hint"] = self.hint
        return out


class UsageError(LantideError):
    """Bad arguments; the command line exits with code 2."""

    code = "USAGE"


class FileProblem(LantideError):
    """A user file that is missing or cannot be read. It is never rewritten."""

    def __init__(
        self, path: Path | str, problem: str, *, hint: str | None = None, code: str = "FILE_PROBLEM"
    ):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}", hint=hint, code=code)


class MissingFileError(FileProblem):
    def __init__(self, path: Path | str, what: str = "file", *, hint: str | None = None):
        super().__init__(path, f"{what} not found", hint=hint, code="FILE_MISSING")


class CorruptFileError(FileProblem):
    def __init__(self, path: Path | str, problem: str, *, hint: str | None = None):
        super().__init__(
            path,
            problem,
            hint=hint or "The file was left as it is. Fix it in a text editor, or move it aside.",
            code="FILE_CORRUPT",
        )
