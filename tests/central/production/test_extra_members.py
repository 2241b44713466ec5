"""C9 (DL 3.844 art. 3 sole paragraph; issue 31 item 7): members added to a dock-work gang for
special conditions (gang.csv ``extra`` = yes) are not a composition departure; each is paid the
share a normal member of his role gets computed without the extras; the normal members' shares are
unchanged; the extras' pay is the port administration's cost, shown apart. Through ``portgate
production pay|import``.

Hand figures (dl-3844-1941, SD = R$ 180.00, half day 90.00): a crane gang (composition table:
6 workers, 1 foreman, 1 quay-crane driver, 1 tally clerk) plus one extra worker X1.
- E1: general 210 t × 4.50 = 945.00 (whole tonnes: C7 changes nothing).
- C1: normal quotas 6 × 1 + 3 × 1.5 = 10.5; quota value 945.00 ÷ 10.5 = 90.00; worker 90.00,
  foreman, driver and clerk 135.00 each. The extra X1 (a worker, 1 quota) gets 945.00 × 1 ÷ 10.5
  = 90.00, computed without him (with him, 11.5 quotas: a worker would get 82.17).
- C2: 200 min each, not more than 240: half day 90.00, not above any share: no top-up.
- Shares total 6 × 90.00 + 3 × 135.00 = 945.00 (the extra apart), rounding difference 0.00;
  the port administration's cost: 90.00.
"""

from __future__ import annotations

import re

from sqlalchemy import select

from app.cli import main
from central.db import make_engine
from central.production.schema import production_inputs
from tests.central.production.cli_files import lines, member, pay, refused, write

CREW = ([f"T1,W{i},worker,200," for i in range(1, 7)]
        + ["T1,F1,foreman,200,", "T1,D1,quay_crane_driver,200,", "T1,C1,tally_clerk,200,"])
GANG = "gang_id,registration,role,minutes_worked,extra\n" + "\n".join(CREW) + "\nT1,X1,worker,200,yes\n"
TALLY = "gang_id,ship,date,period,cargo_class,quantity,unit,units\nT1,9123456,2026-03-10,07-13,general,210,crane,1\n"


def test_an_extra_member_is_paid_a_normal_share_without_him_apart_as_the_administrations_cost(tmp_path, capsys):
    argv = write(tmp_path, gang=GANG, tally=TALLY, rulebook="dl-3844-1941")
    doc = pay(capsys, argv, "--lang", "pt-BR")
    summary = doc["gangs"][0]["summary"]
    assert (summary["total_quotas"], summary["quota_value"]) == ("10.5", "90.0")
    assert (summary["shares_total"], summary["rounding_difference"]) == ("945.00", "0.00")
    assert summary["flags"] == []  # not a GANG_COMPOSITION departure
    assert (summary["extra_members"], summary["administration_total"]) == (["X1"], "90.00")
    assert lines(member(doc, "W1")) == [("C1", "90.00")] and member(doc, "W1")["extra"] is False
    assert lines(member(doc, "F1")) == [("C1", "135.00")]
    x1 = member(doc, "X1")
    assert x1["extra"] is True and lines(x1) == [("C9", "90.00")] and x1["total"] == "90.00"
    assert x1["lines"][0]["article"] == "DL 3.844 art. 3 § único"
    assert x1["lines"][0]["description"] == (
        "Cota de produção: 1 cota(s) × R$ 90 — membro extra (condições especiais): cota calculada sem "
        "os extras, custo da administração do porto")
    assert main(["production", "pay", *argv, "--format", "csv"]) == 0
    assert "T1,administration,,,,membros extras (C9) X1: custo da administração do porto,90.00" in \
        capsys.readouterr().out.splitlines()


def test_the_extra_is_stored_apart_with_the_import(tmp_path, capsys, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "ledger.db")
    assert main(["production", "import", *write(tmp_path, gang=GANG, tally=TALLY, rulebook="dl-3844-1941"),
                 "--db", url]) == 0
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(production_inputs.c.registration, production_inputs.c.what,
                                       production_inputs.c.value).where(production_inputs.c.kind == "extra")).all()
    finally:
        engine.dispose()
    assert [tuple(r) for r in rows] == [("X1", "C9", "90.00")]


def test_without_the_mark_the_same_member_departs_from_the_composition_and_dilutes_the_shares(tmp_path, capsys):
    # The same 10 members, none marked: 11.5 quotas; 945.00 ÷ 11.5 → a worker 82.17 (+ half-day
    # top-up 7.83), GANG_COMPOSITION flagged (7 workers on one crane).
    doc = pay(capsys, write(tmp_path, gang=GANG.replace(",yes", ","), tally=TALLY, rulebook="dl-3844-1941"))
    summary = doc["gangs"][0]["summary"]
    assert summary["total_quotas"] == "11.5" and summary["flags"][0].startswith("GANG_COMPOSITION")
    assert lines(member(doc, "X1")) == [("C1", "82.17"), ("C2", "7.83")]


def test_extra_members_are_refused_where_the_rulebook_has_none_or_the_gang_is_only_extras(tmp_path, capsys):
    gang = "gang_id,registration,role,minutes_worked,extra\nT1,E1,stevedore,200,\nT1,E2,stevedore,200,yes\n"
    tally = "gang_id,ship,date,period,cargo_class,quantity\nT1,9123456,2026-03-10,07-13,general,10\n"
    err = refused(capsys, write(tmp_path, gang=gang, tally=tally))
    assert "gang.csv:3: extra yes: members added for special conditions (C9" in err
    gang = "gang_id,registration,role,minutes_worked,extra\nT1,W1,worker,200,yes\n"
    err = refused(capsys, write(tmp_path, gang=gang, tally=tally, rulebook="dl-3844-1941"))
    assert "gang.csv:2: every member of gang T1 who boarded is marked extra (C9)" in err
    gang = "gang_id,registration,role,minutes_worked,extra\nT1,W1,worker,200,maybe\n"
    err = refused(capsys, write(tmp_path, gang=gang, tally=tally, rulebook="dl-3844-1941"))
    assert re.search(r"gang\.csv:2: extra 'maybe' is not yes\|no", err)
