"""The pt-BR PDF summary of an evidence bundle (ReportLab): shifts, gate decisions with their
reasons, pay lines with their articles, and the chain's integrity. A reading aid only: the signed
events and the manifest are the evidence."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal
from zoneinfo import ZoneInfo

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from portgate.l10n import money
from wire.events import TapPayload

DECISIONS = {"admit": "ENTRADA", "exit": "SAÍDA", "deny": "NEGADO", "inspector": "FISCAL", "aboard": "A BORDO"}


def _local(iso: str | None, zone: ZoneInfo) -> str:
    if not iso:
        return "—"
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(zone).strftime("%d/%m/%Y %H:%M")


def _money(cents: int) -> str:
    return money(Decimal(cents) / 100)


def _table(rows: list[list], widths: list[float]) -> Table:
    styles = getSampleStyleSheet()
    cell = styles["BodyText"].clone("cell", fontSize=7.5, leading=9)
    data = [[Paragraph(str(c), cell) for c in row] for row in rows]
    t = Table(data, colWidths=[w * mm for w in widths], repeatRows=1)
    t.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, 0), colors.lightgrey),
                           ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
                           ("VALIGN", (0, 0), (-1, -1), "TOP")]))
    return t


def summary_pdf(registration: str, date_from: dt.date, date_to: dt.date, shifts: list[dict],
                statements: list[dict], events: list, gates: dict[str, tuple[int, int]], zone: ZoneInfo,
                now: dt.datetime) -> bytes:
    """The summary as PDF bytes."""
    styles = getSampleStyleSheet()
    buf = io.BytesIO()
    doc = SimpleDocTemplate(buf, pagesize=A4, leftMargin=15 * mm, rightMargin=15 * mm,
                            title=f"Dossiê de evidências {registration}", author="portgate")
    story = [
        Paragraph(f"Dossiê de evidências — matrícula {registration}", styles["Title"]),
        Paragraph(f"Período: {date_from:%d/%m/%Y} a {date_to:%d/%m/%Y}. Gerado em "
                  f"{now.astimezone(zone):%d/%m/%Y %H:%M} ({zone.key}).", styles["BodyText"]),
        Paragraph("Este resumo é um auxílio de leitura. A prova são os eventos assinados por cada portão "
                  "(Ed25519, encadeados por SHA-256) e o manifesto assinado pelo escritório, verificáveis "
                  "com <i>portgate evidence verify</i> ou com openssl (docs/evidence.md).", styles["BodyText"]),
        Spacer(1, 4 * mm), Paragraph("Turnos", styles["Heading2"]),
    ]
    rows = [["Turno", "Navio", "Período", "Entrada", "Saída", "Encerrado por", "Ocorrências"]]
    for s in shifts:
        rows.append([s["shift_id"], s["ship"], s["period"], _local(s["admit_at"], zone),
                     _local(s["exit_at"], zone), {"exit": "saída", "period_end": "fim do período"}.get(
                         s["closed_by"], s["closed_by"]), "; ".join(s["flags"]) or "—"])
    story += [_table(rows, [48, 18, 14, 24, 24, 20, 32]), Spacer(1, 4 * mm),
              Paragraph("Decisões na prancha", styles["Heading2"])]
    rows = [["Hora", "Portão", "Seq", "Decisão", "Regras", "Mensagem exibida"]]
    for ev in events:
        p = ev.payload
        if isinstance(p, TapPayload):
            rows.append([_local(ev.occurred_at.isoformat(), zone), ev.gate_id, ev.seq,
                         DECISIONS.get(p.decision, p.decision), ", ".join(p.rules_failed) or "—", p.message or "—"])
    story += [_table(rows, [24, 20, 10, 18, 18, 90]), Spacer(1, 4 * mm),
              Paragraph("Pagamento", styles["Heading2"])]
    for st in statements:
        state = ("pago em " + _local(st["paid_at"], zone) if st["paid_at"] else "não pago")
        if st["superseded_at"]:
            state += f"; substituído por {st['superseded_by']} ({st['superseded_reason']})"
        story.append(Paragraph(f"<b>{st['statement_id']}</b> — versão {st['version']}, tabela "
                               f"{st['rulebook']}, {state}", styles["BodyText"]))
        rows = [["Regra", "Artigo", "Descrição", "Valor"]]
        rows += [[ln["rule"], ln["article"], ln["description"], _money(ln["amount_cents"])] for ln in st["lines"]]
        rows.append(["TOTAL", "", "", _money(st["total_cents"])])
        story += [_table(rows, [16, 44, 92, 28]), Spacer(1, 2 * mm)]
    story.append(Paragraph("Integridade da cadeia", styles["Heading2"]))
    for gate, (lo, hi) in sorted(gates.items()):
        story.append(Paragraph(f"Portão {gate}: eventos seq {lo} a {hi} incluídos com assinaturas, "
                               "hashes encadeados e o recibo assinado do escritório.", styles["BodyText"]))
    doc.build(story)
    return buf.getvalue()
