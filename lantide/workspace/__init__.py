"""The workspace and project model on disk, settings, secrets and file watching."""

from lantide.workspace.lifecycle import PROJECT_STATUSES
from lantide.workspace.model import Project, Workspace

__all__ = ["Project", "Workspace", "PROJECT_STATUSES"]
