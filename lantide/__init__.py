"""Lantide: a desktop workbench for data analysts who work with an AI agent."""

__version__ = "0.1.0"
