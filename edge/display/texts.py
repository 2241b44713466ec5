"""The screen's labels, pt-BR first, English (``labels(lang)``)."""

from __future__ import annotations

_PT = {
    "title": "Portaló", "waiting": "Aproxime o cartão", "photo_of": "Foto de",
    "not_on_roster": "(nome fora do cadastro)", "registration": "Matrícula", "category": "categoria",
    "card_holder": "Dono do cartão", "badge_holder": "Dono da chapa", "function": "Função",
    "ship": "Navio", "post": "posto", "period": "período", "last_reads": "Últimas leituras",
    "inspector_mode": "MODO FISCAL", "broker": "Central",
    "broker_online": "conectada", "broker_offline": "SEM CONEXÃO", "broker_standalone": "portaló isolado",
    "broker_unknown": "sem informação", "outbox": "A enviar", "oldest": "mais antigo há",
    "copies": "Dados", "stale": "DESATUALIZADOS", "fresh": "em dia", "clock": "Relógio",
    "untrusted": "NÃO SINCRONIZADO", "trusted": "ok", "no_journal": "REGISTRO DO PORTALÓ ILEGÍVEL",
    "gate_stopped": "PORTALÓ PARADO", "countdown_stopped": "contagem parada (portaló parado)",
    "screen_stale": "TELA SEM ATUALIZAÇÃO",
    "disk_full": "FALHA DO REGISTRO (DISCO CHEIO): PORTALÓ NEGANDO ENTRADAS", "unjournaled": "falha do registro",
    "unjournaled_deny": "Falha do registro (disco): entrada negada.",
    "unjournaled_exit": "Falha do registro (disco): saída NÃO registrada.",
    "ack": "Ciente", "ack_hint": "Toque em Ciente depois de agir.",
    "reader_fault": "LEITOR SEM SINAL", "reader_control": "Leitor do cartão de controle",
    "reader_badge": "Leitor da chapa", "reader_other": "Leitor", "no_signal_since": "sem sinal desde",
    "reader_fault_action": "Chame o supervisor: as leituras deste leitor não chegam ao portaló.",
    "readers_bar": "Leitor", "readers_fault_bar": "SEM SINAL",
    "offline_strip": "Sem rede — continue; os registros serão enviados.",
    "broker_screen_stale": "Central: sem informação (tela sem atualização)",
    "inspector": "Fiscal do Sindicato", "screen_heading": "Tela do portaló",
    "history_heading": "Últimas leituras",
    "enrol": "CARTÃO EM CADASTRO", "enrol_hint": "Aproxime o cartão novo: ele não libera a entrada.",
    "enrol_bar": "Cadastro", "enrol_new_card": "Cartão novo",
}
_EN = {
    "title": "Gangway", "waiting": "Present your card", "photo_of": "Photo of",
    "not_on_roster": "(name not on the roster)", "registration": "Registration", "category": "category",
    "card_holder": "Card holder", "badge_holder": "Badge holder", "function": "Function",
    "ship": "Ship", "post": "post", "period": "period", "last_reads": "Last reads",
    "inspector_mode": "INSPECTOR MODE", "broker": "Office link",
    "broker_online": "online", "broker_offline": "OFFLINE", "broker_standalone": "standalone gate",
    "broker_unknown": "no information", "outbox": "Unsent", "oldest": "oldest",
    "copies": "Data", "stale": "STALE", "fresh": "up to date", "clock": "Clock",
    "untrusted": "NOT SYNCHRONISED", "trusted": "ok", "no_journal": "GATE JOURNAL UNREADABLE",
    "gate_stopped": "GATE STOPPED", "countdown_stopped": "countdown stopped (gate stopped)",
    "screen_stale": "SCREEN NOT UPDATING",
    "disk_full": "JOURNAL FAILURE (DISK FULL): GATE REFUSING ENTRIES", "unjournaled": "journal failure",
    "unjournaled_deny": "Journal failure (disk): entry denied.",
    "unjournaled_exit": "Journal failure (disk): exit NOT recorded.",
    "ack": "Done", "ack_hint": "Touch Done once you have acted.",
    "reader_fault": "READER NOT RESPONDING", "reader_control": "Control card reader",
    "reader_badge": "Badge reader", "reader_other": "Reader", "no_signal_since": "no signal since",
    "reader_fault_action": "Call the supervisor: this reader's reads do not reach the gate.",
    "readers_bar": "Reader", "readers_fault_bar": "NO SIGNAL",
    "offline_strip": "No network — carry on; the records will be sent.",
    "broker_screen_stale": "Office link: no information (screen not updating)",
    "inspector": "Union inspector", "screen_heading": "Gangway screen",
    "history_heading": "Last reads",
    "enrol": "CARD BEING ENROLLED", "enrol_hint": "Present the new card: it lets nobody board.",
    "enrol_bar": "Enrolment", "enrol_new_card": "New card",
}


def labels(lang: str) -> dict[str, str]:
    """Labels in ``lang`` ("en", anything else is pt-BR)."""
    return _EN if lang == "en" else _PT
