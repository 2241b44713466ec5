"""The services' refusals (``BadInput`` texts: registry edits and uploads, photos, dispatch, pay
actions) in the page's language: pt-BR first, English available.

The services word their refusals in English, one reason per line or per ``; `` and each perhaps
behind the place it names (``workers.csv:3: ``, ``registration: ``). Each known reason is an error
code with parameters: a pattern over the English wording (named groups are the parameters) and
its pt-BR text. ``localize("pt", text)`` keeps the places and the parameters and gives each known
reason in Portuguese; an unknown reason stays as the service worded it (a test lists the codes, so
a reworded service text shows up as a failing test, not as a silent English string). ``"en"``
gives the text unchanged.

Field names are put in pt-BR too (``FIELDS``): a place that is a form field (``from/to: ``,
``rulebook: ``) and a field named inside a reason (``name is required`` -> ``nome é
obrigatório``). Under a file place (``workers.csv:3: ``) the CSV column stays beside its pt-BR
name, since the file's header is written with it (``nome (name) é um campo obrigatório``).
"""

from __future__ import annotations

import datetime as dt
import re

from central.web.i18n import MESSAGES
from wire.topics import ID_RULE

# code: (pattern over the English reason, pt-BR template with the pattern's named groups)
CODES: dict[str, tuple[str, str]] = {
    # central.rotation.service: a requisition already stored or repeated (same key)
    "requisition_registered": (
        r"requisition already registered as requisition (?P<id>\d+) \((?P<what>[^)]*), "
        r"(?P<n>\d+) workers\): nobody dispatched again",
        "requisição já registrada (requisição {id}: {what}, {n} trabalhadores): ninguém foi "
        "escalado de novo"),
    "requisition_count_changed": (
        r"requisition already registered as requisition (?P<id>\d+) \((?P<what>[^)]*), "
        r"(?P<n>\d+) workers\): a changed head count \((?P<m>\d+)\) is not added, "
        r"substitute or remove its escala entries instead",
        "requisição já registrada (requisição {id}: {what}, {n} trabalhadores): a mudança para "
        "{m} trabalhadores não é somada; substitua ou remova as entradas da escala"),
    "workers_range": (r"workers must be between (?P<lo>\d+) and (?P<hi>\d+), not (?P<n>-?\d+)",
                      "o número de trabalhadores deve estar entre {lo} e {hi}, não {n}"),
    "rotation_taken": (r"rotation_number (?P<n>\d+) is already held by (?P<other>\S+) \((?P<cat>[^)]*)\)",
                       "o número de rodízio {n} já pertence a {other} ({cat})"),
    "name_too_long": (r"name is longer than (?P<n>\d+) characters",
                      "o nome tem mais de {n} caracteres"),
    "name_not_utf8": (r"name has a byte that is not UTF-8 text",
                      "o nome tem um byte que não é texto UTF-8 (use acentos em UTF-8)"),
    # central.bounds: a value that does not fit its database column (size, range, NUL)
    "too_long": (r"(?P<field>\w+) is longer than (?P<n>\d+) characters \((?P<len>\d+)\)",
                 "{field} tem mais de {n} caracteres ({len})"),
    "int_outside": (r"(?P<field>\w+) (?P<value>-?\d+) is outside (?P<lo>-?\d+)\.\.(?P<hi>-?\d+)",
                    "{field} {value} está fora do intervalo {lo}..{hi}"),
    "field_nul": (r"(?P<field>\w+) contains a NUL character", "{field} contém um caractere NUL"),
    "day_outside": (r"(?P<field>(?!date |month )\w+) (?P<value>'\d{4}-\d\d-\d\d') is outside (?P<first>\S+)\.\.(?P<last>\S+)",
                    "{field} {value} está fora do intervalo {first}..{last}"),
    "out_of_range": (r"a value is out of range", "um valor está fora do intervalo permitido"),
    "address_nul": (r"the address contains a NUL character", "o endereço contém um caractere NUL"),
    "suspension_end": (r"the suspension would end after (?P<day>\S+)", "a suspensão terminaria depois de {day}"),
    "requisition_repeated": (r"repeats requisition (?P<ref>\S+) \((?P<what>[^)]*)\)",
                             "repete a requisição {ref} ({what})"),
    # portgate.records / portgate.tables: the CSV row validation (import, upload, edit form)
    "not_iso_date": (r"(?P<field>\w+ )?(?P<value>'.*') is not an ISO date \(YYYY-MM-DD\)",
                     "{field}{value} não é uma data ISO (AAAA-MM-DD)"),
    "required": (r"(?P<field>\w+) is required", "{field} é um campo obrigatório"),
    # central.web.logmodel: the read log's card search
    "card_not_uid": (r"card (?P<value>'.*') is not a card UID in any UID form",
                     "o cartão {value} não é um UID de cartão em nenhuma forma"),
    # portgate.docbr: a CPF, PIS/NIS or CNPJ of another length or with wrong check digits
    "docbr_length": (r"(?P<field>\w+) (?P<value>'.*') is not (?P<n>\d+) digits \((?P<shape>\S+), e\.g\. (?P<ex>\S+)\)",
                     "{field} {value} não tem {n} dígitos ({shape}, por exemplo {ex})"),
    "docbr_check": (r"(?P<field>\w+) (?P<value>'.*') fails its check digits \(a digit mistyped\?\)",
                    "{field} {value} não confere com os dígitos verificadores (algum dígito digitado errado?)"),
    "not_whole": (r"(?P<field>\w+ )?(?P<value>'.*') is not a whole number", "{field}{value} não é um número inteiro"),
    "decision_kind": (r"decision (?P<value>'.*') is not one of (?P<allowed>.+)",
                      "a decisão {value} não é uma de {allowed}"),
    # central.web.flagsmodel: a flag filter that is not a flag code (the valid ones by their names)
    "flag_not_one_of": (r"flag (?P<value>'.*') is not one of (?P<allowed>.+)",
                        "ocorrência {value} não é uma das ocorrências {allowed}"),
    "not_one_of": (r"(?P<field>\w+) (?P<value>'.*') is not one of (?P<allowed>.+)",
                   "{field} {value} não é um dos valores {allowed}"),
    "control_char": (r"(?P<field>\w+) (?P<value>'.*') contains a control character or line break (?P<what>\(.*\))",
                     "{field} {value} contém um caractere de controle ou quebra de linha {what}"),
    "not_timestamp": (r"(?P<field>\w+) (?P<value>'.*') is not an ISO 8601 timestamp",
                      "{field} {value} não é um instante ISO 8601"),
    "no_offset": (r"(?P<field>\w+) (?P<value>'.*') has no UTC offset", "{field} {value} não tem deslocamento UTC"),
    "out_of_range_date": (r"(?P<field>\w+) (?P<value>'.*') is out of the representable date range",
                          "{field} {value} está fora do intervalo de datas representável"),
    "suspension_order": (r"(?P<field>suspended_from) (?P<a>\S+) is after (?P<other>suspended_until) (?P<b>\S+)",
                         "o {field} {a} é depois do {other} {b}"),
    "negative_rotation": (r"(?P<field>rotation_number) (?P<n>-?\d+) is negative", "o {field} {n} é negativo"),
    "period_format": (r"period (?P<value>'.*') is not HH-HH \(e\.g\. 19-01\)", "período {value} não é HH-HH (ex.: 19-01)"),
    "period_hours": (r"period (?P<value>'.*') has hours out of range", "período {value} tem horas fora do intervalo"),
    "missing_columns": (r"missing column\(s\) (?P<cols>.+)", "falta(m) a(s) coluna(s) {cols}"),
    "header_columns": (r"header lacks column\(s\) (?P<cols>.+)", "o cabeçalho não tem a(s) coluna(s) {cols}"),
    "unknown_columns": (r"unknown column\(s\) (?P<cols>.+) \(the file takes (?P<known>.+)\)",
                        "coluna(s) desconhecida(s) {cols} (o arquivo aceita {known})"),
    "nul_char": (r"contains a NUL character", "contém um caractere NUL"),
    "not_utf8": (r"file is not UTF-8", "o arquivo não é UTF-8"),
    "not_csv": (r"not a valid CSV file: (?P<detail>.*)", "não é um arquivo CSV válido: {detail}"),
    "file_not_found": (r"file not found", "arquivo não encontrado"),
    "uid_repeats": (r"uid (?P<uid>\S+) repeats line (?P<line>\d+)", "uid {uid} repete a linha {line}"),
    "reg_repeats": (r"registration (?P<reg>\S+) repeats line (?P<line>\d+)", "matrícula {reg} repete a linha {line}"),
    "reg_not_registered": (r"registration (?P<reg>'.*') is not registered", "matrícula {reg} não está cadastrada"),
    # central.registry (store, edit, photos)
    "actor_required": (r"actor is required \(who makes the change\)", "falta quem faz a alteração"),
    "no_worker": (r"no worker with registration (?P<reg>'.*')", "nenhum trabalhador com a matrícula {reg}"),
    "no_card": (r"no card with uid (?P<uid>'.*')", "nenhum cartão com o uid {uid}"),
    "card_transition": (r"card (?P<uid>\S+) is (?P<status>\w+): cannot be (?P<event>\w+)",
                        "o cartão {uid} está {status}: não pode ser {event}"),
    # central.registry.store.import_refusal: an import row that would move a registered card
    "card_import_status": (r"card (?P<uid>\S+) is (?P<status>\w+): an import does not make it (?P<new>\w+)",
                           "o cartão {uid} está {status}: uma importação não o torna {new}"),
    "card_import_use": (r"use `(?P<cmd>[^`]+)`", "use o comando `{cmd}`"),
    "card_import_use_case": (r"use `(?P<cmd>[^`]+)` \(it closes the card's open case\)",
                             "use o comando `{cmd}` (encerra o processo aberto do cartão)"),
    "card_replaced_never": (r"a replaced card is never used again", "um cartão substituído nunca mais é usado"),
    # central.registry.store.sanction_refusal: an import row that would lift or impose an R4 sanction
    "import_reinstate": (r"registration (?P<reg>\S+) is cancelled \(R4\): an import does not reinstate a "
                         r"worker \(a cancellation is final, 83\.611 art\. 21 b\)",
                         "a matrícula {reg} está cancelada (R4): uma importação não readmite um trabalhador "
                         "(o cancelamento é definitivo, 83.611 art. 21 b)"),
    "import_suspension": (r"registration (?P<reg>\S+) is suspended (?P<span>\S+) \(R4\): an import does not "
                          r"change a suspension \(it ends on its own date, and the worker's edit page changes it "
                          r"with an audit entry\)",
                          "a matrícula {reg} está suspensa {span} (R4): uma importação não muda uma suspensão "
                          "(ela termina na própria data; a página de edição do trabalhador a altera, com "
                          "registro na auditoria)"),
    "import_sanction": (r"registration (?P<reg>\S+) is (?P<status>\w+): an import does not (?P<verb>suspend|cancel) "
                        r"a worker \(use `(?P<cmd>[^`]+)`: the penalty goes on the registration record, R4\)",
                        "a matrícula {reg} está {status}: uma importação não {verb} um trabalhador (use o "
                        "comando `{cmd}`: a penalidade vai para o registro da matrícula, R4)"),
    "card_inspector_only": (r"only a union inspector confiscates a card, at the gate \(G10\)",
                            "só um fiscal do sindicato apreende um cartão, no portaló (G10)"),
    "card_not_lifecycle": (r"not a card lifecycle move \(docs/office\.md\)",
                           "não é uma mudança do ciclo de vida do cartão (docs/office.md)"),
    "card_import_holder": (r"card (?P<uid>\S+) is (?P<status>\w+) and held by (?P<reg>\S+): an import does not "
                           r"move a card to another registration \(give (?P<new>\S+) a card with a new uid\)",
                           "o cartão {uid} está {status} e pertence a {reg}: uma importação não passa um cartão "
                           "para outra matrícula (dê a {new} um cartão com um novo uid)"),
    "card_import_kind": (r"card (?P<uid>\S+) is (?P<status>\w+) and a (?P<kind>\w+) card: an import does not "
                         r"change a card's kind \(issue a card with a new uid\)",
                         "o cartão {uid} está {status} e é do tipo {kind}: uma importação não muda o tipo de "
                         "um cartão (emita um cartão com um novo uid)"),
    "second_active_card": (r"registration (?P<reg>\S+) already has active (?P<kind>\w+) card (?P<other>\S+)",
                           "a matrícula {reg} já tem o cartão ativo {other} do tipo {kind}"),
    "reg_cancelled": (r"registration (?P<reg>\S+) is cancelled", "a matrícula {reg} está cancelada"),
    "reg_already_cancelled": (r"registration (?P<reg>\S+) is already cancelled", "a matrícula {reg} já está cancelada"),
    "card_exists": (r"card (?P<uid>\S+) already exists", "o cartão {uid} já existe"),
    # central.registry.enrol (the add-worker form, a card enrolled or replaced by hand) and R9
    "already_registered": (r"(?P<reg>\S+) is already registered", "{reg} já está cadastrado"),
    "card_exists_held": (r"card (?P<uid>\S+) already exists \((?P<status>\w+), held by (?P<reg>\S+)\)",
                         "o cartão {uid} já existe ({status}, da matrícula {reg})"),
    "second_active_card_form": (r"registration (?P<reg>\S+) already has active (?P<kind>\w+) card (?P<other>\S+): "
                                r"report it lost or replace it",
                                "a matrícula {reg} já tem o cartão ativo {other} do tipo {kind}: comunique a perda "
                                "ou emita a 2ª via"),
    "card_not_held": (r"card (?P<uid>\S+) is not held by (?P<reg>\S+)", "o cartão {uid} não é da matrícula {reg}"),
    # central.registry.gate_enrol and central.web.routes.enrol_gate: enrol mode on a gate (issue 34)
    "enrol_gate_offline": (r"gate (?P<gate>\S+) is offline: it cannot enter enrol mode",
                           "a porta {gate} está sem conexão: não pode entrar em modo de cadastro"),
    "enrol_gate_busy": (r"gate (?P<gate>\S+) is already in enrol mode for another worker",
                        "a porta {gate} já está em modo de cadastro para outro trabalhador"),
    "enrol_open": (r"registration (?P<reg>\S+) already has an open enrol session: cancel it first",
                   "a matrícula {reg} já tem um cadastro na porta em aberto: cancele-o antes"),
    "enrol_not_open": (r"enrol session (?P<n>\d+) is not open for (?P<reg>\S+)",
                       "o cadastro na porta {n} não está em aberto para {reg}"),
    "enrol_no_read": (r"enrol session (?P<n>\d+) has no card read yet", "o cadastro na porta {n} ainda não leu cartão"),
    "enrol_missing": (r"enrol session (?P<n>-?\d+) does not exist", "o cadastro na porta {n} não existe"),
    "enrol_no_mqtt": (r"no MQTT link to the gates is configured", "não há ligação MQTT com as portas configurada"),
    "enrol_not_told": (r"gate (?P<gate>\S+) not told: (?P<why>.*)", "a porta {gate} não foi avisada: {why}"),
    "card_kind_form": (r"kind (?P<value>'.*') is not control or badge", "o tipo {value} não é de controle nem chapa"),
    "uid_not_hex": (r"UID (?P<value>'.*') is not hexadecimal", "o UID {value} não é hexadecimal"),
    "uid_odd": (r"UID (?P<value>'.*') has an odd number of hex digits", "o UID {value} tem um número ímpar de dígitos"),
    "uid_bytes": (r"UID (?P<value>'.*') must be 3 to 10 bytes long", "o UID {value} deve ter de 3 a 10 bytes"),
    "uid_digits": (r"UID (?P<value>'.*') must be exactly (?P<n>\d+) digits for format (?P<form>\w+)",
                   "o UID {value} deve ter exatamente {n} dígitos na forma {form}"),
    "uid_bits": (r"UID (?P<value>'.*') does not fit in (?P<n>\d+) bits for format (?P<form>\w+)",
                 "o UID {value} não cabe em {n} bits na forma {form}"),
    "uid_w26": (r"UID (?P<value>'.*'): facility must be 0-255 and number 0-65535 for format wiegand26",
                "UID {value}: a instalação deve ser 0-255 e o número 0-65535 na forma wiegand26"),
    "uid_ambiguous": (r"uid (?P<uid>\d+) is 10 decimal digits: EM4100 hex or a DEZ10 number\? say which in column "
                      r"uid_form \(hex, decimal10, decimal10_le\)",
                      "o uid {uid} tem 10 dígitos decimais: hexadecimal EM4100 ou número DEZ10? escolha a forma "
                      "(hex, decimal10, decimal10_le)"),
    "uid_partial": (r"uid_form (?P<form>\w+) carries only 24 bits of the card: enrol it by its whole UID",
                    "a forma {form} traz só 24 bits do cartão: cadastre-o pelo UID inteiro"),
    "date_br_format": (r"(?P<field>\w+) (?P<value>'.*') is not a day written dd/mm/aaaa",
                       "{field} {value} não é uma data válida (dd/mm/aaaa)"),
    "expiring_outside": (r"expiring (?P<value>'.*') is outside 0\.\.(?P<max>\d+)",
                         "o número de dias {value} está fora de 0..{max}"),
    "admission_age": (r"(?P<art>.+?): age (?P<age>-?\d+) on (?P<day>\S+) is outside (?P<lo>\d+)\.\.(?P<hi>\d+)",
                      "{art}: idade {age} em {day} fora de {lo} a {hi} anos"),
    "admission_brazilian": (r"(?P<art>.+?): must be Brazilian \(nationality (?P<nat>[^)]*)\)",
                            "{art}: deve ser brasileiro (nacionalidade {nat})"),
    "admission_missing": (r"(?P<art>.+?): (?P<label>.+) \((?P<name>\w+)\) missing: give the document and its date",
                          "{art}: falta {label}: informe o documento e a data dele"),
    "admission_late": (r"(?P<art>.+?): (?P<label>.+) \((?P<name>\w+)\) is dated (?P<day>\S+), after the "
                       r"registration on (?P<reg>\S+)",
                       "{art}: {label} tem data {day}, depois do registro em {reg}"),
    "admission_pair": (r"(?P<field>\w+)_on is required with (?P=field)", "falta a data do documento de {field}"),
    "admission_doc": (r"(?P<field>\w+) \(the document\) is required with (?P=field)_on",
                      "falta o documento de {field} (só a data foi informada)"),
    "foreign_share": (r"DL 2\.032 art\. 5 §3: foreigners would be (?P<f>\d+) of (?P<n>\d+) stevedores, at most one "
                      r"third \((?P<max>\d+)\)",
                      "DL 2.032 art. 5 §3: os estrangeiros seriam {f} de {n} estivadores; no máximo um terço ({max})"),
    "photo_empty": (r"the photo file is empty", "o arquivo da foto está vazio"),
    "photo_too_big": (r"the photo file has (?P<n>\d+) bytes \(at most (?P<max>\d+)\)",
                      "o arquivo da foto tem {n} bytes (no máximo {max})"),
    "photo_type": (r"the photo is (?P<fmt>\w+): only JPEG or PNG", "a foto é {fmt}: só JPEG ou PNG"),
    "photo_pixels": (r"the photo has (?P<size>\d+x\d+) pixels: too large \(at most (?P<max>\d+) pixels\)",
                     "a foto tem {size} pixels: grande demais para uma foto de rosto (no máximo {max} pixels; "
                     "reduza-a, por exemplo para 1200x1600)"),
    "photo_bomb": (r"the photo has too many pixels: too large", "a foto tem pixels demais: grande demais"),
    "photo_not_picture": (r"the photo is not a JPEG or PNG picture", "a foto não é uma imagem JPEG ou PNG"),
    "photo_damaged": (r"the photo file is damaged or cut short: not a readable JPEG or PNG picture",
                      "o arquivo da foto está danificado ou incompleto: não é uma imagem JPEG ou PNG legível"),
    "photo_name": (r"registration (?P<reg>'.*') cannot name a photo file",
                   "a matrícula {reg} não pode dar nome a um arquivo de foto"),
    # central.rotation (dispatch, refusals, substitutions)
    "wrong_day": (r"requisition\(s\) not for (?P<day>\S+): (?P<refs>.+)", "requisição(ões) que não são de {day}: {refs}"),
    "no_entry": (r"no escala entry (?P<id>\S+)", "nenhuma entrada de escala {id}"),
    "entry_removed": (r"escala entry (?P<id>\S+) was already removed (?P<why>\(.*\))",
                      "a entrada de escala {id} já foi removida {why}"),
    "not_eligible": (r"(?P<reg>\S+) is not eligible: (?P<why>.+)", "{reg} não está apto: {why}"),
    # central.pay (mark paid, release)
    "pay_unknown": (r"unknown: (?P<ids>.+)", "desconhecido(s): {ids}"),
    "pay_already_paid": (r"already paid: (?P<ids>.+)", "já pago(s): {ids}"),
    "pay_superseded": (r"superseded: (?P<ids>.+)", "substituído(s) por nova versão: {ids}"),
    "pay_held": (r"on hold for review \(release it first\): (?P<ids>.+)",
                 "retido(s) para revisão (libere antes): {ids}"),
    "paid_ref_too_long": (r"the payment reference has (?P<n>\d+) characters \(at most (?P<max>\d+)\)",
                          "a referência do pagamento tem {n} caracteres (no máximo {max})"),
    "pay_future": (r"the payment time (?P<at>\S+) is more than a day after now \((?P<now>\S+)\)",
                   "a data do pagamento {at} é mais de um dia depois de agora ({now})"),
    "pay_before_work": (r"the payment time (?P<at>\S+) is before the start of the shift of (?P<ids>.+)",
                        "o pagamento em {at} é anterior ao início do turno de {ids}"),
    "pay_not_paid": (r"not marked paid: (?P<ids>.+)", "não está(ão) marcado(s) como pago(s): {ids}"),
    "reversal_reason": (r"a reversal needs a reason of 1 to (?P<max>\d+) characters",
                        "a reversão precisa de um motivo de 1 a {max} caracteres"),
    "pay_not_held": (r"not on hold: (?P<ids>.+)", "não está(ão) retido(s): {ids}"),
    "pay_empty_id": (r"statement id number (?P<n>[\d, ]+) is empty \(give the ids `portgate pay overdue` lists\)",
                     "o id de demonstrativo número {n} está vazio (use os ids que `portgate pay overdue` lista)"),
    "pay_slip_altered": (r"statement (?P<ids>.+) no longer matches its digest \(altered outside the ledger\): "
                         r"payslip not printed, run `portgate pay close` for these days",
                         "o demonstrativo {ids} não confere mais com o seu resumo criptográfico (alterado fora "
                         "do livro): contracheque não emitido, rode `portgate pay close` para estes dias"),
    "pay_no_slip_key": (r"this server has no payslip key: the operator restarts it with "
                        r"`portgate office serve --config central\.toml` \(key in \[web\] slip_key_file or "
                        r"<keys_dir>/payslip\.key\)",
                        "este servidor não tem chave de contracheque: o operador deve reiniciá-lo com "
                        "`portgate office serve --config central.toml` (chave em [web] slip_key_file ou "
                        "<keys_dir>/payslip.key)"),
    "release_note": (r"a release needs a note of 1 to 255 characters", "a liberação precisa de uma nota de 1 a 255 caracteres"),
    # central.calls (ship calls) and central.registry.cases (R7)
    "time_required": (r"a time is required", "falta o horário"),
    "not_iso_time": (r"(?P<value>'.*') is not an ISO 8601 time", "{value} não é um horário ISO 8601"),
    "value_no_offset": (r"(?P<value>'.*') has no UTC offset", "{value} não tem deslocamento UTC"),
    "not_imo": (r"ship (?P<ship>'.*') is not an IMO number", "navio {ship} não é um número IMO"),
    "departure_order": (r"departure is not after arrival", "a saída não é depois da chegada"),
    "no_call": (r"no ship call (?P<id>\S+)", "nenhuma escala de navio {id}"),
    "no_case": (r"no case (?P<id>\S+)", "nenhum processo {id}"),
    "case_step": (r"case (?P<id>\S+) is (?P<status>\S+): cannot take step (?P<step>\S+)",
                  "o processo {id} está {status}: não pode ter o passo {step}"),
    "no_event": (r"no event (?P<id>\S+)", "nenhum evento {id}"),
    "event_flag": (r"event (?P<id>\S+) does not carry flag (?P<flag>\S+)", "o evento {id} não tem a ocorrência {flag}"),
    "event_no_reg": (r"event (?P<id>\S+) names no registration", "o evento {id} não indica matrícula"),
    "charge_required": (r"the charge is required \(R7\)", "a acusação é obrigatória (R7)"),
    # central.registry.flag_reviews (the flag queue)
    "comment_required": (r"the comment is required: say what was seen or why there is no infraction",
                         "o comentário é obrigatório: diga o que foi visto ou por que não há infração"),
    "comment_nul": (r"the comment contains a NUL character", "o comentário contém um caractere NUL"),
    "comment_long": (r"the comment is longer than (?P<max>\d+) characters \((?P<n>\d+)\)",
                     "o comentário tem mais de {max} caracteres ({n})"),
    "event_unflagged": (r"event (?P<id>\S+) carries no flag", "o evento {id} não tem ocorrência"),
    "alarm_comment_required": (r"the comment is required: say what was seen or what is being done",
                               "o comentário é obrigatório: diga o que foi visto ou o que está sendo feito"),
    "no_alarm": (r"no (?P<kind>coverage|reader) alarm (?P<id>\d+)", "nenhum alarme {id}"),
    "flag_handled_case": (r"the flag was already handled \(case #(?P<case>\d+)\)",
                          "a ocorrência já foi tratada (processo nº {case})"),
    "flag_handled_none": (r"the flag was already handled \(no infraction\)",
                          "a ocorrência já foi tratada (sem infração)"),
    "defence_required": (r"the defence text is required", "o texto da defesa é obrigatório"),
    "attachment_size": (r"attachment (?P<name>.+) is larger than (?P<mb>\d+) MB", "o anexo {name} tem mais de {mb} MB"),
    "no_defence": (r"no penalty without the prior defence of the accused \(R7, 83\.611 art\. 21 §1\)",
                   "nenhuma penalidade sem a defesa prévia do acusado (R7, 83.611 art. 21 §1)"),
    "suspension_days": (r"a suspension needs its number of days \(R4\)", "a suspensão precisa do número de dias (R4)"),
    "suspension_start": (r"a suspension needs its first day", "a suspensão precisa do primeiro dia"),
    "appeal_closed": (r"the appeal window closed on (?P<day>\S+)", "o prazo de recurso terminou em {day}"),
    "suspension_span": (r"a suspension lasts (?P<lo>\d+) to (?P<hi>\d+) days \((?P<article>[^)]*)\), not (?P<n>-?\d+) \(R4\)",
                        "a suspensão vai de {lo} a {hi} dias ({article}), não {n} (R4)"),
    "appeal_required": (r"the appeal text is required", "o texto do recurso é obrigatório"),
    "appeal_outcome": (r"appeal outcome (?P<value>'.*') is not upheld\|overturned",
                       "o resultado do recurso {value} não é mantida (upheld) nem reformada (overturned)"),
    "no_attachment": (r"no attachment (?P<a>\S+) in case (?P<c>\S+)", "nenhum anexo {a} no processo {c}"),
    "no_attachment_id": (r"no attachment (?P<a>\S+)", "nenhum anexo {a}"),
    # the web application's own checks
    "dates_format": (r"dates are YYYY-MM-DD", "as datas são AAAA-MM-DD"),
    "date_format": (r"date (?P<value>'.*') is not YYYY-MM-DD", "a data {value} não é AAAA-MM-DD"),
    "value_date_format": (r"(?P<value>'.*') is not YYYY-MM-DD", "{value} não é AAAA-MM-DD"),
    "period_reversed": (r"the period ends before it starts", "o período termina antes de começar"),
    "select_statement": (r"select at least one statement", "selecione ao menos um demonstrativo"),
    "select_and_note": (r"select statements and write the note \(who reviewed and why\)",
                        "selecione os demonstrativos e escreva a nota (quem revisou e por quê)"),
    "choose_photo": (r"choose a JPEG or PNG photo", "escolha uma foto JPEG ou PNG"),
    "no_photos_dir": (r"no photos directory: set \[web\] photos_dir in central\.toml",
                      "sem diretório de fotos: defina [web] photos_dir em central.toml"),
    "choose_csv": (r"choose at least one CSV file", "escolha ao menos um arquivo CSV"),
    "choose_ships": (r"choose a ships\.csv file", "escolha um arquivo ships.csv"),
    "id_number": (r"(?P<field>\w+) id is a number", "o id de {field} é um número"),
    "month_format": (r"month (?P<value>'.*') is not YYYY-MM", "o mês {value} não é AAAA-MM"),
    "month_outside": (r"month (?P<value>'.*') is outside (?P<first>\S+)\.\.(?P<last>\S+)",
                      "o mês {value} está fora de {first}..{last}"),
    "date_outside": (r"date (?P<value>'.*') is outside (?P<first>\S+)\.\.(?P<last>\S+)",
                     "a data {value} está fora de {first}..{last}"),
    "bad_id": (r"(?P<field>\w+) (?P<value>'.*') is not a valid id \(" + re.escape(ID_RULE) + r"\)",
               "{field} {value} não é um id válido (1 a 64 caracteres A-Z a-z 0-9 _ . -, começando por letra "
               "ou dígito)"),
    "id_chars": (r"(?P<field>\w+) (?P<value>'.*') has characters an id does not have",
                 "{field} {value} tem caracteres que um id não tem"),
    "give_reason": (r"give the reason", "informe o motivo"),
    "pay_rulebook_listed": (r"choose one of the listed pay rulebooks", "escolha uma das tabelas de pagamento listadas"),
    "not_toml": (r"not TOML: (?P<detail>.*)", "não é TOML: {detail}"),
    "number_too_long": (r"a number has more than (?P<n>\d+) digits", "um número tem mais de {n} dígitos"),
    "rulebook_nested": (r"the rulebook is nested too deeply", "a tabela de regras está aninhada em profundidade demais"),
    "rulebook_too_long": (r"the rulebook has (?P<n>\d+) characters \(at most (?P<max>\d+)\)",
                          "a tabela de regras tem {n} caracteres (no máximo {max})"),
    "rulebook_no_version": (r"the rulebook has no version", "a tabela de regras não tem versão ([[version]])"),
    "unknown_gate": (r"gate (?P<gate>'.*') is not a known gate", "o portaló {gate} não é conhecido"),
    "day_out_of_range": (r"the day (?P<day>\S+) is outside (?P<first>\S+)\.\.(?P<last>\S+)",
                         "o dia {day} está fora de {first}..{last}"),
    "reader_direction": (r"(?P<item>'.*') is not READER_ID=in\|out\|both", "{item} não é LEITORA=in|out|both"),
    # rulebooks (gate, pay) checked by the schema (portgate.config.convert: msgspec's wording) and
    # by their own validation (edge.rules.rulebook, central.pay.loading): the what-if page
    "schema_type": (r"Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`", "esperado `{want}`, veio `{got}`"),
    "schema_bound": (r"Expected `(?P<want>[^`]+)` (?P<length>of length )?(?P<bound>[<>]=? \S+)",
                     "esperado `{want}` {length}{bound}"),
    "schema_missing": (r"Object missing required field `(?P<field>[^`]+)`",
                       "falta o campo obrigatório `{field}`"),
    "schema_enum": (r"Invalid enum value (?P<value>.+)", "o valor {value} não é um dos permitidos"),
    "schema_rfc3339": (r"Invalid RFC3339 encoded (?P<what>date|datetime|time)", "{what} RFC 3339 inválida"),
    "unknown_key": (r"unknown key \(misspelt, or not valid here\)",
                    "chave desconhecida (grafia errada, ou não vale aqui)"),
    "unknown_time_zone": (r"unknown time zone (?P<value>'.*')", "fuso horário desconhecido {value}"),
    "version_from_required": (r"required: the date this version is in force from",
                              "obrigatório: a data a partir da qual esta versão vale"),
    "no_version_in_force": (r"no gate rulebook version in force on (?P<day>\S+)",
                            "nenhuma versão da tabela do portaló vale em {day}"),
    "one_version_required": (r"at least one \[\[version\]\] is required", "é preciso ao menos uma [[version]]"),
    "same_effective_from": (r"two (?:versions|entries) have the same effective_from",
                            "duas versões têm o mesmo effective_from"),
    "g1_always_on": (r"G1 cannot be switched off: an unknown card names no worker to admit",
                     "G1 não pode ser desligada: um cartão desconhecido não indica trabalhador a admitir"),
    "unknown_category": (r"unknown category (?P<cat>'.*') \(g12\.categories knows (?P<known>.*)\)",
                         "categoria desconhecida {cat} (g12.categories conhece {known})"),
    "not_pay_rulebook": (r"not a watchmen's pay rulebook \(RULES\.md P\)",
                         "não é uma tabela de pagamento de vigias (RULES.md P)"),
    "not_pay_rulebook_named": (r"not a watchmen's pay rulebook \(RULES\.md P\) \((?P<other>'.*') has no "
                               r"\[\[day_wages\]\] or \[\[terms\]\]\)",
                               "não é uma tabela de pagamento de vigias (RULES.md P) ({other} não tem "
                               "[[day_wages]] nem [[terms]])"),
    "at_least_one": (r"at least one (?P<what>day wage|version of the terms|function|line) is required",
                     "é preciso ao menos um(a) {what}"),
    "must_be": (r"must (?P<what>be a non-negative amount|be a positive amount|be positive|not be negative|"
                r"be a positive multiplier|be a non-negative number)", "{what}"),
    "rule_twice": (r"rule (?P<rule>'.*') appears twice", "a regra {rule} aparece duas vezes"),
    "not_earlier_line": (r"(?P<ref>'.*') is not an earlier line", "{ref} não é uma linha anterior"),
    # central.production.csvio.outside_period: an interruption's time outside the gang's period
    "outside_period": (r"(?P<field>start|end) (?P<value>\S+ \S+) is outside gang (?P<gang>\S+)'s period "
                       r"(?P<period>\S+) of (?P<day>\S+) \((?P<first>\S+ \S+)\.\.(?P<last>\S+ \S+), port time\)",
                       "{field} {value} está fora do período {period} de {day} do terno {gang} "
                       "({first} a {last}, hora do porto)"),
    "empty_band": (r"the hour band is empty or negative", "a faixa de horas está vazia ou é negativa"),
}

