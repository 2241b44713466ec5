"""Helpers that start real components (mosquitto, PostgreSQL, ...) for tests and the demo."""
