"""What the watchman reads: one table of texts per rule reason and flag, pt-BR first, English.

A message is ``HEAD — reason; reason. Action. Action. [G2, G4]``, e.g.
``NEGADO — cartão bloqueado (confiscado). Retenha o cartão e chame o fiscal. [G2]``.
Texts are ``str.format`` templates; their fields come from the engine (registrations, ship, period).
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# key -> (pt-BR, English)
HEADS: dict[str, tuple[str, str]] = {
    "admit": ("LIBERADO", "ADMITTED"),
    "exit": ("SAÍDA", "EXIT"),
    "deny": ("NEGADO", "DENIED"),
    "inspector": ("MODO FISCAL", "INSPECTOR MODE"),
    "aboard": ("JÁ A BORDO", "ALREADY ABOARD"),
}

REASONS: dict[str, tuple[str, str]] = {
    # G1
    "G1.malformed": ("leitura inválida do cartão ({uid})", "unreadable card ({uid})"),
    "G1.unknown": ("cartão desconhecido ({uid})", "unknown card ({uid})"),
    "G1.ambiguous": (
        "número parcial do cartão ({uid}) é de {count} cartões: leia no leitor serial ou chame o supervisor",
        "partial card number ({uid}) belongs to {count} cards: read it at the serial reader or call "
        "the supervisor",
    ),
    # G1 in enrol mode (issue 34): the unknown card is the one being enrolled
    "G1.enrol": ("cartão novo ({uid})", "new card ({uid})"),
    "ENROL.read": ("cartão em cadastro: entrada não liberada; aguarde a confirmação do escritório",
                   "card being enrolled: no entry; wait for the office's confirmation"),
    # G2
    "G2.control": ("cartão bloqueado ({status})", "card blocked ({status})"),
    "G2.badge": ("chapa bloqueada ({status})", "badge blocked ({status})"),
    "G2.inspector": ("cartão de fiscal bloqueado ({status})", "inspector card blocked ({status})"),
    # G3
    "G3.no_registration": (
        "matrícula {registration} fora do cadastro", "registration {registration} not on the roster"
    ),
    "G3.cancelled": ("matrícula cancelada", "registration cancelled"),
    "G3.suspended": ("matrícula suspensa", "registration suspended"),
    "G3.health_missing": ("sem exame de saúde registrado", "no health exam on record"),
    "G3.health_expired": (
        "exame de saúde vencido (de {exam}, limite {months} meses)",
        "health exam expired (from {exam}, limit {months} months)",
    ),
    "G3.booklet": (
        "caderneta não revalidada para {year}", "registration booklet not revalidated for {year}"
    ),
    # G4
    "G4.badge_missing": ("falta a chapa", "badge missing"),
    "G4.badge_unknown": ("chapa não reconhecida ({uid})", "badge not recognised ({uid})"),
    "G4.mismatch": (
        "cartão da matrícula {registration} com chapa da matrícula {badge_registration}",
        "control card of registration {registration} with the badge of registration "
        "{badge_registration}",
    ),
    "G4.mismatch_after": (
        "chapa da matrícula {badge_registration} lida logo após o cartão da matrícula "
        "{registration}: cartão emprestado? A decisão do cartão, já registrada, vale",
        "badge of registration {badge_registration} read just after the control card of "
        "registration {registration}: borrowed card? The card's decision, already recorded, stands",
    ),
    "G4.badge_alone": ("chapa lida sem cartão de controle", "badge read without a control card"),
    # G5
    "G5.open_shift": (
        "já está em turno no navio {ship} (portaló {gate_id})",
        "already on shift on ship {ship} (gangway {gate_id})",
    ),
    "G5.dispatched": (
        "escalado para o navio {ship} no mesmo período ({period})",
        "dispatched to ship {ship} in the same period ({period})",
    ),
    # G6
    "G6.not_dispatched": (
        "não escalado para este navio neste horário",
        "not dispatched to this ship at this time",
    ),
    "G6.rotation_jump": (
        "o posto {post} ({period}) está escalado para a matrícula {other}",
        "post {post} ({period}) is dispatched to registration {other}",
    ),
    "G6.late": (
        "chegada após a tolerância de atraso (período {period}, {late} após o início, "
        "tolerância {tolerance} min)",
        "arrival past the late tolerance (period {period}, {late} after the start, "
        "tolerance {tolerance} min)",
    ),
    # G7
    "G7.rest": (
        "descanso de {rest} desde o último turno (mínimo {hours} h)",
        "rest of {rest} since the last shift (minimum {hours} h)",
    ),
    # G8
    "G8.stale": ("dados locais desatualizados", "local data out of date"),
    "G8.clock": ("relógio não sincronizado", "clock not synchronised"),
    # G9
    "G9.no_entry": ("saída sem entrada registrada", "exit with no recorded entry"),
    "G9.aboard": (
        "entrada registrada às {since}; nada foi alterado (permanência mínima {minutes} min)",
        "entry recorded at {since}; nothing changed (minimum stay {minutes} min)",
    ),
    "G9.aboard_in": (
        "entrada registrada às {since}; a saída é pelo leitor de saída",
        "entry recorded at {since}; exits are read at the exit reader",
    ),
    "G9.early_exit": (
        "saída antecipada: {early} antes do fim do período {period}",
        "early exit: {early} before the end of period {period}",
    ),
    # G13
    "G13.other_boot": (
        "entrada registrada às {since}, antes do reinício do portaló: a hora da saída será "
        "situada pelo escritório",
        "entry recorded at {since}, before the gate restarted: the office will place the exit's time",
    ),
    # G12
    "G12.wrong_category": (
        "categoria {category} não pode exercer a função {function}",
        "category {category} may not fill the function {function}",
    ),
    # G10
    "G10.confiscate": (
        "cartão apreendido pelo fiscal ({article})",
        "card confiscated by the inspector ({article})",
    ),
    "G10.session": ("apresente o cartão a apreender", "present the card to confiscate"),
    "G10.meal_mode": (
        "modo refeição: apresente o cartão do trabalhador cujo intervalo de refeição foi trabalhado",
        "meal mode: present the card of the worker whose meal interval was worked",
    ),
    "G10.meal_worked": (
        "intervalo de refeição trabalhado registrado (período {period}; 83.611 art. 26 d)",
        "meal interval worked recorded (period {period}; 83.611 art. 26 d)",
    ),
    "G10.meal_no_shift": (
        "refeição não registrada: o trabalhador não está a bordo por esta porta",
        "meal not recorded: the worker is not aboard through this gate",
    ),
    "G10.meal_no_dispatch": (
        "refeição não registrada: o turno do trabalhador não tem escala; registre no escritório",
        "meal not recorded: the worker's shift has no escala entry; record it at the office",
    ),
    "G10.disabled": ("modo fiscal desligado nesta porta", "inspector mode switched off at this port"),
    # ADMIT / EXIT details
    "ok.admit": (
        "navio {ship_name} ({ship}), posto {post}, período {period}",
        "ship {ship_name} ({ship}), post {post}, period {period}",
    ),
    "ok.exit": ("turno encerrado ({period})", "shift closed ({period})"),
    "ok.exit_unknown": ("turno encerrado", "shift closed"),
}

ACTIONS: dict[str, tuple[str, str]] = {
    "retain": ("Retenha o cartão e chame o fiscal.", "Keep the card and call the inspector."),
    "call_inspector": ("Chame o fiscal.", "Call the inspector."),
    "present_badge": ("Apresente a chapa.", "Present the badge."),
    "present_card": ("Apresente o cartão de controle.", "Present the control card."),
    "send_ahead": ("Cartão bloqueado em todos os portalós.", "Card blocked at every gangway."),
}

# Card statuses in plain words (for the {status} field).
STATUS_WORDS: dict[str, tuple[str, str]] = {
    "lost": ("perdido", "lost"),
    "replaced": ("substituído", "replaced"),
    "confiscated": ("confiscado", "confiscated"),
    "active": ("ativo", "active"),
}


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


# Reasons whose texts have no field: with no params they render as the text itself.
_FIXED: dict[str, tuple[str, str]] = {k: v for k, v in REASONS.items()
                                      if not any(c in v[0] + v[1] for c in "{}")}


def _lang_index(lang: str) -> int:
    return 0 if lang == "pt" else 1


def render(
    head: str,
    reasons: Iterable[tuple[str, Mapping[str, object]]],
    actions: Iterable[str],
    rules: Iterable[str],
    lang: str,
) -> str:
    """Render one message in ``lang`` ("pt" or "en"). Unknown template fields render as ``?``."""
    i = _lang_index(lang)
    parts = [HEADS[head][i]]
    texts = [_FIXED[key][i] if not params and key in _FIXED
             else REASONS[key][i].format_map(_localise(params, i)) for key, params in reasons]
    text = parts[0] + (" — " + "; ".join(texts) + "." if texts else ".")
    wanted = list(dict.fromkeys(actions))
    if "retain" in wanted and "call_inspector" in wanted:  # "retain" already says: call the inspector
        wanted.remove("call_inspector")
    for action in wanted:
        text += " " + ACTIONS[action][i]
    rule_list = list(dict.fromkeys(rules))
    if rule_list:
        text += " [" + ", ".join(rule_list) + "]"
    return text


def _localise(params: Mapping[str, object], i: int) -> _Blank:
    out = _Blank(params)
    status = out.get("status")
    if isinstance(status, str) and status in STATUS_WORDS:
        out["status"] = STATUS_WORDS[status][i]
    return out