# field names, CSV columns and form places the services name in English -> pt-BR
FIELDS: dict[str, str] = {
    # a case's texts (central.registry.cases, R7)
    "charge": "acusação", "evidence": "provas", "defence": "defesa", "appeal": "recurso",
    # workers.csv, cards.csv (portgate.records) and the worker form
    "registration": "matrícula", "name": "nome", "category": "categoria", "status": "situação",
    "suspended_from": "início da suspensão", "suspended_until": "fim da suspensão",
    "health_exam_date": "data do exame de saúde", "booklet_revalidated_year": "ano de revalidação da caderneta",
    "rotation_number": "número de rodízio", "kind": "tipo", "cpf": "CPF", "pis": "PIS/NIS", "cnpj": "CNPJ",
    # requisitions.csv, escala.csv, ships.csv and the requisition form
    "date": "data", "period": "período", "operator": "operador", "ship": "navio", "ship_name": "nome do navio",
    "voyage": "navegação", "berth": "atracação", "gate_id": "portaló", "post": "posto", "function": "função",
    "workers": "número de trabalhadores", "ref": "referência", "arrival": "chegada", "departure": "saída",
    "requisition": "requisição do formulário",
    # the pages' own fields (pay, what-if, flags, reports, cases, escala changes)
    "from": "início do período", "to": "fim do período", "from/to": "período", "day": "dia", "month": "mês",
    "gate": "portaló", "worker": "trabalhador", "flag": "ocorrência", "event": "evento", "reason": "motivo",
    "rulebook": "tabela de regras", "directions": "sentidos das leitoras", "statement": "demonstrativo",
    "case": "processo", "attachment": "anexo", "decision": "decisão", "outcome": "resultado do recurso",
    "days": "dias", "start": "primeiro dia", "password": "senha",
    "--at": "data do pagamento", "q": "busca", "year": "ano", "--year": "ano", "expiring": "vencimento em dias",
    "uid": "UID", "new_uid": "UID do novo cartão", "uid_form": "forma do número", "birth_date": "data de nascimento",
    "nationality": "nacionalidade", "registered_on": "data do registro",
    # the admission conditions (central.registry.admission, R9) as the add-worker form names them
    "vision": "saúde e visão", "police_record": "bons antecedentes", "military": "serviço militar",
    "electoral": "título de eleitor", "vaccination": "vacinação", "fitness": "robustez física",
    "criminal_record": "folha corrida", "legal_stay": "permanência legal",
    "--registration": "matrícula",  # central.rotation.service.substitute names its command-line option
}


