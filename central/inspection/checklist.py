"""The inspection checklist (rule N6): the documents an inspector asks for on board (instruction
art. 7) and, for a foreign vessel in Brazilian waters, the art. 13 items that depend on its kind of
operation. Pure data plus one function."""

from __future__ import annotations

import dataclasses

from central.inspection.crew_share import Operation


@dataclasses.dataclass(frozen=True, slots=True)
class ChecklistItem:
    key: str
    article: str
    pt: str
    en: str


ART_7: tuple[ChecklistItem, ...] = (
    ChecklistItem("ship_registry", "art. 7", "Registro do navio", "Ship's registry"),
    ChecklistItem("crew_list", "art. 7", "Lista de tripulantes", "Crew list"),
    ChecklistItem("ship_particulars", "art. 7", "Dados gerais do navio", "Ship particulars"),
    ChecklistItem(
        "contracts",
        "art. 7",
        "Contratos de engajamento dos tripulantes",
        "Crew contracts of employment",
    ),
    ChecklistItem(
        "safe_manning",
        "art. 7",
        "Certificado de tripulação mínima de segurança",
        "Minimum safe manning certificate",
    ),
    ChecklistItem(
        "crew_payroll",
        "art. 7",
        "Lista de recibos do último pagamento efetuado à tripulação",
        "Receipts of the last crew payroll",
    ),
)

# art. 13 II and V: the CAA and the foreign crew's work permits are asked for in cabotage and
# offshore support (the kinds here that the text names); III: visas are checked for every kind.
_CAA_KINDS = {Operation.CABOTAGE, Operation.OFFSHORE_SUPPORT}
ART_13_CAA = (
    ChecklistItem(
        "caa",
        "art. 13 II",
        "Certificado de Autorização de Afretamento (CAA) do DMM",
        "Chartering Authorisation Certificate (CAA) from the DMM",
    ),
    ChecklistItem(
        "work_permits",
        "art. 13 V",
        "Autorizações de trabalho dos tripulantes estrangeiros",
        "Work permits of the foreign crew",
    ),
)
ART_13_VISAS = ChecklistItem(
    "visas", "art. 13 III", "Vistos dos tripulantes estrangeiros", "Visas of the foreign crew"
)
ART_13_LOG = ChecklistItem(
    "logbook",
    "art. 13 VI",
    "Diário de Navegação (dias em AJB)",
    "Logbook (days in Brazilian waters)",
)


def checklist(kind: Operation | None = None) -> list[ChecklistItem]:
    """The documents to request (N6, instruction art. 7), plus, when the foreign vessel's ``kind``
    is given, the art. 13 documents for it. Order is the order of the text."""
    items = list(ART_7)
    if kind is not None:
        kind = Operation(kind)
        if kind in _CAA_KINDS:
            items.extend(ART_13_CAA)
        items.append(ART_13_VISAS)
        items.append(ART_13_LOG)
    return items
