"""config/gate.example.toml sends readers to docs/gate.md for the ``[sync]`` ranges: its row names
every setting of ``edge.sync.settings.SyncSettings`` (``lanes`` and ``status_every_s`` were missing)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from edge.sync.settings import SyncSettings

DOC = Path(__file__).resolve().parents[2] / "docs" / "gate.md"


def test_the_sync_row_of_docs_gate_md_names_every_setting():
    row = next(line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `[sync]` |"))
    missing = [f.name for f in msgspec.structs.fields(SyncSettings) if f"`{f.name}`" not in row]
    assert not missing, missing