def _field_pt(name: str, in_file: bool) -> str:
    """A field name in pt-BR (kept when unknown); under a file place its CSV column beside it."""
    word = FIELDS.get(name.strip())
    if word is None:
        return name
    tail = " " if name.endswith(" ") else ""  # ``not_whole``'s optional "field "
    return (f"{word} ({name.strip()})" if in_file else word) + tail


# the pt-BR words of the ``must_be`` and ``at_least_one`` parameters
_WORDS = {
    "be a non-negative amount": "deve ser um valor não negativo",
    "be a positive amount": "deve ser um valor positivo",
    "be positive": "deve ser positivo",
    "not be negative": "não deve ser negativo",
    "be a positive multiplier": "deve ser um multiplicador positivo",
    "be a non-negative number": "deve ser um número não negativo",
    "day wage": "diária",
    "version of the terms": "versão das condições (terms)",
    "function": "função",
    "line": "linha",
    "of length ": "de comprimento ",
    "date": "data",
    "datetime": "data e hora",
    "time": "hora",
}

# tomllib's syntax errors (``TOMLDecodeError``: "<reason> (at line L, column C)" or "(at end of
# document)"): pattern over the English reason -> pt-BR; an unknown reason reads "erro de sintaxe"
TOML_REASONS: dict[str, str] = {
    r"Invalid value": "valor inválido",
    r"Invalid statement": "instrução inválida",
    r"Unterminated string": "texto (string) sem as aspas de fechamento",
    r"Unclosed array": "lista ([...]) sem o ']' de fechamento",
    r"Unclosed inline table": "tabela em linha ({{...}}) sem o '}}' de fechamento",
    r"Cannot overwrite a value": "um valor já definido não pode ser redefinido",
    r"Expected '=' after a key in a key/value pair": "falta '=' depois da chave (chave = valor)",
    r"Expected ']' at the end of a table declaration": "falta ']' no fim do cabeçalho da tabela",
    r"Expected ']]' at the end of an array declaration": "falta ']]' no fim do cabeçalho da lista de tabelas",
    r"Expected newline or end of document after a statement":
        "esperada quebra de linha ou fim do texto depois de uma instrução",
    r"Expected (?P<what>.+)": "esperado {what}",
    r"Invalid initial character for a key part": "caractere inicial inválido em uma parte da chave",
    r"Invalid hex value": "valor hexadecimal inválido",
    r"Invalid date or datetime": "data ou data e hora inválida",
    r"Unescaped '\\' in a string": "barra invertida '\\' sem escape em um texto (string)",
    r"Escaped character is not a Unicode scalar value": "o caractere escapado não é um valor Unicode válido",
    r"Illegal character (?P<what>.+)": "caractere não permitido {what}",
    r"Found invalid character (?P<what>.+)": "caractere inválido {what}",
    r"Duplicate inline table key (?P<what>.+)": "chave repetida na tabela em linha: {what}",
    r"Cannot redefine namespace (?P<key>.+)": "a tabela [{key}] não pode ser redefinida",
    r"Cannot mutate immutable namespace (?P<key>.+)": "a tabela [{key}] não pode ser alterada",
    r"Cannot declare (?P<key>.+) twice": "a tabela [{key}] foi declarada duas vezes",
}
_TOML_COMPILED = [(re.compile(pattern + r"\Z", re.S), pt) for pattern, pt in TOML_REASONS.items()]
_TOML_AT = re.compile(
    r"(?P<reason>.*) \(at (?:line (?P<line>\d+), column (?P<column>\d+)|(?P<end>end of document))\)\Z", re.S)


