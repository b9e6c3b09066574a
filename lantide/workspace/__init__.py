"""The workspace and project model on disk, settings, secrets and file watching."""

from lantide.workspace.model import PROJECT_STATUSES, Project, Workspace

__all__ = ["Project", "Workspace", "PROJECT_STATUSES"]
