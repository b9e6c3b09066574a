"""Helpers for the knowledge tests: real Markdown files in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from lantide.knowledge import KnowledgeBase


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    """(user knowledge path, project knowledge path), not created yet."""
    return tmp_path / "user" / "knowledge.md", tmp_path / "projects" / "p" / "knowledge.md"


@pytest.fixture
def make_kb(files):
    user, project = files

    def _make(
        project_text: str | None = None, user_text: str | None = None, with_project: bool = True
    ) -> KnowledgeBase:
        for path, text in ((project, project_text), (user, user_text)):
            if text is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(text.encode("utf-8"))
        return KnowledgeBase(user, project if with_project else None, project_name="p")

    return _make
