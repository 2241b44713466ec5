"""The gettext catalogs (portgate/locale, docs/i18n.md): every msgid translated in pt-BR and English,
the ``.pot`` up to date with Babel's extraction, the old hand-kept tables empty, and the tooling
that moves a text still added to an old table into the catalogs."""

from __future__ import annotations

import ast

import pytest
from babel.messages.catalog import Catalog

import central.web.i18n as office_i18n
import central.web.service_texts as service_texts
import central.web.workertexts as workertexts
import edge.display.board as board
import edge.display.texts as display_texts
from portgate import i18n
from testkit.i18n import POT, _rewrite, check, extracted, put_text, read_catalog, regex_text, write_catalog


def test_every_msgid_has_a_pt_br_and_an_english_translation_and_the_pot_is_extracted():
    assert check() == []


def test_the_pot_holds_exactly_what_babel_extracts_and_what_the_po_files_hold():
    pot = {m.id for m in read_catalog(POT) if m.id}
    kept = {m.id for loc in i18n.LOCALES.values() for m in read_catalog(i18n.po_path(loc), loc) if m.id}
    used = set(extracted())
    assert used, "Babel extracted nothing: babel.cfg or the keywords are wrong"
    assert "nav_cases" in used and "w_nav_pay" in used  # a template's _() and the worker pages' word()
    assert pot == used | kept


def _catalogs(tmp_path, pot_ids, pt, en):
    pot = Catalog(domain=i18n.DOMAIN)
    for msgid in pot_ids:
        pot.add(msgid)
    write_catalog(tmp_path / "x.pot", pot)
    paths = {}
    for loc, texts in (("pt_BR", pt), ("en", en)):
        po = Catalog(locale=loc, domain=i18n.DOMAIN)
        for msgid, text in texts.items():
            po.add(msgid, text)
        paths[loc] = tmp_path / f"{loc}.po"
        write_catalog(paths[loc], po)
    return tmp_path / "x.pot", paths


def test_a_msgid_without_a_pt_br_or_an_english_translation_fails_the_check(tmp_path):
    pot, paths = _catalogs(tmp_path, ["kept", "new_key"], {"kept": "Guardado", "new_key": ""}, {"kept": "Kept"})
    assert check(pot, paths, used=set()) == ["pt_BR: no translation for 'new_key'",
                                              "en: no translation for 'new_key'"]


def test_a_msgid_used_in_the_code_but_missing_from_the_pot_fails_the_check(tmp_path):
    pot, paths = _catalogs(tmp_path, ["kept"], {"kept": "Guardado"}, {"kept": "Kept"})
    problems = check(pot, paths, used={"kept", "brand_new"})
    assert problems == ["not in x.pot (run: python -m testkit.i18n extract): 'brand_new'"]


def test_a_translation_with_a_field_pt_br_does_not_give_fails_the_check(tmp_path):
    pot, paths = _catalogs(tmp_path, ["until"], {"until": "até {date}"}, {"until": "until {day}"})
    assert check(pot, paths, used=set()) == [
        "en: fields ['day'] of 'until' are not in pt_BR's text (the code gives pt_BR's)"]


def test_the_old_tables_are_empty_so_every_text_lives_in_the_catalogs():
    """A branch that still adds to an old table fails here until ``python -m testkit.i18n absorb``."""
    assert office_i18n.MESSAGES == {}
    assert workertexts.WORDS == {} and workertexts.PAY_RULES == {}
    assert service_texts.FIELDS == {} and service_texts.ROLE_TEXTS == {}
    assert display_texts._PT == {} and display_texts._EN == {}
    assert board.RULE_TITLES == {} and board.ACTIONS == {}
    assert all(isinstance(v, str) for v in service_texts.CODES.values())
    assert all(isinstance(v, str) for v in service_texts.FLAG_TEXTS.values())
    assert all(v.startswith("toml.") for v in service_texts.TOML_REASONS.values())