def toml_error_pt(detail: str) -> str:
    """tomllib's English message (``str(TOMLDecodeError)``) in pt-BR with its line and column:
    ``"Expected '=' after a key in a key/value pair (at line 2, column 5)"`` -> ``"linha 2, coluna 5:
    falta '=' depois da chave (chave = valor)"``; ``(at end of document)`` -> ``"no fim do texto: ..."``.
    A reason not in ``TOML_REASONS`` reads "erro de sintaxe"; a message without the position
    suffix stays as it is."""
    m = _TOML_AT.match(detail)
    if m is None:
        return detail
    reason = "erro de sintaxe"
    for rx, pt in _TOML_COMPILED:
        found = rx.match(m["reason"])
        if found:
            reason = pt.format(**{k: _toml_key(v) if k == "key" else v for k, v in found.groupdict().items()})
            break
    where = "no fim do texto" if m["end"] else f"linha {m['line']}, coluna {m['column']}"
    return f"{where}: {reason}"


def _toml_key(text: str) -> str:
    """tomllib's key tuple (``('a', 'b')``) as the TOML writes it (``a.b``); other text unchanged."""
    m = re.fullmatch(r"\(((?:'[^'\\]*',? ?)+)\)", text)
    return ".".join(re.findall(r"'([^'\\]*)'", m[1])) if m else text


