"""Helpers that start real components for tests and the demo (shipped in the package)."""