def test_words_come_from_the_catalogs_with_english_falling_back_and_the_key_when_unknown(monkeypatch):
    assert office_i18n.t("pt", "nav_cases") == "Processos"
    assert office_i18n.t("en", "nav_cases") == "Cases"
    assert office_i18n.t("pt", "no_such_key") == "no_such_key"
    assert service_texts.flag_label("pt", "BORROWED_CARD") == "cartão emprestado (G4)"
    assert service_texts.flag_label("en", "BORROWED_CARD") == "borrowed card (G4)"
    assert display_texts.labels("pt")["waiting"] == "Aproxime o cartão"
    assert display_texts.labels("en")["waiting"] == "Present your card"
    assert board._rule_title("pt", "G4") == "cartão e chapa não conferem" and board._rule_title("en", "G99") == "G99"
    # an entry another branch added to an old table shows until it is absorbed
    monkeypatch.setitem(office_i18n.MESSAGES, "merged_late", ("Chegou tarde", "Came late"))
    assert office_i18n.t("en", "merged_late") == "Came late"
    monkeypatch.setitem(service_texts.FLAG_TEXTS, "NEW_FLAG", ("nova", "new", "G4"))
    assert service_texts.flag_label("pt", "NEW_FLAG") == "nova (G4)"


def test_the_refusal_patterns_read_as_english_templates():
    assert regex_text(r"no case (?P<id>\S+)") == "no case {id}"
    assert regex_text(r"(?P<field>\w+)_on is required with (?P=field)") == "{field}_on is required with {field}"
    assert regex_text(r"(?P<field>(?!date |month )\w+) is (?:versions|entries)") == "{field} is versions"
    assert regex_text(r"period (?P<value>'.*') is not HH-HH \(e\.g\. 19-01\)") == \
        "period {value} is not HH-HH (e.g. 19-01)"
    assert regex_text(r"a table ({...})") == "a table ({{...}})"


def test_absorb_takes_entries_out_of_a_table_and_keeps_the_others_byte_for_byte(tmp_path):
    source = tmp_path / "old.py"
    source.write_text(
        'X = 1\n'
        'MESSAGES: dict = {\n'
        '    # a comment stays\n'
        '    "gone": ("Ação", "Action"),\n'
        '    "stays": ("Fica", "Stays"),\n'
        '    "long": ("uma linha com acentuação "\n'
        '             "e outra", "one line and another"),\n'
        '}\n'
        'SAME = {"a": "ação", "b": "b", "c": "c"}\n'
        'CODES = {\n'
        '    "k": (r"pat (?P<x>\\d+) "\n'
        '          r"more", "pt-BR çã"),\n'
        '}\n', encoding="utf-8")
    _rewrite(source, "MESSAGES", {"gone": None, "long": None})
    _rewrite(source, "SAME", {"a": None, "c": None})
    _rewrite(source, "CODES", {"k": 0})
    text = source.read_text(encoding="utf-8")
    assert text == ('X = 1\n'
                    'MESSAGES: dict = {\n'
                    '    # a comment stays\n'
                    '    "stays": ("Fica", "Stays"),\n'
                    '}\n'
                    'SAME = {"b": "b", }\n'
                    'CODES = {\n'
                    '    "k": r"pat (?P<x>\\d+) "\n'
                    '          r"more",\n'
                    '}\n')
    namespace: dict = {}
    exec(compile(ast.parse(text), "old.py", "exec"), namespace)
    assert namespace["CODES"] == {"k": r"pat (?P<x>\d+) more"}


@pytest.mark.parametrize("value, lang", [("en", "en"), ("en_US", "en"), ("pt-BR", "pt"), (None, "pt"), ("fr", "pt")])
def test_a_language_setting_names_a_catalog(value, lang):
    assert i18n.normal_lang(value) == lang


def test_absorb_adds_a_new_text_takes_a_changed_one_and_keeps_an_equal_one():
    po = Catalog(locale="pt_BR", domain=i18n.DOMAIN)
    po.add("same", "Igual")
    po.add("old", "Antigo")
    assert put_text(po, "same", "Igual") == []
    assert put_text(po, "new", "Novo") == ["pt_BR: 'new' = 'Novo'"]
    assert put_text(po, "old", "Mudado", keep_catalog=True) == [
        "pt_BR: 'old' kept 'Antigo', the table said 'Mudado'"]
    assert po.get("old").string == "Antigo"
    assert put_text(po, "old", "Mudado") == ["pt_BR: 'old' changed from 'Antigo'", "pt_BR: 'old' = 'Mudado'"]
    assert po.get("old").string == "Mudado" and po.get("new").string == "Novo"