# parameters that are themselves texts to put in pt-BR: code -> {parameter: function}
def _ineligible_pt(why: str) -> str:
    """``"G7 rest, R2 overlapping dispatch"`` (``Ineligible`` values, or "other category") in pt-BR,
    with the rule ids kept: the escala page's own words (``central.web.i18n``)."""
    words = {**{k: v[0] for k, v in MESSAGES.items() if k[:3] in ("G3 ", "G7 ", "R2 ")},
             "other category": "outra categoria"}
    return ", ".join(words.get(part, part) for part in why.split(", "))


# a case's states and steps (central.registry.cases, R7) as the cases page names them
_CASE_STATUS_PT = {"open": "aberto", "defended": "com defesa", "decided": "decidido", "appealed": "em recurso",
                   "final": "encerrado"}
_CASE_STEP_PT = {"defence": "defesa", "decide": "decisão", "appeal": "recurso",
                 "appeal_decided": "decisão do recurso", "waive": "renúncia ao recurso",
                 "expire": "fim do prazo de recurso"}
# a case's decisions (central.registry.cases.DECISIONS) with the value the form posts beside it
_DECISION_PT = {"none": "nenhuma (none)", "reprimand": "repreensão (reprimand)",
                "suspension": "suspensão (suspension)", "cancellation": "cancelamento (cancellation)"}
