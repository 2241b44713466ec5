"""English the fresh tester of 2026-12-07 still saw on a pt-BR command line (the default): crew
hours' days and ship, an option's time (``pay mark-paid --at``) and a payslip that is no PDF. Each
refusal is one line in pt-BR by default and in English with ``--lang en``, exit 2, nothing written.
And the demo's last line and README, which pointed at files outside the clone. (``evidence export``'s
refusals: tests/central/evidence/test_bad_bundles.py; the office's formula names and superseded
statements: tests/central/web/test_service_texts.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.central.inspection.conftest import PERIOD_COLUMNS, period_row, write_csv
from testkit.cli import in_pt_and_en, migrated_ledger


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> str:
    return migrated_ledger(tmp_path_factory.mktemp("ledger"))


def _one_line_each(args, pt_said: str, en_said: str) -> None:
    pt, en = in_pt_and_en(args)
    assert pt.returncode == en.returncode == 2, (pt.stderr, en.stderr)
    assert pt.stderr == f"portgate: {pt_said}\n", pt.stderr
    assert en.stderr == f"portgate: {en_said}\n", en.stderr


@pytest.mark.parametrize("days, ship, pt_said, en_said", [
    (("2024-02-30", "2024-03-01"), "9300001", "--from: '2024-02-30' não é uma data (AAAA-MM-DD)",
     "--from: '2024-02-30' is not a date (YYYY-MM-DD)"),
    (("2024-06-10", "2024-06-01"), "9300001", "--to 01/06/2024 é antes de --from 10/06/2024",
     "--to 2024-06-01 is before --from 2024-06-10"),
    (("2024-06-10", "2024-06-16"), "999", "nenhum período de trabalho do navio '999'",
     "no work periods for ship '999'"),
], ids=["not-a-date", "to-before-from", "no-periods"])
def test_crew_hours_days_and_ship_refusals(tmp_path, days, ship, pt_said, en_said):
    periods = write_csv(tmp_path / "periods.csv", PERIOD_COLUMNS,
                        [period_row("A", "2024-06-10T08:00:00-03:00", "2024-06-10T12:00:00-03:00")])
    _one_line_each(["crew", "hours", "--periods", str(periods), "--ship", ship, "--from", days[0], "--to", days[1],
                    "--out", str(tmp_path / "books")], pt_said, en_said)
    assert not (tmp_path / "books").exists()


@pytest.mark.parametrize("at, pt_said, en_said", [
    ("ontem", "--at 'ontem' não é um instante ISO 8601", "--at 'ontem' is not an ISO 8601 timestamp"),
    ("2026-03-15T10:00", "--at '2026-03-15T10:00' não tem deslocamento UTC",
     "--at '2026-03-15T10:00' has no UTC offset"),
], ids=["word", "no-offset"])
def test_mark_paid_at_that_is_no_time_with_offset(ledger, at, pt_said, en_said):
    _one_line_each(["pay", "mark-paid", "--db", ledger, "--at", at, "S1"], pt_said, en_said)


@pytest.mark.parametrize("data, pt_said, en_said", [
    (b"registration,name\nV001,Ana\n", "não é um arquivo PDF (não começa com %PDF-)",
     "not a PDF file (it does not start with %PDF-)"),
    (b"%PDF-1.4\n1 0 obj\n<< /Length 99 >>\nstream\nabc", "PDF danificado: começa como PDF, mas seu conteúdo não "
     "pode ser lido (cortado ou alterado?)",
     "a damaged PDF: it starts as a PDF but its contents cannot be read (cut short or altered?)"),
], ids=["csv", "cut-short"])
def test_verify_slip_of_a_file_that_is_no_pdf_or_a_damaged_one(ledger, tmp_path, data, pt_said, en_said):
    """One line saying which, none of pypdf's own words (``Stream has ended unexpectedly``)."""
    pdf, key = tmp_path / "slip.pdf", tmp_path / "slip.key"
    pdf.write_bytes(data)
    key.write_bytes(bytes(32))
    _one_line_each(["pay", "verify-slip", "--db", ledger, "--key-file", str(key), str(pdf)],
                   f"{pdf}: {pt_said}", f"{pdf}: {en_said}")



@pytest.mark.parametrize("lang", ["pt", "en"])
def test_the_demo_s_last_line_names_the_rules_it_checked_and_no_file_outside_the_clone(lang):
    """The demo's closing line said the pay matched ``RULES.md``, a file the clone does not hold: it
    names the rule ids checked and the scenario file holding the expected amounts."""
    from portgate.i18n import gettext

    said = gettext(lang, "cli.demo.balanced").format(scenario="config/demo/scenario.toml")
    assert "P1-P7" in said and "(P8)" in said and said.endswith("config/demo/scenario.toml.")
    assert "RULES.md" not in said and "RULES.md" not in gettext(lang, "demo.pay")


def test_the_readme_names_no_path_outside_the_clone_and_every_doc_it_names_exists():
    """README cited ``../shared/RULES.md`` and ``../shared/DESIGN.md``, not in a clone: it names no
    ``../`` path, says the specification is kept outside the repository, and every ``docs/`` file
    it names (the rules' table among them) is in the clone."""
    import re

    root = Path(__file__).resolve().parent.parent
    text = (root / "README.md").read_text(encoding="utf-8")
    assert "../" not in text
    assert "is not part of this repository" in " ".join(text.split())
    named = set(re.findall(r"`(docs/[\w./-]+\.md)`", text))
    assert {"docs/rules.md", "docs/pay.md", "docs/office.md", "docs/production.md", "docs/inspection.md"} <= named
    assert [p for p in sorted(named) if not (root / p).is_file()] == []
