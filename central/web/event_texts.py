"""A gate's last event as the home page and the live page name it, in the page's language
(the words through ``central.web.service_texts``)."""

from __future__ import annotations

from central.web.service_texts import known_text, flag_label


# a gate event's type and its detail (a tap's decision, a reader's or coverage state) as the home
# page's "último evento" names them: msgids ``event_type.<type>``, ``event_detail.<detail>``; a
# tap's decisions are the what-if page's words (``o_<outcome>``)


def event_text(lang: str, parts: tuple[str, str, str] | None) -> str:
    """A gate's last event ``(type, detail, who)`` (``("tap", "exit", "V016")``) as one phrase:
    ``"leitura: saída V016"`` in pt-BR, ``"tap: exit V016"`` in English; a flag or alert code as
    ``flag_label`` names it; ``""`` for none."""
    if not parts:
        return ""
    kind, detail, who = parts
    said = ((known_text(f"o_{detail}", lang) or known_text(f"event_detail.{detail}", lang)
             or (flag_label(lang, detail) if detail else "")) if detail else "")
    head = known_text(f"event_type.{kind}", lang) or kind
    rest = " ".join(x for x in (said, who) if x)
    return f"{head}: {rest}" if rest else head