# a card's and a worker's states and kinds as the registry pages name them
_STATE_PT = {"active": "ativo", "lost": "perdido", "confiscated": "apreendido", "replaced": "substituído",
             "suspended": "suspenso", "cancelled": "cancelado"}
_KIND_PT = {"control": "de controle", "badge": "chapa", "inspector": "de fiscal"}


# the gate's flags (``wire.flags.Flag``) and the office's shift flags (``wire.flags.ShiftFlag``) as
# the pages name them: code -> (pt-BR, English, rule id); the code itself stays in data attributes,
# filters and the ledger
FLAG_TEXTS: dict[str, tuple[str, str, str]] = {
    "RETAIN_CARD": ("reter o cartão", "retain the card", "G2"),
    "BORROWED_CARD": ("cartão emprestado", "borrowed card", "G4"),
    "BADGE_MISSING": ("chapa ausente", "badge missing", "G4"),
    "DOUBLE_ASSIGNMENT": ("escalado em dois navios", "double assignment", "G5"),
    "NOT_DISPATCHED": ("não escalado", "not dispatched", "G6"),
    "ROTATION_JUMP": ("salto no rodízio", "rotation jump", "G6"),
    "LATE_ARRIVAL": ("chegada atrasada", "late arrival", "G6"),
    "REST_SHORT": ("descanso insuficiente", "short rest", "G7"),
    "STALE_DATA": ("dados desatualizados", "stale data", "G8"),
    "CLOCK_UNTRUSTED": ("relógio não confiável", "clock untrusted", "G8"),
    "NO_ENTRY": ("saída sem entrada", "exit without entry", "G9"),
    "EARLY_EXIT": ("saída antecipada", "early exit", "G9"),
    "CONFISCATE": ("cartão apreendido", "card confiscated", "G10"),
    "CONFISCATION": ("apreensão de cartão", "card confiscation", "G10"),
    "COVERAGE_GAP": ("falta de cobertura", "coverage gap", "G11"),
    "PARTIAL_UID": ("UID parcial", "partial UID", "G1"),
    "WRONG_CATEGORY": ("categoria errada", "wrong category", "G12"),
    "MEAL_MODE": ("modo refeição", "meal mode", "G10"),
    "MEAL_WORKED": ("refeição trabalhada", "meal interval worked", "P6"),
    "MISSING_EXIT": ("sem saída registrada", "missing exit", ""),
    "REPEATED_ADMIT": ("entrada repetida", "repeated admit", ""),
    "CLOCK_PLACED": ("hora situada por outro evento", "clock placed", ""),
    "CLOCK_UNPLACEABLE": ("hora não situável", "clock unplaceable", ""),
    "CLOCK_BACKWARDS": ("relógio para trás", "clock backwards", ""),
    "MEAL_AT_GATE": ("refeição trabalhada, registrada no portaló", "meal interval worked, at the gate", "P6"),
    "MEAL_CORRECTED": ("refeição corrigida pelo escritório", "meal interval corrected by the office", "P6"),
    "CHAIN_BREAK": ("quebra na cadeia de eventos", "event chain break", ""),
    # a requisition's checks (central.rotation.requisition_checks, the escala page)
    "LATE_REQUISITION": ("requisição fora do prazo", "late requisition", ""),
    "INCOMPLETE_REQUISITION": ("requisição incompleta", "incomplete requisition", ""),
    "GANG_COMPOSITION": ("composição do terno", "gang composition", ""),
}


