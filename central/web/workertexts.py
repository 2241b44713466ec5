"""The words of the worker's own pages (issue 35), pt-BR first, English available.

``word(lang, key)``: this module's words, falling back to the office's (``central.web.i18n.t``), so a
missing key shows itself (never an exception). ``pay_rule(lang, rule)``: a statement line's rule id in
plain words (RULES.md P1–P8, Decreto 83.611 arts. 25–27)."""

from __future__ import annotations

from central.web.i18n import t

WORDS: dict[str, tuple[str, str]] = {
    "w_app": ("portgate — trabalhador", "portgate — worker"),
    "w_nav_escala": ("Escala", "Roster"),
    "w_nav_shifts": ("Turnos", "Shifts"),
    "w_nav_pay": ("Pagamento", "Pay"),
    "w_nav_cases": ("Processos", "Cases"),
    "w_nav_card": ("Cartão", "Card"),
    "w_nav": ("Minhas páginas", "My pages"),
    "w_logout": ("Sair", "Log out"),
    "w_hello": ("Olá", "Hello"),
    "w_escala_title": ("Minha escala", "My roster"),
    "w_today": ("Hoje", "Today"),
    "w_tomorrow": ("Amanhã", "Tomorrow"),
    "w_no_dispatch": ("Nenhuma escalação.", "Not dispatched."),
    "w_ship": ("Navio", "Ship"),
    "w_where": ("Onde", "Where"),
    "w_berthed": ("atracado (no cais)", "berthed (at the quay)"),
    "w_anchored": ("fundeado (ao largo: embarque pela lancha)", "at anchorage (boarding by launch)"),
    "w_gate": ("Portaló", "Gate"),
    "w_post": ("Posto", "Post"),
    "w_function": ("Função", "Function"),
    "w_period": ("Período", "Period"),
    "w_present": ("Apresente-se", "Present yourself"),
    "w_present_at": ("no portaló {gate}, antes das {time}", "at gate {gate}, before {time}"),
    "w_next_title": ("Próxima escalação possível", "Next possible dispatch"),
    "w_next_text": ("Com o descanso de 11 horas entre turnos (Lei 9.719 art. 8), você pode ser escalado a partir do "
                    "período {period} de {date}.",
                    "With the 11 hours of rest between shifts (Lei 9.719 art. 8), you may be dispatched from the "
                    "{period} period of {date}."),
    "w_shifts_title": ("Meus turnos", "My shifts"),
    "w_no_shifts": ("Nenhum turno neste período.", "No shift in this period."),
    "w_from": ("De", "From"),
    "w_to": ("até", "to"),
    "w_show": ("Mostrar", "Show"),
    "w_admit": ("Entrada", "Admitted"),
    "w_exit": ("Saída", "Exit"),
    "w_hours": ("Horas", "Hours"),
    "w_meal": ("Refeição trabalhada", "Meal worked"),
    "w_taps": ("Leituras do cartão", "Card taps"),
    "w_flags": ("Ocorrências", "Flags"),
    "w_held": ("retido para revisão do escritório", "held for the office's review"),
    "w_month_hours": ("Horas no mês (R8)", "Hours this month (R8)"),
    "w_r8_title": ("Minhas horas por mês (R8)", "My hours per month (R8)"),
    "w_r8_note": ("Devolução mensal das horas de cada estivador ({article}): as horas a bordo dos ternos "
                  "de estiva, mais a viagem ao navio fundeado e de volta (E7, art. 16: tempo de trabalho).",
                  "The monthly return of each stevedore's hours ({article}): the hours aboard with the "
                  "stevedoring gangs, plus the trip to the ship at anchorage and back (E7, art. 16: work time)."),
    "w_month": ("Mês", "Month"),
    "w_gangs": ("Ternos", "Gangs"),
    "w_production_title": ("Produção (ternos)", "Production (gangs)"),
    "w_production_note": ("Pagamento por produção: a mão de obra da carga movimentada dividida em cotas "
                          "entre o terno (DL 2.032 arts. 23 e 24). Vence 24 horas depois do fim do serviço "
                          "(art. 10); a parte contestada fica depositada.",
                          "Production pay: the labour amount of the cargo moved, split in quotas among the "
                          "gang (DL 2.032 arts. 23 and 24). Due 24 hours after the end of the service "
                          "(art. 10); a disputed part is deposited."),
    "w_gang": ("Terno", "Gang"),
    "w_role": ("Função no terno", "Role in the gang"),
    "w_quotas": ("Cotas", "Quotas"),
    "w_disputed": ("Em disputa (depositado)", "Disputed (deposited)"),
    "w_payable": ("A pagar", "Payable"),
    "w_pay_title": ("Meu pagamento", "My pay"),
    "w_no_statements": ("Nenhum demonstrativo neste período.", "No statement in this period."),
    "w_statement": ("Demonstrativo", "Statement"),
    "w_total": ("Total", "Total"),
    "w_due": ("Vence em", "Due"),
    "w_due_note": ("O pagamento vence 48 horas depois do fim do serviço (Lei 9.719 art. 2 §1).",
                   "Pay is due 48 hours after the end of the service (Lei 9.719 art. 2 §1)."),
    "w_paid": ("Pago em", "Paid on"),
    "w_unpaid": ("A pagar", "Not paid yet"),
    "w_overdue": ("ATRASADO", "OVERDUE"),
    "w_on_hold": ("Retido", "On hold"),
    "w_hold_released": ("liberado pelo escritório", "released by the office"),
    "w_payslip": ("Baixar contracheque (PDF)", "Download payslip (PDF)"),
    "w_payslip_note": ("O contracheque traz a assinatura do escritório, que qualquer um confere com "
                       "portgate pay verify-slip.",
                       "The payslip carries the office's signature, which anyone checks with "
                       "portgate pay verify-slip."),
    "w_rule": ("Regra", "Rule"),
    "w_article": ("Artigo", "Article"),
    "w_amount": ("Valor", "Amount"),
    "w_cases_title": ("Meus processos", "My cases"),
    "w_no_cases": ("Nenhum processo.", "No case."),
    "w_case": ("Processo", "Case"),
    "w_charge": ("Acusação", "Charge"),
    "w_evidence": ("Provas", "Evidence"),
    "w_flag": ("Ocorrência", "Flag"),
    "w_occurred": ("Quando", "When"),
    "w_status": ("Situação", "Status"),
    "w_defence": ("Defesa prévia", "Prior defence"),
    "w_defence_help": ("Escreva sua defesa. Você pode anexar uma foto de um documento (JPEG ou PNG, até {mb} MB). "
                       "Pode escrever até a decisão; cada defesa fica no processo.",
                       "Write your defence. You may attach one photo of a document (JPEG or PNG, up to {mb} MB). "
                       "You may write until the decision; every defence stays on the case."),
    "w_defence_closed": ("O prazo da defesa terminou: o processo já foi decidido.",
                         "The time for the defence is over: the case has been decided."),
    "w_photo": ("Foto de documento (opcional)", "Photo of a document (optional)"),
    "w_send_defence": ("Enviar defesa", "Send defence"),
    "w_defence_saved": ("Defesa registrada.", "Defence recorded."),
    "w_attachments": ("Anexos", "Attachments"),
    "w_decision": ("Decisão", "Decision"),
    "w_none_yet": ("ainda não", "not yet"),
    "w_appeal": ("Recurso", "Appeal"),
    "w_appeal_until": ("Você pode recorrer até {date} (30 dias da notificação, Dec. 83.611 art. 21 §2).",
                       "You may appeal until {date} (30 days from notice, Dec. 83.611 art. 21 §2)."),
    "w_send_appeal": ("Enviar recurso", "File appeal"),
    "w_appeal_saved": ("Recurso registrado.", "Appeal filed."),
    "w_appeal_closed": ("O prazo do recurso terminou em {date}.", "The appeal window closed on {date}."),
    "w_final_at": ("A decisão ficou definitiva em {date}.", "The decision became final on {date}."),
    "w_final_when": ("A decisão fica definitiva em {date} se não houver recurso.",
                     "The decision becomes final on {date} unless appealed."),
    "w_final_after_appeal": ("A decisão fica definitiva quando o recurso for julgado.",
                             "The decision becomes final when the appeal is decided."),
    "w_card_title": ("Meu cartão", "My card"),
    "w_no_cards": ("Nenhum cartão.", "No card."),
    "w_card_lost": ("Comunicar perda", "Report lost"),
    "w_card_lost_help": ("Ao comunicar a perda, o cartão é bloqueado em todos os portalós em segundos e o "
                         "escritório recebe o pedido de um cartão novo.",
                         "When you report it lost, the card is blocked at every gate within seconds and the office "
                         "gets the request for a new card."),
    "w_card_lost_confirm": ("Confirmo que perdi este cartão", "I confirm I lost this card"),
    "w_card_lost_done": ("Cartão bloqueado. O escritório vai emitir um cartão novo.",
                         "Card blocked. The office will issue a new card."),
    "w_kind_control": ("cartão de controle", "control card"),
    "w_kind_badge": ("chapa", "badge"),
    "w_kind_inspector": ("cartão de fiscal", "inspector card"),
    "w_st_active": ("ativo", "active"),
    "w_st_lost": ("perdido (bloqueado)", "lost (blocked)"),
    "w_st_confiscated": ("apreendido", "confiscated"),
    "w_st_replaced": ("substituído", "replaced"),
    "w_activate_title": ("Ativar minha conta", "Activate my account"),
    "w_activate_help": ("Digite sua matrícula, o código impresso pelo escritório e a senha que você quer usar "
                        "(pelo menos {n} caracteres).",
                        "Type your registration, the code the office printed and the password you want "
                        "(at least {n} characters)."),
    "w_registration": ("Matrícula", "Registration"),
    "w_code": ("Código de ativação", "Activation code"),
    "w_new_password": ("Nova senha", "New password"),
    "w_again": ("Repita a senha", "Password again"),
    "w_activate": ("Ativar", "Activate"),
    "w_activated": ("Conta ativada. Entre com sua matrícula e a nova senha.",
                    "Account activated. Log in with your registration and the new password."),
    "w_passwords_differ": ("As duas senhas são diferentes.", "The two passwords differ."),
    "w_refused": ("Não foi possível", "Could not"),
    "w_kept": ("O que você escreveu continua no formulário.", "What you wrote is still in the form."),
    "w_offline": ("Sem conexão? O texto fica guardado neste aparelho até ser enviado.",
                  "No connection? The text stays on this phone until it is sent."),
    "w_disabled": ("Sua conta está desativada (matrícula cancelada ou acesso revogado). Procure o escritório.",
                   "Your account is disabled (registration cancelled or access revoked). Ask the office."),
    "w_code_title": ("Código de ativação do trabalhador", "Worker activation code"),
    "w_code_for": ("Para", "For"),
    "w_code_login": ("Usuário", "Login"),
    "w_code_expires": ("Vale até", "Valid until"),
    "w_code_steps": ("Abra {url} no celular, digite a matrícula, este código e uma senha nova. O código vale uma "
                     "vez só. Um código novo anula este.",
                     "Open {url} on the phone, type the registration, this code and a new password. The code "
                     "works once. A new code cancels this one."),
    "w_code_pending": ("código pendente até", "code pending until"),
    "w_account": ("Conta do trabalhador", "Worker account"),
    "w_print": ("Imprimir", "Print"),
    "w_back": ("Voltar", "Back"),
    "w_code_wrong": ("O código de ativação está errado, já foi usado ou venceu: peça um novo ao escritório.",
                     "The activation code is wrong, used or expired: ask the office for a new one."),
    "w_password_short": ("A senha precisa ter pelo menos {n} caracteres.", "A password has at least {n} characters."),
    "w_photo_size": ("A foto passa de {mb} MB: tire outra com menos resolução.",
                     "The photo is larger than {mb} MB: take another at a lower resolution."),
    "w_photo_kind": ("O anexo precisa ser uma foto JPEG ou PNG.", "The attachment must be a JPEG or PNG photo."),
    "w_card_not_active": ("Este cartão não está ativo: a perda já foi comunicada ou ele foi substituído.",
                          "This card is not active: already reported lost or replaced."),
    "w_unsent": ("Seu texto (não enviado: copie-o se precisar)", "Your text (not sent: copy it if you need it)"),
    "w_your_defence": ("Sua defesa", "Your defence"),
    "w_your_appeal": ("Seu recurso", "Your appeal"),
    "w_refresh": ("Esta página se atualiza sozinha a cada {s} segundos.", "This page updates itself every {s} seconds."),
    "w_health_refuse": ("Recusar por motivo de saúde", "Refuse for health reasons"),
    "w_health_help": ("Recusa por doença (R3): envie a foto do atestado médico (JPEG ou PNG, até {mb} MB). O "
                      "escritório decide; aceita, você não perde seu lugar no rodízio.",
                      "Refusal for illness (R3): send the photo of the medical certificate (JPEG or PNG, up to "
                      "{mb} MB). The office decides; accepted, you keep your place in the rotation."),
    "w_health_reason": ("Motivo", "Reason"),
    "w_health_photo": ("Foto do atestado médico", "Photo of the medical certificate"),
    "w_health_send": ("Enviar recusa", "Send refusal"),
    "w_health_sent": ("Recusa enviada ao escritório.", "Refusal sent to the office."),
    "w_health_pending": ("Recusa por saúde enviada: aguardando o escritório.",
                         "Refusal for health sent: waiting for the office."),
    "w_health_accepted": ("Recusa por saúde aceita: você não está mais escalado aqui e mantém seu lugar no rodízio.",
                          "Refusal for health accepted: you are no longer dispatched here and keep your place."),
    "w_health_rejected": ("Recusa por saúde não aceita pelo escritório: a escalação continua.",
                          "Refusal for health not accepted by the office: the dispatch stands."),
    "w_requests_title": ("Recusas por saúde dos trabalhadores (R3)", "Workers' refusals for health (R3)"),
    "w_requests_help": ("Aceitar registra a recusa com o atestado (sem infração; o trabalhador mantém o lugar no "
                        "rodízio; o próximo é escalado). Recusar mantém a escalação.",
                        "Accept records the refusal with the certificate (no infraction; the worker keeps his "
                        "place; the next one is dispatched). Reject keeps the dispatch."),
    "w_accept": ("Aceitar", "Accept"),
    "w_reject": ("Não aceitar", "Reject"),
    "w_nothing_sent": ("Nada foi gravado.", "Nothing was saved."),
}

