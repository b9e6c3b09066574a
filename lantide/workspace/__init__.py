"""The workspace and project model on disk, settings, secrets and file watching."""

from lantide.workspace.model import Project, Workspace, PROJECT_STATUSES

__all__ = ["Project", "Workspace", "PROJECT_STATUSES"]