def flag_label(lang: str, code: str) -> str:
    """A flag code (``BORROWED_CARD``) as a page names it: ``"cartão emprestado (G4)"`` in pt-BR,
    ``"borrowed card (G4)"`` in English; an unknown code is shown as it is."""
    known = FLAG_TEXTS.get(code)
    if known is None:
        return code
    pt, en, rule = known
    word = en if lang == "en" else pt
    return f"{word} ({rule})" if rule else word


# a gang member's production role (the rulebook's quota table, docs/production.md) as the pay
# page names it: code -> (pt-BR, English); DL 2.032 art. 24 and DL 3.844 art. 4 give the pt-BR terms
ROLE_TEXTS: dict[str, tuple[str, str]] = {
    "stevedore": ("estivador", "stevedore"),
    "hatch_foreman": ("contramestre", "hatch foreman"),
    "general_foreman": ("contramestre geral", "general foreman"),
    "worker": ("trabalhador", "worker"),
    "warehouse_driver": ("motorista interno do armazém", "warehouse driver"),
    "foreman": ("feitor", "foreman"),
    "assistant_foreman": ("ajudante de feitor", "assistant foreman"),
    "quay_crane_driver": ("motorista de guindaste de cais", "quay crane driver"),
    "tally_clerk": ("conferente", "tally clerk"),
}


def role_label(lang: str, code: str) -> str:
    """A production role code (``general_foreman``) as the pay page names it: ``"contramestre
    geral"`` in pt-BR, ``"general foreman"`` in English; a role the table does not know (a
    rulebook's own) is shown as it is."""
    known = ROLE_TEXTS.get(code)
    if known is None:
        return code
    return known[1] if lang == "en" else known[0]


def _flag_named(code: str) -> str:
    """``BORROWED_CARD`` -> ``"cartão emprestado (BORROWED_CARD)"``: the pt-BR name with the code
    a filter address takes; an unknown code as it is."""
    known = FLAG_TEXTS.get(code)
    return f"{known[0]} ({code})" if known else code


def _state_pt(value: str) -> str:
    return _STATE_PT.get(value, value)


_CARD_PARAMS = {"status": _state_pt, "new": _state_pt, "kind": lambda v: _KIND_PT.get(v, v)}
_PARAM_PT = {"not_toml": {"detail": toml_error_pt}, "not_eligible": {"why": _ineligible_pt},
             "card_import_status": _CARD_PARAMS, "card_import_holder": _CARD_PARAMS,
             "card_import_kind": _CARD_PARAMS, "second_active_card_form": _CARD_PARAMS,
             "card_exists_held": _CARD_PARAMS, "card_transition": {"status": _state_pt, "event": _state_pt},
             "import_sanction": {"status": lambda v: {"active": "ativa", "suspended": "suspensa"}.get(v, v),
                                 "verb": lambda v: {"suspend": "suspende", "cancel": "cancela"}.get(v, v)},
             "flag_not_one_of": {"allowed": lambda v: ", ".join(_flag_named(k) for k in v.split(", "))},
             "decision_kind": {"allowed": lambda v: ", ".join(_DECISION_PT.get(k, k) for k in v.split(", "))},
             "outside_period": {"field": lambda v: {"start": "o início (start)", "end": "o fim (end)"}.get(v, v)},
             "appeal_closed": {"day": lambda v: _br_date(v)},
             "case_step": {"status": lambda v: _CASE_STATUS_PT.get(v, v),
                           "step": lambda v: f"«{_CASE_STEP_PT.get(v, v)}»"}}
_FIELD_PARAMS = ("field", "other")  # parameters that name a field (see ``FIELDS``)


def _br_date(value: str) -> str:
    """``2026-04-14`` as ``14/04/2026``; anything else as it is."""
    try:
        return dt.date.fromisoformat(value).strftime("%d/%m/%Y")
    except ValueError:
        return value

