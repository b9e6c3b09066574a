"""Lantide's benchmarks: ``python -m benchmarks [SUITE ...]`` (see README.md here)."""