# a statement line's rule in plain words (RULES.md P; Decreto 83.611 arts. 25-27)
PAY_RULES: dict[str, tuple[str, str]] = {
    "P1": ("salário do dia", "day wage"),
    "P2": ("prorrogação: horas além do período, com 20% a mais", "extension: hours past the period, plus 20%"),
    "P3": ("adicional noturno", "night premium"),
    "P4": ("domingo", "Sunday"),
    "P5": ("feriado", "holiday"),
    "P6": ("refeição trabalhada", "meal interval worked"),
    "P7": ("navio fundeado: 20% sobre as linhas acima", "ship at anchorage: 20% on the lines above"),
    "P8": ("transporte até o navio (cobrado do armador)", "transport to the ship (billed to the shipowner)"),
    # production pay (RULES.md E, stevedores, DL 2.032/1940; C, dock workers, DL 3.844/1941)
    "E1": ("mão de obra: a carga movimentada vezes a tarifa", "labour amount: the cargo moved times the tariff"),
    "E2": ("sua cota da produção do terno", "your quota share of the gang's production"),
    "E3": ("garantia mínima: meio dia ou um dia de salário", "guaranteed minimum: half a day's or a day's wage"),
    "E4": ("espera por início atrasado, chuva, mar agitado ou maré: meio salário-hora",
           "waiting for a late start, rain, rough water or the tide: half the hourly wage"),
    "E5": ("refeição trabalhada: o dobro do salário-hora", "meal interval worked: twice the hourly wage"),
    "E6": ("parte contestada: depositada", "disputed part: deposited"),
    "E7": ("viagem ao navio fundeado e volta: tempo de trabalho", "trip to the ship at anchorage and back: work time"),
    "E8": ("paralisação por falta de equipamento: salário integral",
           "stoppage for want of equipment: the full wage"),
    "E9": ("prorrogação da jornada, paga pelas mesmas tabelas", "extension of the working day, paid by the same tables"),
    "C1": ("sua cota da produção do terno", "your quota share of the gang's production"),
    "C2": ("garantia mínima: meio dia de salário ou por hora", "guaranteed minimum: half a day's wage or by the hour"),
    "C3": ("paralisação por chuva, mar ou terceiros", "stoppage for rain, rough water or third parties"),
    "C4": ("refeição trabalhada: o dobro do salário-hora", "meal interval worked: twice the hourly wage"),
    "C6": ("complemento do mínimo mensal garantido", "top-up to the guaranteed monthly minimum"),
}


def word(lang: str, key: str) -> str:
    """``key`` in ``lang`` (``pt`` or ``en``); an office word when not one of ``WORDS``."""
    if key in WORDS:
        return WORDS[key][1 if lang == "en" else 0]
    return t(lang, key)


def pay_rule(lang: str, rule: str, description: str) -> str:
    """A line's rule in plain words, else its stored ``description``."""
    found = PAY_RULES.get(rule)
    return found[1 if lang == "en" else 0] if found else description
