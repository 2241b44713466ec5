"""The mqtt suite's real broker, office and gate fixtures, for the chain's end-to-end tests."""

from tests.central.ingest.conftest import broker, keys_dir, make_gate, office  # noqa: F401
