"""Test doubles shared across test suites (see openai_server.py)."""
