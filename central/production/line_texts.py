"""The words of the production engine's printed lines (RULES.md E1-E9, C1-C9), per language, and how
a quantity and a rate are printed in them. Pure data and formatting: no I/O.

The payslip's lines keep these fixed texts (``verify-slip`` re-renders issued slips from them), so
they stay here rather than in the gettext catalogs (docs/i18n.md)."""

from __future__ import annotations

from decimal import Decimal

from central.pay.lines import to_money

TEXT = {
    "pt-BR": {
        "labour": "{cls}: {qty} {unit} × R$ {tariff}",
        "share": "Cota de produção: {quotas} cota(s) × R$ {value}",
        "guarantee_half": "Garantia mínima de meio dia (R$ {amount}): complemento",
        "guarantee_day": "Garantia de um dia de salário (R$ {amount}): complemento",
        "guarantee_hourly": "Garantia por hora: {hours} h × R$ {hourly} (R$ {amount}): complemento",
        "late_start": "Espera por início atrasado: {minutes} min × {fraction} do salário-hora",
        "rain": "Paralisação por chuva: {minutes} min × {fraction} do salário-hora",
        "rough_water": "Paralisação por agitação das águas: {minutes} min × {fraction} do salário-hora",
        "tide": "Espera de maré: {minutes} min × {fraction} do salário-hora",
        "third_party": "Paralisação por terceiros: {minutes} min × {fraction} do salário-hora",
        "meal_worked": "Horário de refeição trabalhado: {minutes} min × {fraction} do salário-hora",
        "anchorage_travel": "Viagem ao navio ao largo e volta (tempo de trabalho): {minutes} min × "
                            "{fraction} do salário-hora",
        "no_equipment": "Paralisação por falta de aparelhamento: {minutes} min × {fraction} do salário-hora",
        "workers_fault": "Paralisação imputada aos trabalhadores: {minutes} min, não remunerada",
        "transport": "Condução ao navio ao largo ({source}): R$ {amount}",
        "billing": "Reembolso ao concessionário — {what} ({source}), {n} trabalhador(es)",
        "surcharge": "Acréscimo de {pct}% sobre R$ {base}",
        "top_up": "Complemento do mínimo mensal {month}: R$ {minimum} − R$ {earned}",
        "per_fraction": " (pesado {qty} t: tonelada ou fração, {rule})",
        "extra_share": "{share} — membro extra (condições especiais): cota calculada sem os extras, "
                       "custo da administração do porto",
        "class_surcharge": " + {pct}% ({rule}, obs. {note})",
    },
    "en": {
        "labour": "{cls}: {qty} {unit} × R$ {tariff}",
        "share": "Production share: {quotas} quota(s) × R$ {value}",
        "guarantee_half": "Half-day minimum (R$ {amount}): top-up",
        "guarantee_day": "Full-day guarantee (R$ {amount}): top-up",
        "guarantee_hourly": "Hourly guarantee: {hours} h × R$ {hourly} (R$ {amount}): top-up",
        "late_start": "Waiting for a late start: {minutes} min × {fraction} of the hourly wage",
        "rain": "Rain stoppage: {minutes} min × {fraction} of the hourly wage",
        "rough_water": "Rough-water stoppage: {minutes} min × {fraction} of the hourly wage",
        "tide": "Tide wait: {minutes} min × {fraction} of the hourly wage",
        "third_party": "Stoppage by third parties: {minutes} min × {fraction} of the hourly wage",
        "meal_worked": "Meal interval worked: {minutes} min × {fraction} of the hourly wage",
        "anchorage_travel": "Travel to the anchored ship and back (work time): {minutes} min × "
                            "{fraction} of the hourly wage",
        "no_equipment": "Stoppage for want of equipment: {minutes} min × {fraction} of the hourly wage",
        "workers_fault": "Stoppage proven caused by the workers: {minutes} min, not paid",
        "transport": "Transport to the anchored ship ({source}): R$ {amount}",
        "billing": "Reimbursement — {what} ({source}), {n} worker(s)",
        "surcharge": "Surcharge {pct}% on R$ {base}",
        "top_up": "Monthly minimum top-up {month}: R$ {minimum} − R$ {earned}",
        "per_fraction": " (weighed {qty} t: per tonne or fraction, {rule})",
        "extra_share": "{share} — extra member (special conditions): share computed without the "
                       "extras, the port administration's cost",
        "class_surcharge": " + {pct}% surcharge ({rule}, note {note})",
    },
}


#: A tariff's unit (tariffs.csv ``unit``) as a labour line names it in each language.
UNIT_WORDS = {"pt-BR": {"t": "t", "unit": "unid."}, "en": {"t": "t", "unit": "unit(s)"}}


#: Kinds that only a stevedoring rulebook pays, with their rule and article (for the refusal).
KIND_RULES = {"anchorage_travel": "E7 (DL 2.032 art. 16)", "no_equipment": "E8 (DL 2.032 art. 12 §6)",
              "workers_fault": "E8 (DL 2.032 art. 26)"}


def quantity_text(value: Decimal) -> str:
    """A quantity as typed by a human: no exponent, no trailing zeros (``30.001``, ``1.5``, ``4``)."""
    text = format(value.normalize(), "f")
    return text


def rate_text(value: Decimal) -> str:
    """A tariff or rate in BRL: at least two decimals, more only if it has them (``3.20``, ``3.125``)."""
    return format(value, "f") if value.as_tuple().exponent < -2 else str(to_money(value))

