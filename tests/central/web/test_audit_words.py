"""The audit log's rows as a person reads them (central/web/auditwords.py, issue 33): the action by its
name, the stored English JSON detail as a field list in the page's language, never raw JSON."""

from __future__ import annotations

import json
from zoneinfo import ZoneInfo

from central.web.auditwords import action_label, detail_fields, subject_label

TZ = ZoneInfo("America/Sao_Paulo")


def test_a_case_opened_reads_as_fields_in_portuguese_and_in_english():
    stored = {"event_id": "g-a:41", "flag": "BORROWED_CARD", "article": "83.611 art. 20 j/l", "registration": "V017"}
    assert action_label("pt", "case.open") == "processo aberto"
    assert action_label("en", "case.open") == "case opened"
    assert detail_fields("pt", stored, TZ) == [("evento", "g-a:41"), ("ocorrência", "cartão emprestado (G4)"),
                                               ("artigo", "83.611 art. 20 j/l"), ("matrícula", "V017")]
    assert detail_fields("en", stored, TZ)[1] == ("flag", "borrowed card (G4)")


def test_times_days_booleans_lists_and_nested_values_read_in_the_page_s_language():
    stored = {"login": "v017", "activation": True, "expires_at": "2026-03-16T01:30:00+00:00",
              "start": "2026-03-20", "statements": ["s1", "s2"], "changed": {"cpf": ["", "123"]},
              "shortfalls": {}, "function": "vigia_chefe", "how": "appeal waived"}
    pt = dict(detail_fields("pt", stored, TZ))
    assert pt == {"usuário": "v017", "por código de ativação": "sim", "válido até": "15/03/2026 22:30:00",
                  "primeiro dia": "20/03/2026", "demonstrativos": "s1, s2",
                  "alterado (antes, depois)": "CPF: —, 123", "faltaram": "—", "função": "vigia-chefe",
                  "como": "recurso renunciado"}
    en = dict(detail_fields("en", stored, TZ))
    assert en["expires at"] == "Mar 15, 2026, 10:30:00 PM" and en["first day"] == "Mar 20, 2026"
    assert en["by activation code"] == "yes" and en["function"] == "chief watchman"


def test_an_unknown_action_and_keys_read_as_a_key_value_list_never_json():
    stored = {"brand_new_key": {"x": 1}, "rows": [["a", 1, None]]}
    fields = detail_fields("pt", stored, TZ)
    assert action_label("pt", "robot.dance") == "robot.dance"
    assert fields == [("brand new key", "x: 1"), ("rows", "(a, 1, —)")]
    assert not any("{" in k + v or '"' in k + v for k, v in fields)
    assert detail_fields("pt", json.dumps({"comment": "ok"}), TZ) == [("comentário", "ok")]  # stored as text
    assert detail_fields("pt", {}, TZ) == [] and detail_fields("pt", None, TZ) == []
    assert detail_fields("pt", "free text", TZ) == [("", "free text")]


def test_a_long_value_is_cut_and_the_subject_is_named():
    assert detail_fields("pt", {"text": "x" * 400}, TZ)[0][1] == "x" * 300 + "…"
    assert subject_label("pt", "2 statement(s)") == "2 demonstrativo(s)"
    assert subject_label("en", "2 statement(s)") == "2 statement(s)"
    assert subject_label("pt", "coverage:12") == "alarme de cobertura 12"
    assert subject_label("pt", "2026-03-15") == "15/03/2026"
    assert (subject_label("pt", "V017"), subject_label("pt", "")) == ("V017", "—")
