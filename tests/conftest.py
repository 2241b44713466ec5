"""Shared pytest fixtures. Component fixtures (mosquitto, pcscd+vpcd, PostgreSQL) live in
``tests/fixtures_*.py`` modules registered below, each starting the real server on loopback."""

pytest_plugins: list[str] = []