_COMPILED = [(code, re.compile(pattern + r"\Z", re.S), pt) for code, (pattern, pt) in CODES.items()]
# a place: ``workers.csv:3``, ``registration``, or a configuration key path ``gate.toml:$.version[0].g7``
_PLACE = re.compile(r"(?P<place>[^\s:;]+(?::\d+)?(?::\$[^\s;]*)?|\$[^\s;]*): (?P<rest>.+)\Z", re.S)


def code_of(reason: str) -> tuple[str, dict[str, str]] | None:
    """The code and parameters of an English reason, or ``None`` when it is not a known one."""
    for code, rx, _pt in _COMPILED:
        m = rx.match(reason)
        if m:
            return code, {k: v or "" for k, v in m.groupdict().items()}
    return None


def _param_pt(code: str, key: str, value: str, in_file: bool) -> str:
    special = _PARAM_PT.get(code, {})
    if key in special:
        return special[key](value)
    if key in _FIELD_PARAMS:
        return _field_pt(value, in_file)
    return _WORDS.get(value, value)


def _reason_pt(reason: str, depth: int = 0, in_file: bool = False) -> str:
    found = code_of(reason)
    if found is not None:
        code, params = found
        return CODES[code][1].format(**{k: _param_pt(code, k, v, in_file) for k, v in params.items()})
    place = _PLACE.match(reason)
    if place and depth < 3:  # "workers.csv:3: <reason>", "registration: <reason>"
        where = place["place"]
        is_file = ":" in where or "." in where  # file:line, a file name, a key path
        shown = where if is_file or where.startswith("$") else FIELDS.get(where, where)
        return f"{shown}: {_reason_pt(place['rest'], depth + 1, in_file or is_file)}"
    return reason


def localize(lang: str, text: str) -> str:
    """``text`` (a service's refusal) in ``lang``: ``"en"`` unchanged; otherwise each line and
    each ``; `` part with its known reason in pt-BR (places and parameters kept)."""
    if lang == "en" or not text:
        return text
    return "\n".join("; ".join(_reason_pt(part) for part in line.split("; ")) for line in text.split("\n"))


# the worker page's registry words (``central.registry``: card kinds and states, a card's
# lifecycle events and their details, the record's kinds and reasons) in the page's language;
# the stored values stay English codes in the registry
_CARD_EVENT_PT = {"issued": "emitido", "lost": "perdido", "confiscated": "apreendido", "replaced": "substituído",
                  "returned": "devolvido"}
_PENALTY_KIND_PT = {"infraction": "infração", "suspension": "suspensão", "cancellation": "cancelamento"}
_CARD_DETAIL = [  # (pattern over the stored detail, pt-BR template); {flag} is named by flag_label
    (re.compile(r"import\Z"), "importação", "import"),
    (re.compile(r"replaces (?P<uid>\S+)\Z"), "substitui {uid}", "replaces {uid}"),
    (re.compile(r"replaced by (?P<uid>\S+)\Z"), "substituído por {uid}", "replaced by {uid}"),
    (re.compile(r"case (?P<case>\d+): (?P<flag>[A-Z_]+) \((?P<article>.*)\)\Z", re.S),
     "processo {case}: {flag} ({article})", "case {case}: {flag} ({article})"),
    (re.compile(r"reported lost by the worker: replacement requested\Z"),  # central.web.routes.worker
     "perda comunicada pelo trabalhador: pede um cartão novo", "reported lost by the worker: replacement requested"),
]
_PENALTY_REASON = [
    (re.compile(r"card (?P<uid>\S+) confiscated: (?P<flag>[A-Z_]+)\Z"),
     "cartão {uid} apreendido: {flag}", "card {uid} confiscated: {flag}"),
    (re.compile(r"reprimand: (?P<rest>.*)\Z", re.S), "repreensão: {rest}", "reprimand: {rest}"),
    (re.compile(r"refused dispatch (?P<entry>\d+): (?P<rest>.*)\Z", re.S),
     "recusou a escala {entry}: {rest}", "refused dispatch {entry}: {rest}"),
]


def card_word(lang: str, value: str) -> str:
    """A card's kind (``control``), a card or worker state (``confiscated``) or a card's lifecycle
    event (``issued``) as the worker page names it: ``"de controle"``, ``"apreendido"``,
    ``"emitido"`` in pt-BR; English pages show the stored word; an unknown one as it is."""
    if lang == "en":
        return value
    return _KIND_PT.get(value) or _STATE_PT.get(value) or _CARD_EVENT_PT.get(value) or value


def penalty_kind(lang: str, value: str) -> str:
    """A registration record entry's kind (``infraction``, ``suspension``, ``cancellation``) in
    ``lang``; an unknown one as it is."""
    return value if lang == "en" else _PENALTY_KIND_PT.get(value, value)


def _registry_text(table, lang: str, text: str) -> str:
    for rx, pt, en in table:
        m = rx.match(text or "")
        if m:
            params = m.groupdict()
            if "flag" in params:
                params["flag"] = flag_label(lang, params["flag"])
            return (en if lang == "en" else pt).format(**params)
    return text


def card_detail(lang: str, text: str) -> str:
    """A card event's stored detail (``import``, ``replaces UID``, ``case 1: BORROWED_CARD
    (83.611 art. 20 j/l)``) in ``lang``, the flag by its name (``flag_label``); a detail typed by a
    person (a return's decision) is shown as it is."""
    return _registry_text(_CARD_DETAIL, lang, text)


def penalty_reason(lang: str, text: str) -> str:
    """A record entry's stored reason (``card UID confiscated: BORROWED_CARD``, ``reprimand: …``,
    ``refused dispatch N: …``) in ``lang``, the flag by its name; the text a person typed after
    the prefix, and any other reason, as it is."""
    return _registry_text(_PENALTY_REASON, lang, text)


# a gate event's type and its detail (a tap's decision, a reader's or coverage state) as the home
# page's "último evento" names them; a tap's decisions are the what-if page's words (``o_*``)
_EVENT_TYPE_PT = {"tap": "leitura", "confiscation": "apreensão de cartão", "meal_worked": "refeição trabalhada",
                  "reader": "leitor", "alert": "alerta", "coverage": "cobertura de vigia"}
_EVENT_DETAIL_PT = {**{k[2:]: v[0] for k, v in MESSAGES.items() if k.startswith("o_")},
                    "absent": "ausente", "ready": "pronto", "fault": "com defeito",
                    "raised": "falta aberta", "ended": "falta encerrada"}


def event_text(lang: str, parts: tuple[str, str, str] | None) -> str:
    """A gate's last event ``(type, detail, who)`` (``("tap", "exit", "V016")``) as one phrase:
    ``"leitura: saída V016"`` in pt-BR, ``"tap exit V016"`` in English; a flag or alert code as
    ``flag_label`` names it; ``""`` for none."""
    if not parts:
        return ""
    kind, detail, who = parts
    if lang == "en":
        return " ".join(x for x in (kind, detail, who) if x)
    said = _EVENT_DETAIL_PT.get(detail) or (flag_label(lang, detail) if detail else "")
    head = _EVENT_TYPE_PT.get(kind, kind)
    rest = " ".join(x for x in (said, who) if x)
    return f"{head}: {rest}" if rest else head
