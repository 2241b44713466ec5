"""A text folded for searching: accents and case dropped (``João`` -> ``joao``, ``CONCEIÇÃO`` ->
``conceicao``), what the office's worker search compares on both databases (the registry keeps
each worker's folded name beside his name: ``central.registry.schema.workers.name_folded``)."""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """``text`` case-folded (``str.casefold``: ``ß`` -> ``ss``), decomposed (Unicode NFKD: ``ã`` ->
    ``a`` + combining tilde, ``ﬁ`` -> ``fi``) and without its combining marks: accents and case
    make no difference between two folded texts. Pure; never raises for a ``str``."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
