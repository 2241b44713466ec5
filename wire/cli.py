"""``portgate wire``: regenerate the JSON Schemas and the AsyncAPI document."""

from __future__ import annotations

import click


@click.group()
def wire() -> None:
    """Wire contract: generated JSON Schemas and AsyncAPI document."""


@wire.command()
def generate() -> None:
    """Write wire/schemas/*.json and wire/asyncapi.yaml from the msgspec message types."""
    from wire.generate import write

    for path in write():
        click.echo(str(path))
