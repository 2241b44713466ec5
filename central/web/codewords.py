"""A post and its function as the escala and the rulebooks keep them (``portalo``, ``vigia_chefe``),
named in the page's language from the gettext catalogs (msgids ``post.<code>``, ``function.<code>``;
DESIGN.md glossary). The codes stay in ``data-*`` attributes, filters and CSV exports."""

from __future__ import annotations

from central.web.i18n import t


def _known(msgid: str, lang: str) -> str | None:
    said = t(lang, msgid)
    return None if said == msgid else said


def function_label(lang: str, code: str) -> str:
    """A post's function code (``vigia_chefe``) as a page names it: ``"vigia-chefe"`` in pt-BR,
    ``"chief watchman"`` in English; a function the catalogs do not know (a rulebook's own) is
    shown as it is."""
    return _known(f"function.{code}", lang) or code


def post_label(lang: str, code: str) -> str:
    """A post's code (``portalo``, ``porao``) as a page names it: ``"portaló"``, ``"porão"`` in
    pt-BR, ``"gangway"``, ``"hold"`` in English; a post the catalogs do not know as it is."""
    return _known(f"post.{code}", lang) or code
